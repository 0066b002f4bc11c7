// The route-auth feature: the admin endpoints (/routes/:id/auth..., /routes/:id/branding/...:
// route-auth/endpoints.ts), and as early middleware the verify endpoint and the
// login pages (ahead of the admin session and body parsing); the same verify on node's http as a
// fast path (route-auth/verify.ts). The service is ctx.routeAuth (app-context.ts).
import type { Feature } from '../feature.js';
import { defineRouteAuthModels } from './models.js';
import { routeAuthEndpoints } from './endpoints.js';
import { routeAuthMiddleware } from './http.js';
import { Verifier, verifyHandler } from './verify.js';
import { oidcService } from '../oidc/flow.js';

export const routeAuthFeature: Feature = {
  name: 'route-auth',
  models: defineRouteAuthModels,
  endpoints: (ctx) => routeAuthEndpoints(ctx),
  early: (ctx) => [routeAuthMiddleware(ctx, ctx.routeAuth, ctx.metrics.routeAuth, () => oidcService(ctx))],
  fastPaths: (ctx) => [
    verifyHandler(
      new Verifier(ctx.routeAuth.view, ctx.clock),
      ctx.config.trustProxy,
      (err) => ctx.log.error('route auth verify failed', { err: String((err as Error)?.stack ?? err) }),
      ctx.metrics.routeAuth,
    ),
  ],
  async start(ctx) {
    const svc = ctx.routeAuth;
    await svc.prune().catch(() => undefined);
    await svc.cleanupBranding().catch(() => undefined);
    ctx.scheduler.every('route auth prune', 3_600_000, () => svc.prune(), { scope: 'singleton' });
  },
  stop(ctx) {
    ctx.scheduler.job('route auth prune')?.stop();
  },
};
