// The routes feature: deps.routes and the /routes endpoints. Needs deps.proxy (proxy feature).
import type { Deps } from '../deps.js';
import type { Feature } from '../features.js';
import type { ProxyService } from '../proxy/service.js';
import type { RouteAuthService } from '../route-auth/service.js';
import { routeEndpoints } from './endpoints.js';
import { RoutesService } from './service.js';

export const routesFeature: Feature = {
  name: 'routes',
  setup(deps: Deps) {
    deps.routes = new RoutesService({ db: deps.db, config: deps.config, clock: deps.clock, events: deps.events, proxy: deps.proxy as ProxyService,
      // deps.routeAuth is set up after this feature: looked up per call.
      hasRouteAuth: async (id, t) => (await (deps.routeAuth as RouteAuthService | undefined)?.hasRouteAuth(id, t)) ?? false,
    });
  },
  endpoints: (deps) => routeEndpoints(deps),
};
