// The RDP routes API. Thin: validation
// by the schemas, logic in RdpService. Status, WoL, sessions and history are rdp/ops-endpoints.ts.
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId, type Principal } from '../http/auth.js';
import { okOnly } from '../http/responses.js';
import {
  createRdpBody,
  credentialsBody,
  credentialsResponse,
  maintenanceBody,
  maintenanceResponse,
  pubkeyResponse,
  rdpBatchBody,
  rdpBatchResponse,
  rdpRouteResponse,
  rdpRoutesResponse,
  rdpToggleResponse,
  rotationPendingResponse,
  updateRdpBody,
} from './schema.js';

export function rdpEndpoints(deps: AppContext): Endpoint[] {
  const svc = () => deps.rdp;
  const actor = (ctx: { state: { principal?: Principal } }) => actingUserId(ctx.state.principal) ?? null;
  const tags = ['rdp'];
  const feature = 'remote_desktop' as const;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/rdp',
      response: rdpRoutesResponse,
      tags,
      feature,
      summary: 'All RDP routes (credentials only as has_credentials)',
      handler: async () => {
        const routes = await svc().list();
        return { routes, total: routes.length };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/rdp',
      response: rdpRouteResponse,
      status: 201,
      tags,
      feature,
      body: createRdpBody,
      storedChecks: (raw) => svc().storedProblems(raw),
      summary: 'Create an RDP route; in gateway mode with its linked L4 TCP route, live in the proxy when it returns',
      handler: async ({ body }, ctx) => ({ route: await svc().create(body, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/rdp/batch',
      response: rdpBatchResponse,
      tags,
      feature,
      body: rdpBatchBody,
      summary: 'Enable, disable or delete several RDP routes ({action, ids}); per-id results',
      handler: async ({ body }, ctx) => svc().batch(body.action, body.ids, actor(ctx)),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/rdp/pubkey',
      response: pubkeyResponse,
      tags,
      feature,
      summary: 'The server public key the browser encrypts RDP credentials with (made on first need; scheme RSA-OAEP-256+A256GCM)',
      handler: async () => {
        const k = await svc().keys.current();
        return { kid: k.kid, public_key: k.publicKey, alg: k.alg };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/rdp/rotation/pending',
      response: rotationPendingResponse,
      tags,
      feature,
      summary: 'RDP routes waiting for their credentials to be entered again after a master-key rotation',
      handler: async () => {
        const [routes, key] = await Promise.all([svc().pendingRotations(), svc().keys.current()]);
        return { current_kid: key.kid, routes };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/rdp/:id',
      response: rdpRouteResponse,
      tags,
      feature,
      summary: 'One RDP route',
      handler: async ({ params }) => ({ route: await svc().get(params.id) }),
    }),
    defineEndpoint({
      method: 'PATCH',
      path: '/rdp/:id',
      response: rdpRouteResponse,
      tags,
      feature,
      body: updateRdpBody,
      storedChecks: (raw, ctx) => svc().storedProblems(raw, ctx.state.params.id),
      summary: 'Partial update of an RDP route (and of its linked L4 route; leaving gateway mode deletes that route)',
      handler: async ({ params, body }, ctx) => ({ route: await svc().update(params.id, body, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/rdp/:id',
      response: okOnly,
      tags,
      feature,
      summary: 'Delete an RDP route, its linked L4 route and its session history',
      handler: async ({ params }, ctx) => {
        await svc().remove(params.id, actor(ctx));
        return {};
      },
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/rdp/:id/toggle',
      response: rdpToggleResponse,
      tags,
      feature,
      summary: 'Enable or disable an RDP route (and its linked L4 route)',
      handler: async ({ params }, ctx) => {
        const route = await svc().toggle(params.id, actor(ctx));
        return { route, enabled: route.enabled };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/rdp/:id/credentials',
      response: credentialsResponse,
      tags,
      feature,
      summary: 'The stored credential envelope (ciphertext only; null when none)',
      handler: async ({ params }) => svc().getCredentials(params.id),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/rdp/:id/credentials',
      response: credentialsResponse,
      tags,
      feature,
      body: credentialsBody,
      summary: 'Store credentials: {credentials: <envelope made for the current key of GET /rdp/pubkey>}; another key id is refused (400)',
      handler: async ({ params, body }, ctx) => svc().setCredentials(params.id, body.credentials, actor(ctx)),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/rdp/:id/credentials',
      response: credentialsResponse,
      tags,
      feature,
      summary: 'Remove the stored credentials',
      handler: async ({ params }, ctx) => svc().clearCredentials(params.id, actor(ctx)),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/rdp/:id/maintenance',
      response: maintenanceResponse,
      tags,
      feature,
      summary: 'Maintenance windows of an RDP route and the one in force now',
      handler: async ({ params }) => {
        const r = await svc().getRoute(params.id);
        return { route_id: r.id, windows: r.maintenance_windows, active: svc().activeMaintenance(r) };
      },
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/rdp/:id/maintenance',
      response: maintenanceResponse,
      tags,
      feature,
      body: maintenanceBody,
      summary: 'Replace the maintenance windows ({windows: [{from, to, note}]}, ISO-8601, from < to); connects inside one are refused with its note',
      handler: async ({ params, body }, ctx) => {
        const windows = await svc().setMaintenance(params.id, body.windows, actor(ctx));
        return { route_id: params.id, windows, active: svc().activeMaintenance({ maintenance_windows: windows }) };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/rdp/:id/rotation/ack',
      response: rdpRouteResponse,
      tags,
      feature,
      summary: 'Acknowledge that the credentials were entered again after a master-key rotation (409 while they are still for the retired key)',
      handler: async ({ params }, ctx) => ({ route: await svc().ackRotation(params.id, actor(ctx)) }),
    }),
  ];
}
