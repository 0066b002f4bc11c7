// Every endpoint of the sidecar, in one list: the features' (features.ts, in their order) and the
// OpenAPI document of them all; mounted by http/app.ts, documented by http/openapi.ts, walked by the
// authorization matrix test.
import type { AppContext } from './app-context.js';
import { defineEndpoint, fullPath, type Endpoint } from './http/registry.js';
import { openApiDocument } from './http/openapi.js';
import { featureEndpoints } from './features.js';
import { openApiDocumentResponse } from './system/schema.js';

/**
 * The order Koa's router tries the endpoints in, a total order: by full path segment by segment (a
 * literal segment before a parameter, so /users/locked wins over /users/:id; literals by their
 * text; a path before its longer continuations), then by method, then by the full path's text
 * (parameter names). Method and full path are unique (http/app.ts refuses an endpoint declared
 * twice), so no two endpoints compare equal and the order does not depend on the order the features
 * list them in: a new endpoint takes its place without moving any other
 * (sidecar/test/registry-routes.test.ts).
 */
export function endpointOrder(a: Endpoint, b: Endpoint): number {
  const ap = fullPath(a);
  const bp = fullPath(b);
  const as = ap.split('/');
  const bs = bp.split('/');
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const aParam = as[i].startsWith(':');
    const bParam = bs[i].startsWith(':');
    if (aParam !== bParam) return aParam ? 1 : -1;
    if (!aParam && as[i] !== bs[i]) return as[i] < bs[i] ? -1 : 1;
  }
  if (as.length !== bs.length) return as.length - bs.length;
  if (a.method !== b.method) return a.method < b.method ? -1 : 1;
  return ap === bp ? 0 : ap < bp ? -1 : 1;
}

export function allEndpoints(deps: AppContext): Endpoint[] {
  const list: Endpoint[] = featureEndpoints(deps);
  list.push(
    defineEndpoint({
      method: 'GET',
      path: '/openapi.json',
      scope: 'any',
      summary: 'This API as an OpenAPI 3.1 document (the document itself, not wrapped in {ok})',
      tags: ['system'],
      response: openApiDocumentResponse,
      handler: async (_i, ctx) => {
        ctx.body = doc;
      },
    }),
  );
  const doc = openApiDocument(list);
  return list.sort(endpointOrder);
}
