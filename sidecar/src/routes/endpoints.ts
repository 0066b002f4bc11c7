// The routes API. Thin: validation by the schemas, logic in RoutesService.
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId, type Principal } from '../http/auth.js';
import {
  batchBody,
  checkDnsBody,
  checkDnsResponse,
  createRouteBody,
  listRoutesQuery,
  routePeersQuery,
  routePeersResponse,
  routeResponse,
  routesBatchResponse,
  routesResponse,
  routeToggleResponse,
  updateRouteBody,
} from './schema.js';
import { okOnly } from '../http/responses.js';

export function routeEndpoints(deps: AppContext): Endpoint[] {
  const svc = () => deps.routes;
  const actor = (ctx: { state: { principal?: Principal } }) => actingUserId(ctx.state.principal) ?? undefined;
  const tags = ['routes'];
  return [
    defineEndpoint({
      method: 'GET',
      path: '/routes',
      response: routesResponse,
      tags,
      query: listRoutesQuery,
      summary:
        'List routes with search (q), filters (type, peer_id, enabled), sort (default id) and paging; total counts the routes matching the filters, total_all every route',
      handler: async ({ query }) => {
        const r = await svc().list(query);
        return { routes: r.routes, total: r.total, total_all: r.totalAll, limit: query.limit, offset: query.offset };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/routes',
      response: routeResponse,
      status: 201,
      summary: 'Create a route; returns once it is live in the proxy',
      tags,
      body: createRouteBody,
      handler: async ({ body }, ctx) => ({ route: await svc().create(body, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/routes/batch',
      response: routesBatchResponse,
      summary: 'Enable, disable or delete several routes ({action, ids}); per-id results',
      tags,
      body: batchBody,
      handler: async ({ body }, ctx) => svc().batch(body.action, body.ids, actor(ctx)),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/routes/check-dns',
      response: checkDnsResponse,
      summary: "Compare a domain's A records with this server's public IP",
      tags,
      body: checkDnsBody,
      handler: async ({ body }) => svc().checkDns(body.domain),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/routes/peers',
      response: routePeersResponse,
      summary: 'Peers for the route wizard (peer_type=gateway: gateway peers only)',
      tags,
      query: routePeersQuery,
      handler: async ({ query }) => ({ peers: await svc().wizardPeers(query.peer_type) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/routes/:id',
      response: routeResponse,
      summary: 'One route',
      tags,
      handler: async ({ params }) => ({ route: await svc().get(params.id) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/routes/:id',
      response: routeResponse,
      summary: 'Partial update of a route',
      tags,
      body: updateRouteBody,
      handler: async ({ body, params }, ctx) => ({ route: await svc().update(params.id, body, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/routes/:id',
      response: okOnly,
      summary: 'Delete a route',
      tags,
      handler: async ({ params }, ctx) => {
        await svc().remove(params.id, actor(ctx));
        return {};
      },
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/routes/:id/toggle',
      response: routeToggleResponse,
      summary: 'Enable or disable a route',
      tags,
      handler: async ({ params }, ctx) => {
        const route = await svc().toggle(params.id, actor(ctx));
        return { route, enabled: route.enabled };
      },
    }),
  ];
}
