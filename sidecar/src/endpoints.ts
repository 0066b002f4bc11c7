// Every endpoint of the sidecar, in one list: the features' (features.ts, in their order) and the
// OpenAPI document of them all; mounted by http/app.ts, documented by http/openapi.ts, walked by the
// authorization matrix test.
import type { AppContext } from './app-context.js';
import { z } from 'zod';
import { defineEndpoint, type Endpoint } from './http/registry.js';
import { openApiDocument } from './http/openapi.js';
import { featureEndpoints } from './features.js';

/** GET /openapi.json answers the document itself. */
const openApiDocumentSchema = z.object({
  openapi: z.literal('3.1.0'),
  info: z.object({ title: z.string(), version: z.string(), description: z.string() }),
  servers: z.array(z.object({ url: z.string() })),
  paths: z.record(z.string(), z.record(z.string(), z.looseObject({ responses: z.record(z.string(), z.unknown()) }))),
  components: z.looseObject({ securitySchemes: z.record(z.string(), z.unknown()), schemas: z.record(z.string(), z.unknown()) }),
});

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
  const list: Endpoint[] = featureEndpoints(deps);
  list.push(
    defineEndpoint({
      method: 'GET',
      path: '/openapi.json',
      scope: 'any',
      summary: 'This API as an OpenAPI 3.1 document (the document itself, not wrapped in {ok})',
      tags: ['system'],
      response: openApiDocumentSchema,
      handler: async (_i, ctx) => {
        ctx.body = doc;
      },
    }),
  );
  const doc = openApiDocument(list);
  return list.sort(specificity);
}
