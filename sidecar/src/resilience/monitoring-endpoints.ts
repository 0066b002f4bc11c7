// GET/PUT /settings/monitoring: the uptime monitoring interval (a change applies at once).
import type { AppContext } from '../app-context.js';
import { actingUserId } from '../http/auth.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { MAX_MONITOR_INTERVAL_S, MIN_MONITOR_INTERVAL_S, monitoringBody, monitoringResponse } from './schema.js';
import { MONITOR_INTERVAL_KEY, monitorInterval } from './monitor-settings.js';

export function monitoringSettingsEndpoints(deps: AppContext): Endpoint[] {
  return [
    defineEndpoint({
      method: 'GET',
      path: '/settings/monitoring',
      response: monitoringResponse,
      summary: 'Uptime monitoring settings: interval_seconds (how often every monitored route is checked)',
      tags: ['settings'],
      handler: async () => ({ monitoring: { interval_seconds: await monitorInterval(deps) } }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/settings/monitoring',
      response: monitoringResponse,
      summary: `Change the uptime monitoring interval ({interval_seconds}, ${MIN_MONITOR_INTERVAL_S}–${MAX_MONITOR_INTERVAL_S}); applies at once`,
      tags: ['settings'],
      body: monitoringBody,
      handler: async ({ body }, ctx) => {
        const before = await monitorInterval(deps);
        await deps.settings.set(MONITOR_INTERVAL_KEY, body.interval_seconds);
        deps.monitor.reschedule(body.interval_seconds);
        if (before !== body.interval_seconds) {
          await deps.events.emit({
            type: 'settings_changed',
            section: 'monitoring',
            interval_seconds: body.interval_seconds,
            previous: before,
            actor: actingUserId(ctx.state.principal) ?? null,
          });
        }
        return { monitoring: { interval_seconds: body.interval_seconds } };
      },
    }),
  ];
}
