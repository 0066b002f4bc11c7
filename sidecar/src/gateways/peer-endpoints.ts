// A gateway peer's admin endpoints (ctx.gateways): GET /peers/:id/gateway-info and
// POST /peers/:id/gateway-env/rotate, mounted by gateways/endpoints.ts.
import type { AppContext } from '../app-context.js';
import { actingUserId } from '../http/auth.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { gatewayInfoResponse, gatewayRotateResponse } from './schema.js';

export function peerGatewayEndpoints(deps: AppContext): Endpoint[] {
  const gw = () => deps.gateways;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/peers/:id/gateway-info',
      response: gatewayInfoResponse,
      tags: ['peers', 'gateways'],
      summary: 'Status and last health of one gateway peer (400 for a regular peer)',
      handler: async ({ params }) => ({ gateway: await gw().info(params.id) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/peers/:id/gateway-env/rotate',
      secrets: "the gateway's new gateway.env: its tunnel private key and preshared key, and both new gateway tokens",
      response: gatewayRotateResponse,
      tags: ['peers', 'gateways'],
      summary: 'New API and push tokens and a new gateway.env; the old tokens stop working at once (400 for a regular peer)',
      handler: async ({ params }, ctx) => {
        ctx.set('Cache-Control', 'no-store');
        const r = await gw().rotate(params.id, actingUserId(ctx.state.principal));
        return { peer_id: r.peer_id, gateway: { apiToken: r.apiToken, pushToken: r.pushToken, envContent: r.envContent } };
      },
    }),
  ];
}
