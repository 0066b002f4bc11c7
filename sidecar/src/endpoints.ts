// Every endpoint of the sidecar, in one list: mounted by http/app.ts, documented by http/openapi.ts,
// walked by the authorization matrix test.
import type { AppContext } from './app-context.js';
import { defineEndpoint, type Endpoint } from './http/registry.js';
import { openApiDocument } from './http/openapi.js';
import { authEndpoints } from './auth/endpoints.js';
import { userEndpoints } from './users/endpoints.js';
import { tokenEndpoints } from './tokens/endpoints.js';
import { settingsEndpoints } from './settings/endpoints.js';
import { logEndpoints } from './logs/endpoints.js';
import { healthEndpoints } from './system/health.js';
import { featureEndpoints } from './features.js';
import { eventStreamEndpoints } from './events-stream/endpoints.js';

/** Literal path segments sort before parameters, so /users/locked wins over /users/:id. */
function specificity(a: Endpoint, b: Endpoint): number {
  const as = a.path.split('/');
  const bs = b.path.split('/');
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const ap = as[i].startsWith(':');
    const bp = bs[i].startsWith(':');
    if (ap !== bp) return ap ? 1 : -1;
  }
  return 0;
}

export function allEndpoints(deps: AppContext): Endpoint[] {
  const list: Endpoint[] = [
    ...healthEndpoints(deps),
    ...authEndpoints(deps),
    ...userEndpoints(deps),
    ...tokenEndpoints(deps),
    ...settingsEndpoints(deps),
    ...logEndpoints(deps),
    ...eventStreamEndpoints(deps),
    ...featureEndpoints(deps),
  ];
  list.push(
    defineEndpoint({
      method: 'GET', path: '/openapi.json', scope: 'any', summary: 'This API as an OpenAPI 3.1 document', tags: ['system'],
      handler: async (_i, ctx) => {
        ctx.body = doc;
      },
    }),
  );
  const doc = openApiDocument(list);
  return list.sort(specificity);
}
