// /api/v1/peer-groups
import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import { description, peerName } from '../peers/schema.js';

/** #rgb, #rrggbb or #rrggbbaa */
export const hexColor = z.string().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/, 'must be a hex colour such as #3b82f6');

/** groups/service.ts GroupView, as the OpenAPI document declares it. */
const groupView = z.object({ id: z.number().int(), name: z.string(), color: z.string().nullable(), description: z.string().nullable(), peer_count: z.number().int(), created_at: z.string().meta({ format: 'date-time' }), updated_at: z.string().meta({ format: 'date-time' }) });
const groupResponse = z.object({ ok: z.literal(true), group: groupView });

const createBody = z.object({ name: peerName, color: hexColor.nullable().optional(), description: description.nullable().optional() });
const updateBody = z.object({ name: peerName.optional(), color: hexColor.nullable().optional(), description: description.nullable().optional() });

export function groupEndpoints(deps: AppContext): Endpoint[] {
  const groups = () => deps.groups;
  const tags = ['peers'];
  return [
    defineEndpoint({ method: 'GET', path: '/peer-groups', tags, summary: 'Peer groups with their peer_count', response: z.object({ ok: z.literal(true), groups: z.array(groupView) }), handler: async () => ({ groups: await groups().list() }) }),
    defineEndpoint({
      method: 'POST', path: '/peer-groups', status: 201, tags, body: createBody, response: groupResponse, summary: 'Create a peer group; 409 when the name exists',
      handler: async ({ body }, ctx) => ({ group: await groups().create(body, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({ method: 'GET', path: '/peer-groups/:id', tags, summary: 'One peer group', response: groupResponse, handler: async ({ params }) => ({ group: await groups().get(params.id as number) }) }),
    defineEndpoint({
      method: 'PUT', path: '/peer-groups/:id', tags, body: updateBody, response: groupResponse, summary: 'Update a peer group (partial)',
      handler: async ({ params, body }, ctx) => ({ group: await groups().update(params.id as number, body, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'DELETE', path: '/peer-groups/:id', tags, summary: 'Delete a peer group; its members get group_id null',
      handler: async ({ params }, ctx) => ({ deleted: await groups().remove(params.id as number, actingUserId(ctx.state.principal)) }),
    }),
  ];
}
