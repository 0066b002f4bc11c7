// Per-peer speed caps (shaping/service.ts): the service is ctx.shaping; it follows peer and group
// changes and the interface's full syncs by itself, and removes its traffic control at shutdown.
import type { Feature } from '../feature.js';

export const shapingFeature: Feature = {
  name: 'shaping',
  async stop(ctx) {
    await ctx.shaping.clear();
  },
};
