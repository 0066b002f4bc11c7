// /api/v1/system/resources (scope system; read-only tokens read it too).
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { SystemResources } from './resources.js';
import { resourcesResponse } from './schema.js';

export function systemResourceEndpoints(deps: AppContext): Endpoint[] {
  const resources = new SystemResources({ clock: deps.clock, dataDir: deps.config.dataDir });
  return [
    defineEndpoint({
      method: 'GET',
      path: '/system/resources',
      tags: ['system'],
      response: resourcesResponse,
      summary:
        'CPU {cores, percent, model}, memory {total, used, percent} (bytes), uptime {seconds, days, hours, minutes, formatted, bootTime} of the host, gatehouse_uptime {seconds, days, hours, minutes, formatted, startTime} of the Gatehouse process, disk {total, free, used, available, reserved} (bytes; used + available + reserved = total) of the data directory',
      handler: async (_i, ctx) => {
        ctx.set('Cache-Control', 'no-store');
        return { ...(await resources.read()) };
      },
    }),
  ];
}
