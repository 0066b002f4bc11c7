// /api/v1/peers: thin HTTP mapping onto PeersService.
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import {
  batchBody,
  configQuery,
  createPeerBody,
  listPeersQuery,
  hostnameBody,
  peerBatchResponse,
  peerCreatedResponse,
  peerDeletedResponse,
  peerListResponse,
  peerQrResponse,
  peerResponse,
  peerToggleResponse,
  peerTrafficQuery,
  peerTrafficResponse,
  updatePeerBody,
} from './schema.js';

export function peerEndpoints(deps: AppContext): Endpoint[] {
  const peers = () => deps.peers;
  const tags = ['peers'];
  return [
    defineEndpoint({
      method: 'GET',
      path: '/peers',
      tags,
      query: listPeersQuery,
      response: peerListResponse,
      summary:
        'List peers with search (q), filters (group_id, tag, online, enabled), sort (default id) and paging; total counts the peers matching the filters, total_all every peer',
      handler: async ({ query }) => {
        const r = await peers().list(query);
        return { peers: r.peers, total: r.total, total_all: r.totalAll, limit: query.limit, offset: query.offset };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/peers',
      status: 201,
      secrets: 'for a gateway peer: its gateway.env (the tunnel private key and preshared key) and both gateway tokens',
      tags,
      body: createPeerBody,
      storedChecks: (raw) => peers().storedProblems(raw),
      response: peerCreatedResponse,
      summary: 'Create a peer: address allocated from the subnet, keys and preshared key generated server-side; 409 on a duplicate name or a full subnet',
      handler: async ({ body }, ctx) => {
        const peer = await peers().create(body, actingUserId(ctx.state.principal));
        // gateways feature hook: a gateway peer also gets its companion tokens and gateway.env (shown once)
        const gateway = peer.peer_type === 'gateway' ? await deps.gateways.issueTokens(peer.id) : undefined;
        return gateway ? { peer, gateway } : { peer };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/peers/batch',
      response: peerBatchResponse,
      tags,
      body: batchBody,
      summary: 'Enable, disable or delete several peers; one result per id',
      handler: async ({ body }, ctx) => ({ action: body.action, ...(await peers().batch(body.action, body.ids, actingUserId(ctx.state.principal))) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/peers/:id',
      summary: 'One peer',
      tags,
      response: peerResponse,
      handler: async ({ params }) => ({ peer: await peers().get(params.id) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/peers/:id',
      tags,
      body: updatePeerBody,
      storedChecks: (raw, ctx) => peers().storedProblems(raw, ctx.state.params.id),
      response: peerResponse,
      summary: 'Partial update; changes to enabled, expires_at, allowed_ips or keys are applied to the tunnel at once',
      handler: async ({ params, body }, ctx) => ({ peer: await peers().update(params.id, body, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/peers/:id',
      response: peerDeletedResponse,
      tags,
      summary: 'Delete a peer (its tunnel stops at once); 409 while routes point at it',
      handler: async ({ params }, ctx) => ({ deleted: await peers().remove(params.id, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/peers/:id/toggle',
      response: peerToggleResponse,
      tags,
      summary: 'Enable a disabled peer or disable an enabled one (kept in the database)',
      handler: async ({ params }, ctx) => {
        const peer = await peers().toggle(params.id, actingUserId(ctx.state.principal));
        return { peer, enabled: peer.enabled };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/peers/:id/config',
      tags,
      secrets: "the peer's WireGuard private key and preshared key",
      query: configQuery,
      rawResponse: {
        contentType: 'text/plain',
        description: 'The WireGuard client configuration (wg-quick format); with download=1|true as an attachment (Content-Disposition) named after the peer',
      },
      summary: 'The client tunnel config as text/plain; download=1 sends it as an attachment named after the peer',
      handler: async ({ params, query }, ctx) => {
        const c = await peers().config(params.id);
        ctx.set('Cache-Control', 'no-store');
        ctx.type = 'text/plain; charset=utf-8';
        if (query.download === '1' || query.download === 'true') ctx.attachment(c.filename);
        ctx.body = c.text;
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/peers/:id/qr',
      secrets: "the peer's WireGuard private key and preshared key (as config text and QR code)",
      response: peerQrResponse,
      tags,
      summary: 'The client config as a QR code (PNG data URL) plus the config text',
      handler: async ({ params }, ctx) => {
        ctx.set('Cache-Control', 'no-store');
        return { ...(await peers().qr(params.id)) };
      },
    }),
    defineEndpoint({
      method: 'PATCH',
      path: '/peers/:id/hostname',
      response: peerResponse,
      tags,
      body: hostnameBody,
      feature: 'internal_dns',
      summary: 'Set the admin hostname (sticky: agent reports never replace it); empty string or null removes it. Feature internal_dns',
      handler: async ({ params, body }, ctx) => ({ peer: await peers().setAdminHostname(params.id, body.hostname, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/peers/:id/traffic',
      response: peerTrafficResponse,
      tags,
      query: peerTrafficQuery,
      summary: 'Traffic chart of one peer: points {timestamp, rx, tx} per step (24h: 1 h, 7d: 6 h, 30d: 1 day)',
      handler: async ({ params, query }) => ({ ...(await peers().traffic(params.id, query.period)) }),
    }),
  ];
}
