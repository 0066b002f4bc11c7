// /api/v1/webhooks (token scope `webhooks`): CRUD, toggle, test, the event kinds and the delivery log.
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId, type Principal } from '../http/auth.js';
import { WEBHOOK_EVENT_LIST } from './events.js';
import {
  createWebhookBody,
  deletedResponse,
  deliveriesQuery,
  deliveriesResponse,
  eventKindsResponse,
  testResponse,
  updateWebhookBody,
  webhookResponse,
  webhooksResponse,
} from './schema.js';

/**
 * Who may let a webhook reach loopback, private ranges and this server (allow_private): a full-access
 * token, or an admin session (every session that reaches a webhook write has the admin role).
 */
function mayAllowPrivate(p: Principal | undefined): boolean {
  return p?.kind === 'session' ? p.role === 'admin' : p?.kind === 'token' && p.scopes.includes('full-access');
}

export function webhookEndpoints(ctx: AppContext): Endpoint[] {
  const svc = () => ctx.webhooks;
  const tags = ['webhooks'];
  return [
    defineEndpoint({
      method: 'GET',
      path: '/webhooks',
      tags,
      summary: 'Webhooks (never their secrets) with delivery counts',
      response: webhooksResponse,
      handler: async () => ({ webhooks: await svc().list() }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/webhooks',
      status: 201,
      tags,
      body: createWebhookBody,
      response: webhookResponse,
      summary:
        'Create a webhook; the URL may not resolve to loopback, a private range or this server (422 fields.url) unless the webhook has allow_private (full-access token or admin session only) or the operator allowed it for every webhook (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE=webhooks)',
      handler: async ({ body }, c) => ({ webhook: await svc().create(body, actingUserId(c.state.principal), mayAllowPrivate(c.state.principal)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/webhooks/events',
      tags,
      summary: 'The event kinds a webhook can subscribe to',
      response: eventKindsResponse,
      handler: () => ({ events: WEBHOOK_EVENT_LIST }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/webhooks/:id',
      tags,
      summary: 'One webhook',
      response: webhookResponse,
      handler: async ({ params }) => ({ webhook: await svc().get(params.id) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/webhooks/:id',
      tags,
      body: updateWebhookBody,
      response: webhookResponse,
      summary: 'Update a webhook (partial; an omitted or empty secret is kept; allow_private changes only with a full-access token or an admin session)',
      handler: async ({ params, body }, c) => ({
        webhook: await svc().update(params.id, body, actingUserId(c.state.principal), mayAllowPrivate(c.state.principal)),
      }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/webhooks/:id',
      tags,
      response: deletedResponse,
      summary: 'Delete a webhook with its delivery log (queued deliveries are dropped)',
      handler: async ({ params }, c) => {
        await svc().remove(params.id, actingUserId(c.state.principal));
        return { deleted: true as const };
      },
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/webhooks/:id/toggle',
      tags,
      response: webhookResponse,
      summary: 'Enable or disable a webhook (a disabled one gets no new deliveries)',
      handler: async ({ params }, c) => ({ webhook: await svc().toggle(params.id, actingUserId(c.state.principal)) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/webhooks/:id/test',
      tags,
      response: testResponse,
      summary: 'Send a signed test POST (event webhook_test) now and answer with its outcome (recorded in the delivery log, not retried)',
      handler: async ({ params }, c) => ({ delivery: await svc().test(params.id, actingUserId(c.state.principal)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/webhooks/:id/deliveries',
      tags,
      query: deliveriesQuery,
      response: deliveriesResponse,
      summary: 'The delivery log of a webhook, newest first (status, attempts, last error, response code, body)',
      handler: async ({ params, query }) => svc().deliveries(params.id, query),
    }),
  ];
}
