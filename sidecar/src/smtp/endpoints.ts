// GET/PUT /api/v1/smtp and POST /api/v1/smtp/test (scope `settings`).
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId, type Principal } from '../http/auth.js';
import { smtpBody, smtpResponse, smtpTestBody, smtpTestResponse } from './schema.js';

export function smtpEndpoints(deps: AppContext): Endpoint[] {
  const svc = () => deps.smtp;
  const actor = (ctx: { state: { principal?: Principal } }) => actingUserId(ctx.state.principal) ?? undefined;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/smtp',
      response: smtpResponse,
      summary: 'SMTP settings (the password is never returned: password_set)',
      tags: ['settings'],
      handler: async () => ({ smtp: await svc().get() }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/smtp',
      secrets: 'sends the stored SMTP password to the mail server it names (a new host keeps the stored password)',
      response: smtpResponse,
      summary: 'Save SMTP settings {host, port, secure, user, password, from}; without password the stored one is kept, null removes it',
      tags: ['settings'],
      body: smtpBody,
      handler: async ({ body }, ctx) => ({ smtp: await svc().put({ ...body, user: body.user === '' ? null : body.user }, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/smtp/test',
      response: smtpTestResponse,
      summary: "Send a test mail {to} with the saved settings (502 with the server's message when sending fails)",
      tags: ['settings'],
      body: smtpTestBody,
      handler: async ({ body }, ctx) => {
        const r = await svc().sendTest(body.to, actor(ctx));
        return { sent: true as const, message_id: r.messageId, accepted: r.accepted };
      },
    }),
  ];
}
