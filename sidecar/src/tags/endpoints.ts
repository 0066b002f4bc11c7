// /api/v1/tags
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import { validation } from '../util/errors.js';
import { tagNameProblem } from './names.js';
import { createBody, tagCreatedResponse, tagsResponse } from './schema.js';

export function tagEndpoints(deps: AppContext): Endpoint[] {
  const tags = () => deps.tags;
  return [
    defineEndpoint({ method: 'GET', path: '/tags', tags: ['peers'], summary: 'Registered tags merged with the names found on peers (id null, registered false for names only on peers)', response: tagsResponse, handler: async () => ({ tags: await tags().list() }) }),
    defineEndpoint({
      method: 'POST', path: '/tags', tags: ['peers'], body: createBody, response: tagCreatedResponse,
      summary: 'Register a tag name (idempotent: an existing name, in any case, is left as it is; 201 when created, 200 when it existed)',
      handler: async ({ body }, ctx) => {
        const r = await tags().create(body.name, actingUserId(ctx.state.principal));
        ctx.status = r.created ? 201 : 200;
        ctx.body = { ok: true, ...r };
      },
    }),
    defineEndpoint({
      method: 'DELETE', path: '/tags/:name', tags: ['peers'],
      summary: 'Delete a tag: removes the registry entry and strips the name from every peer (case-insensitive, whole names only)',
      handler: async ({ params }, ctx) => {
        const name = String(params.name);
        const p = tagNameProblem(name);
        if (p) throw validation('Validation failed', { name: p });
        return { deleted: await tags().remove(name, actingUserId(ctx.state.principal)) };
      },
    }),
  ];
}
