// The one-time config links feature: its table, the admin API under /peers/:id/config-links and the
// public /c/:token (config-links/endpoints.ts). Its service serves only its endpoints.
import type { Feature } from '../feature.js';
import { defineConfigLinkModels } from './model.js';
import { configLinkEndpoints } from './endpoints.js';
import { ConfigLinksService } from './service.js';

export const configLinksFeature: Feature = {
  name: 'config-links',
  models: defineConfigLinkModels,
  endpoints: (ctx) => {
    const service = new ConfigLinksService(ctx, ctx.peers);
    return configLinkEndpoints(ctx, () => service);
  },
};
