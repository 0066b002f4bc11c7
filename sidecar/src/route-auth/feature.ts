// The route-auth feature: deps.routeAuth, the admin endpoints, and the verify endpoint + login
// pages mounted through deps.earlyMiddleware (ahead of the admin session and body parsing).
import type Koa from 'koa';
import type { Feature } from '../features.js';
import { routeAuthEndpoints } from './endpoints.js';
import { routeAuthMiddleware } from './http.js';
import { RouteAuthService } from './service.js';
import { Verifier, verifyHandler } from './verify.js';

export const routeAuthFeature: Feature = {
  name: 'route-auth',
  setup(deps) {
    const svc = new RouteAuthService(deps);
    deps.routeAuth = svc;
    svc.watchRoutes();
    svc.watchUsers();
    const early = (deps.earlyMiddleware ??= []) as Koa.Middleware[];
    early.push(routeAuthMiddleware(deps, svc));
    // The same verify on node's (req, res), for server.ts to answer before Koa if it wants:
    //   const fast = deps.routeAuthFastPath; http.createServer((req, res) => fast?.(req, res) || app(req, res))
    deps.routeAuthFastPath = verifyHandler(new Verifier(svc.view, deps.clock), deps.config.trustProxy, (err) =>
      deps.log.error('route auth verify failed', { err: String((err as Error)?.stack ?? err) }),
    );
  },
  endpoints: (deps) => routeAuthEndpoints(deps),
  async start(deps) {
    const svc = deps.routeAuth as RouteAuthService;
    await svc.prune().catch(() => undefined);
    await svc.cleanupBranding().catch(() => undefined);
    deps.scheduler.every('route auth prune', 3_600_000, () => svc.prune());
  },
  stop(deps) {
    deps.scheduler.job('route auth prune')?.stop();
  },
};

