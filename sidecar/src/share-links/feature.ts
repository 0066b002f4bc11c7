// The share-links feature: its table, the admin API (/routes/:id/share-links, /settings/share-links)
// and, as early middleware ahead of the route-auth pages, GET /route-auth/share (share-links/http.ts).
import type { Feature } from '../feature.js';
import { defineShareLinkModels } from './model.js';
import { shareLinkEndpoints } from './endpoints.js';
import { shareLinkMiddleware } from './http.js';
import { ShareLinksService } from './service.js';

const services = new WeakMap<object, ShareLinksService>();

export const shareLinksFeature: Feature = {
  name: 'share-links',
  models: defineShareLinkModels,
  endpoints: (ctx) => shareLinkEndpoints(ctx, () => serviceOf(ctx)),
  early: (ctx) => [shareLinkMiddleware(ctx.routeAuth, () => serviceOf(ctx))],
};

function serviceOf(ctx: Parameters<NonNullable<Feature['endpoints']>>[0]): ShareLinksService {
  let s = services.get(ctx);
  if (!s) {
    s = new ShareLinksService(ctx, ctx.routeAuth);
    services.set(ctx, s);
  }
  return s;
}
