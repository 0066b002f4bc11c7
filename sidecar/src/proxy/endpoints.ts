// GET /caddy/status and POST /caddy/reload.
import { msg } from '@gatehouse/common/messages/index.js';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import { caddyReloadResponse, caddyStatusResponse } from './schema.js';

export function proxyEndpoints(deps: AppContext): Endpoint[] {
  const proxy = () => deps.proxy;
  const supervisor = () => deps.caddySupervisor;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/caddy/status',
      response: caddyStatusResponse,
      summary: 'Caddy process and configuration status: running, pid, uptime_s, admin_api',
      tags: ['system'],
      handler: async () => {
        const sup = supervisor();
        const proc = sup ? sup.status() : { running: false, pid: null, uptime_s: null, admin_api: deps.config.caddyAdmin, restarts: 0 };
        return { ...proc, managed: !!sup, ...proxy().status() };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/caddy/reload',
      response: caddyReloadResponse,
      summary: 'Re-render the proxy configuration from the database and load it through the admin API',
      tags: ['system'],
      handler: async (_i, ctx) => {
        const r = await proxy().apply({ force: true, reason: 'reload requested' });
        const config_hash = proxy().configHash();
        await deps.activity.record({
          source: 'system',
          event_type: 'proxy_reloaded',
          msg: msg('proxy.reloaded'),
          details: { config_hash, loaded: r.loaded },
          user_id: actingUserId(ctx.state.principal),
        });
        return { loaded: r.loaded, config_hash, mode: proxy().mode };
      },
    }),
  ];
}
