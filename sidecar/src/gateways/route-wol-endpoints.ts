// POST /routes/:id/wol: Wake-on-LAN of a gateway route's host now (ctx.gatewayWol), mounted by
// gateways/endpoints.ts.
import type { AppContext } from '../app-context.js';
import { actingUserId } from '../http/auth.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { wolResponse } from '../routes/schema.js';

export function routeWolEndpoints(deps: AppContext): Endpoint[] {
  const wol = () => deps.gatewayWol;
  return [
    defineEndpoint({
      method: 'POST',
      path: '/routes/:id/wol',
      response: wolResponse,
      tags: ['routes', 'gateways'],
      summary: "Wake-on-LAN now: the route's gateway companion broadcasts the magic packet for wol_mac on its LAN",
      handler: async ({ params }, ctx) => ({ wol: await wol().wake(params.id, { actor: actingUserId(ctx.state.principal), trigger: 'admin' }) }),
    }),
  ];
}
