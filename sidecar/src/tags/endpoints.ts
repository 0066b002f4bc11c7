// /api/v1/tags
import { msg } from '@gatehouse/common/messages/index.js';
import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import { validation } from '../util/errors.js';
import { tagName, tagNameProblem } from './names.js';
import { createBody, renameBody, tagCreatedResponse, tagDeletedResponse, tagRenamedResponse, tagsResponse } from './schema.js';

export function tagEndpoints(deps: AppContext): Endpoint[] {
  const tags = () => deps.tags;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/tags',
      tags: ['peers'],
      summary: 'Registered tags merged with the names found on peers (id null, registered false for names only on peers)',
      response: tagsResponse,
      handler: async () => ({ tags: await tags().list() }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/tags',
      tags: ['peers'],
      body: createBody,
      response: tagCreatedResponse,
      status: 201,
      alsoStatus: [200],
      summary: 'Register a tag name (idempotent: an existing name, in any case, is left as it is; 201 when created, 200 when it existed)',
      handler: async ({ body }, ctx) => {
        const r = await tags().create(body.name, actingUserId(ctx.state.principal));
        ctx.status = r.created ? 201 : 200;
        ctx.body = { ok: true, ...r };
      },
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/tags/:name',
      tags: ['peers'],
      params: z.object({ name: tagName }),
      body: renameBody,
      response: tagRenamedResponse,
      summary:
        'Rename a tag ({name}: the new name) in the registry and on every peer that carries it (case-insensitive, whole names; a change of case is allowed; 409 with fields.name when another tag has the new name; 404 when the tag is nowhere)',
      handler: async ({ params, body }, ctx) => {
        const from = params.name;
        const p = tagNameProblem(from);
        if (p) throw validation(msg('request.validation_failed'), { tag: p });
        return { renamed: await tags().rename(from, body.name, actingUserId(ctx.state.principal)) };
      },
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/tags/:name',
      params: z.object({ name: tagName }),
      response: tagDeletedResponse,
      tags: ['peers'],
      summary: 'Delete a tag: removes the registry entry and strips the name from every peer (case-insensitive, whole names only)',
      handler: async ({ params }, ctx) => {
        const name = params.name;
        const p = tagNameProblem(name);
        if (p) throw validation(msg('request.validation_failed'), { name: p });
        return { deleted: await tags().remove(name, actingUserId(ctx.state.principal)) };
      },
    }),
  ];
}
