// GET/PUT /api/v1/smtp and POST /api/v1/smtp/test (scope `settings`).
import net from 'node:net';
import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { text } from '../http/fields.js';
import { actingUserId, type Principal } from '../http/auth.js';

const email = z.string().trim().max(254).email('must be an email address');
const hostname = z
  .string()
  .trim()
  .min(1, 'required')
  .max(253)
  .refine((v) => net.isIP(v) !== 0 || /^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(v), 'must be a host name or IP address');
/** "user@example.com" or "Display Name <user@example.com>" */
const fromAddress = z
  .string()
  .trim()
  .min(1, 'required')
  .max(320)
  .refine((v) => {
    const m = /^([^<>\r\n]*)<([^<>\s]+)>$/.exec(v);
    const addr = m ? m[2] : v;
    return email.safeParse(addr).success;
  }, 'must be an email address or "Name <address>"');

export const smtpBody = z.object({
  host: hostname,
  port: z.number().int().min(1).max(65535),
  secure: z.boolean().default(false),
  user: text({ max: 254, trim: false }).nullable().optional(),
  password: z.string().max(1024).nullable().optional(),
  from: fromAddress,
});

export function smtpEndpoints(deps: AppContext): Endpoint[] {
  const svc = () => deps.smtp;
  const actor = (ctx: { state: { principal?: Principal } }) => actingUserId(ctx.state.principal) ?? undefined;
  return [
    defineEndpoint({
      method: 'GET', path: '/smtp', summary: 'SMTP settings (the password is never returned: password_set)', tags: ['settings'],
      handler: async () => ({ smtp: await svc().get() }),
    }),
    defineEndpoint({
      method: 'PUT', path: '/smtp', summary: 'Save SMTP settings {host, port, secure, user, password, from}; without password the stored one is kept, null removes it', tags: ['settings'],
      body: smtpBody,
      handler: async ({ body }, ctx) => ({ smtp: await svc().put({ ...body, user: body.user === '' ? null : body.user }, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'POST', path: '/smtp/test', summary: 'Send a test mail {to} with the saved settings (502 with the server\'s message when sending fails)', tags: ['settings'],
      body: z.object({ to: email }),
      handler: async ({ body }, ctx) => {
        const r = await svc().sendTest(body.to, actor(ctx));
        return { sent: true, message_id: r.messageId, accepted: r.accepted };
      },
    }),
  ];
}
