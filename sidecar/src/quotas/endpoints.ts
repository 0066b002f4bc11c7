// /api/v1/peers/:id/quota/*: an admin's reset of the period's count and grant of extra bytes
// (quotas/service.ts). The quota itself is a field of the peers and peer-groups APIs.
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import { peerResponse } from '../peers/schema.js';
import { grantBody } from './schema.js';

export function quotaEndpoints(ctx: AppContext): Endpoint[] {
  const tags = ['peers'];
  return [
    defineEndpoint({
      method: 'POST',
      path: '/peers/:id/quota/reset',
      tags,
      response: peerResponse,
      summary: "Reset the data quota's count of the current period to zero (from now on); undoes its action when it applied. 409 without a quota",
      handler: async ({ params }, c) => ({ peer: await ctx.quotas.resetCount(params.id, actingUserId(c.state.principal) ?? null) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/peers/:id/quota/grant',
      tags,
      body: grantBody,
      response: peerResponse,
      summary:
        'Grant extra bytes for the current period of the data quota (added to earlier grants); undoes its action when the count is below the new limit. 409 without a quota',
      handler: async ({ params, body }, c) => ({ peer: await ctx.quotas.grant(params.id, body.bytes, actingUserId(c.state.principal) ?? null) }),
    }),
  ];
}
