// /api/v1/peer-groups
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import { createBody, groupDeletedResponse, groupResponse, groupsResponse, updateBody } from './schema.js';

export function groupEndpoints(deps: AppContext): Endpoint[] {
  const groups = () => deps.groups;
  const tags = ['peers'];
  return [
    defineEndpoint({
      method: 'GET',
      path: '/peer-groups',
      tags,
      summary: 'Peer groups with their peer_count',
      response: groupsResponse,
      handler: async () => ({ groups: await groups().list() }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/peer-groups',
      status: 201,
      tags,
      body: createBody,
      storedChecks: (raw) => groups().storedProblems(raw),
      response: groupResponse,
      summary: 'Create a peer group; 409 when the name exists',
      handler: async ({ body }, ctx) => ({ group: await groups().create(body, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/peer-groups/:id',
      tags,
      summary: 'One peer group',
      response: groupResponse,
      handler: async ({ params }) => ({ group: await groups().get(params.id) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/peer-groups/:id',
      tags,
      body: updateBody,
      storedChecks: (raw, ctx) => groups().storedProblems(raw, ctx.state.params.id),
      response: groupResponse,
      summary: 'Update a peer group (partial)',
      handler: async ({ params, body }, ctx) => ({ group: await groups().update(params.id, body, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/peer-groups/:id',
      response: groupDeletedResponse,
      tags,
      summary: 'Delete a peer group; its members get group_id null',
      handler: async ({ params }, ctx) => ({ deleted: await groups().remove(params.id, actingUserId(ctx.state.principal)) }),
    }),
  ];
}
