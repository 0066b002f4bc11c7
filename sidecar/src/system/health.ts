import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { isLoopback } from '../http/client-ip.js';
import { APP_VERSION } from '../version.js';
import { healthResponse } from './schema.js';

/**
 * GET /health: database check plus every registered check (tunnel interface, proxy). Requests from
 * localhost get the detail; remote ones only {ok}. 503 when any check fails.
 */
export function healthEndpoints(deps: AppContext): Endpoint[] {
  const started = deps.clock();
  return [
    defineEndpoint({
      method: 'GET',
      path: '/health',
      auth: 'public',
      summary: 'Liveness: database and tunnel interface',
      tags: ['system'],
      response: healthResponse,
      handler: async (_i, ctx) => {
        const checks: Record<string, { ok: boolean; [k: string]: unknown }> = {};
        const t0 = performance.now();
        try {
          await deps.db.ping();
          checks.database = { ok: true, dialect: deps.db.dialect, latency_ms: Math.round((performance.now() - t0) * 100) / 100 };
        } catch (err) {
          checks.database = { ok: false, error: String(err) };
        }
        for (const h of deps.health) {
          try {
            const r = await h.check();
            checks[h.name] = { ok: r.ok, ...(r.detail ?? {}) };
          } catch (err) {
            checks[h.name] = { ok: false, error: String(err) };
          }
        }
        const ok = Object.values(checks).every((c) => c.ok);
        ctx.status = ok ? 200 : 503;
        ctx.set('Cache-Control', 'no-store');
        if (isLoopback(ctx.state.clientIp)) {
          ctx.body = { ok, version: APP_VERSION, uptime_s: Math.floor((deps.clock() - started) / 1000), checks };
        } else {
          ctx.body = { ok };
        }
      },
    }),
  ];
}
