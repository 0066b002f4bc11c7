// A route outside its access window (pure; src/access-windows): while closed its host entry is one
// reverse_proxy to the sidecar's closed page (access-windows/closed-page.ts), which answers 403
// with the opening time (en/de) and counts the answer. Open routes render exactly as without a
// schedule, so an access window costs nothing per request while it is open; the access-windows
// service re-applies only the route's hosts at each boundary (proxy/apply.ts).
import type { Route } from '../../routes/model.js';
import type { HostEntry } from '../caddy-json.js';
import type { ProxySettings } from '../render-context.js';
import { breakerSecretPath } from './resilience.js';
import { isOpenAt } from '../../access-windows/schedule.js';

/** The sidecar path Caddy sends a closed route's requests to (loopback + X-Gatehouse-Secret only). */
export const CLOSED_PAGE_PATH = '/internal/access-window/closed';
export const CLOSED_ROUTE_HEADER = 'X-Gatehouse-Route-Id';

/** The ids of the routes outside their access window at `now` (an L4 one is left out of the layer4 servers: proxy/render.ts). */
export function closedRouteIds(routes: readonly Route[], now: number): Set<number> {
  const ids = new Set<number>();
  for (const r of routes) if (r.access_schedule && !isOpenAt(r.access_schedule, now)) ids.add(r.id);
  return ids;
}

export function closedHostEntry(route: Route, settings: ProxySettings): HostEntry {
  return {
    routes: [
      {
        handle: [
          {
            handler: 'reverse_proxy',
            rewrite: { method: 'GET', uri: CLOSED_PAGE_PATH },
            headers: {
              request: {
                set: {
                  'X-Gatehouse-Secret': [`{file.${breakerSecretPath(settings.dataDir)}}`],
                  [CLOSED_ROUTE_HEADER]: [String(route.id)],
                },
              },
            },
            upstreams: [{ dial: settings.sidecarUpstream }],
          },
        ],
      },
    ],
  };
}
