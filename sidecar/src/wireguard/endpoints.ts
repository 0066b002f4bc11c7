// /api/v1/wg/*: tunnel status and restart.
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import { wgRestartResponse, wgStatusResponse } from './schema.js';

export function wgEndpoints(deps: AppContext): Endpoint[] {
  const wg = () => deps.wireguard;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/wg/status',
      response: wgStatusResponse,
      tags: ['system'],
      summary: 'Tunnel interface status (running, mode, port, public key, address) and every peer on it with its handshake and raw counters',
      handler: async () => ({ ...(await wg().status()) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/wg/restart',
      response: wgRestartResponse,
      tags: ['system'],
      summary: 'Restart the tunnel interface; every enabled, unexpired peer comes back. 409 when the interface is not managed here',
      handler: async (_i, ctx) => ({ restarted: await wg().restart(actingUserId(ctx.state.principal)) }),
    }),
  ];
}
