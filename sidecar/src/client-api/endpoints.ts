// Thin HTTP mapping of the desktop client API (/api/v1/client/*, auth 'client': a token with scope
// client or full-access, plus the X-Machine-Fingerprint header), the public GET /client/update, the
// admin's machines of a token (GET/DELETE /tokens/:id/machines...) and the client settings
// (GET/PUT /settings/client). The RDP client endpoints live in src/rdp/client-endpoints.ts.
import { msg } from '@gatehouse/common/messages/index.js';
import type Koa from 'koa';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId, FINGERPRINT_HEADER, type Principal } from '../http/auth.js';
import { unauthorized } from '../util/errors.js';
import { APP_VERSION } from '../version.js';
import {
  clientSettingsBody,
  clientSettingsResponse,
  configCheckQuery,
  configCheckResponse,
  configResponse,
  dnsCheckQuery,
  dnsCheckResponse,
  heartbeatBody,
  heartbeatResponse,
  hostnameReportBody,
  hostnameReportResponse,
  machineDeletedResponse,
  machinesQuery,
  machinesResponse,
  peerInfoQuery,
  peerInfoResponse,
  permissionsResponse,
  pingResponse,
  machineHeaders,
  optionalMachineHeaders,
  registerBody,
  registerResponse,
  servicesResponse,
  splitTunnelResponse,
  statusBody,
  statusResponse,
  trafficQuery,
  trafficResponse,
  updateResponse,
} from './schema.js';

type ClientPrincipal = Extract<Principal, { kind: 'client' }>;

function principal(ctx: Koa.Context): ClientPrincipal {
  const p = ctx.state.principal as Principal | undefined;
  if (p?.kind !== 'client') throw unauthorized(msg('auth.client_token_required'));
  return p;
}

const fingerprint = (ctx: Koa.Context) => ctx.get(FINGERPRINT_HEADER) || undefined;

const MACHINE_ERRORS = {
  '404': 'this machine (token + fingerprint) has not registered: POST /client/register first',
  '409': "the machine's peer was deleted: register again",
};

export function clientApiEndpoints(deps: AppContext): Endpoint[] {
  const c = () => deps.clientMachines;
  const tags = ['client'];
  const machine = (ctx: Koa.Context) => c().requireMachine(principal(ctx), fingerprint(ctx));
  return [
    defineEndpoint({
      method: 'GET',
      path: '/client/ping',
      auth: 'client',
      tags,
      headers: optionalMachineHeaders,
      response: pingResponse,
      summary: 'Liveness and server version; `registered` says whether this machine (token + fingerprint) is registered',
      handler: async (_i, ctx) => ({
        version: APP_VERSION,
        api: 'v1' as const,
        server_time: deps.clock(),
        registered: (await c().forPrincipal(principal(ctx), fingerprint(ctx))) !== null,
      }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/client/permissions',
      auth: 'client',
      tags,
      headers: optionalMachineHeaders,
      response: permissionsResponse,
      summary:
        'What the token may do: its scopes, the user it acts as, the peer it is bound to, this machine, and whether RDP (licence feature remote_desktop) and agent hostnames (internal_dns) are available',
      handler: async (_i, ctx) => {
        const p = principal(ctx);
        const m = await c().forPrincipal(p, fingerprint(ctx));
        const token = (await deps.db.models.ApiToken.findByPk(p.tokenId, { raw: true })) as {
          name: string;
          expires_at: number | null;
          fingerprint: string | null;
        } | null;
        const user =
          p.userId !== null
            ? ((await deps.db.models.User.findByPk(p.userId, { attributes: ['id', 'username'], raw: true })) as { id: number; username: string } | null)
            : null;
        const ownPeer = m?.peer_id ?? p.peerId ?? null;
        const peer =
          ownPeer !== null
            ? ((await deps.db.models.Peer.findByPk(ownPeer, { attributes: ['hostname', 'hostname_source'], raw: true })) as {
                hostname: string | null;
                hostname_source: string | null;
              } | null)
            : null;
        const rdp = deps.features.isEnabled('remote_desktop');
        const idns = deps.features.isEnabled('internal_dns');
        return {
          token: {
            id: p.tokenId,
            name: token?.name ?? '',
            scopes: p.scopes,
            expires_at: token?.expires_at != null ? new Date(Number(token.expires_at)).toISOString() : null,
            fingerprint_bound: !!token?.fingerprint,
          },
          user: user ? { id: Number(user.id), username: user.username } : null,
          bound_peer_id: p.peerId,
          machine: m ? { id: m.id, peer_id: m.peer_id } : null,
          can: {
            register: true,
            tunnel: !!m && m.peer_id !== null,
            hostname: !!peer && idns && !(peer.hostname && peer.hostname_source === 'admin'),
            rdp,
            dns_check: true as const,
          },
          features: { remote_desktop: rdp, internal_dns: idns },
        };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/client/register',
      auth: 'client',
      tags,
      headers: machineHeaders,
      body: registerBody,
      response: registerResponse,
      status: 201,
      alsoStatus: [200],
      errors: { '409': 'the peer the token is bound to is gone, or no peer address or name is free' },
      summary:
        "Register this machine (token + X-Machine-Fingerprint): creates its peer (named after the hostname, made unique) or uses the token's bound peer. 201 when registered now; 200 with the same peer when this machine was registered already",
      handler: async ({ body }, ctx) => {
        const r = await c().register(principal(ctx), fingerprint(ctx), body);
        ctx.status = r.created ? 201 : 200;
        ctx.body = { ok: true, ...r };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/client/config',
      auth: 'client',
      tags,
      headers: machineHeaders,
      response: configResponse,
      errors: MACHINE_ERRORS,
      summary: "This machine's WireGuard config (wg-quick text) with the split tunnel applied to AllowedIPs, and config_hash (sha256: of the text)",
      handler: async (_i, ctx) => {
        const r = await c().rendered(await machine(ctx));
        ctx.set('Cache-Control', 'no-store');
        ctx.set('ETag', `"${r.hash}"`);
        return { peer_id: r.peerId, filename: r.filename, config: r.text, config_hash: r.hash, allowed_ips: r.allowedIps };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/client/config/check',
      auth: 'client',
      tags,
      headers: machineHeaders,
      query: configCheckQuery,
      response: configCheckResponse,
      alsoStatus: [304],
      errors: MACHINE_ERRORS,
      summary: 'Idle poll: 304 (no body) when `hash` is the current config_hash, otherwise 200 {changed: true, config_hash}',
      handler: async ({ query }, ctx) => {
        const r = await c().check(await machine(ctx), query.hash);
        if (!r.changed) {
          ctx.status = 304;
          return undefined;
        }
        return { changed: true as const, config_hash: r.config_hash };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/client/heartbeat',
      auth: 'client',
      tags,
      headers: machineHeaders,
      body: heartbeatBody,
      response: heartbeatResponse,
      errors: MACHINE_ERRORS,
      summary: "Handshake age, rx/tx bytes and optionally the machine's hostname, stored on the machine; answers the current config_hash",
      handler: async ({ body }, ctx) => ({ ...(await c().heartbeat(await machine(ctx), body)) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/client/status',
      auth: 'client',
      tags,
      headers: machineHeaders,
      body: statusBody,
      response: statusResponse,
      errors: { '404': MACHINE_ERRORS['404'], '413': 'the status is larger than 16 KiB of JSON' },
      summary: "Detailed device status: any JSON object up to 16 KiB, stored as the machine's last status (shown to admins with its machines)",
      handler: async ({ body }, ctx) => ({ ...(await c().status(await machine(ctx), body as Record<string, unknown>)) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/client/peer/hostname',
      auth: 'client',
      tags,
      headers: machineHeaders,
      body: hostnameReportBody,
      response: hostnameReportResponse,
      rateLimit: 'hostname',
      errors: MACHINE_ERRORS,
      summary:
        "Report the DNS name of this machine's peer (source agent). Sticky admin: a hostname an admin set is never replaced (applied: false). 3 per minute per IP",
      handler: async ({ body }, ctx) => ({ ...(await c().reportHostname(await machine(ctx), body.hostname)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/client/peer-info',
      auth: 'client',
      tags,
      headers: optionalMachineHeaders,
      query: peerInfoQuery,
      response: peerInfoResponse,
      errors: { '404': 'no such peer, or not one this client may see (its own peer, and peers in the same peer group as its own peer)' },
      summary: 'Look up a peer (name, address, hostname, online): only its own peer and the peers of the same peer group; every other id is 404',
      handler: async ({ query }, ctx) => {
        const p = principal(ctx);
        return { peer: await c().peerInfo(p, await c().forPrincipal(p, fingerprint(ctx)), query.peerId) };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/client/traffic',
      auth: 'client',
      tags,
      headers: machineHeaders,
      query: trafficQuery,
      response: trafficResponse,
      errors: MACHINE_ERRORS,
      summary: "Traffic history of this machine's peer: points {timestamp, rx, tx} (period 1h: 5 min, 24h: 1 h, 7d: 6 h, 30d: 1 day)",
      handler: async ({ query }, ctx) => ({ ...(await c().traffic(await machine(ctx), query.period)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/client/services',
      auth: 'client',
      tags,
      headers: optionalMachineHeaders,
      response: servicesResponse,
      summary:
        "The enabled HTTP and L4 routes this client may use: the route's ACL lists its peer (acl), or the route sits behind a sign-in that lists the token's user (user), or it has neither ACL nor sign-in (open)",
      handler: async (_i, ctx) => {
        const p = principal(ctx);
        return { ...(await c().services(p, await c().forPrincipal(p, fingerprint(ctx)))) };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/client/dns-check',
      auth: 'client',
      tags,
      headers: optionalMachineHeaders,
      query: dnsCheckQuery,
      response: dnsCheckResponse,
      summary:
        "Resolve a name as the server does: names of the internal zone from the peers' hostnames, others through the server's resolver (3 s limit). found: false with error when nothing resolves",
      handler: async ({ query }) => ({ ...(await c().dnsCheck(query.domain)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/client/split-tunnel',
      auth: 'client',
      tags,
      headers: optionalMachineHeaders,
      response: splitTunnelResponse,
      summary:
        "The IP ranges this client routes into the tunnel: the token's override (PATCH /tokens/:id split_tunnel), else the server default (PUT /settings/client), else the VPN subnet only",
      handler: async (_i, ctx) => ({ ...(await c().splitTunnel(principal(ctx).tokenId)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/api/v1/client/update',
      auth: 'public',
      rateLimit: 'client',
      tags,
      response: updateResponse,
      summary:
        'The latest desktop-client release {version, download_url, notes}: from PUT /settings/client, else GATEHOUSE_CLIENT_VERSION / GATEHOUSE_CLIENT_DOWNLOAD_URL, else the server version. No authentication',
      handler: async () => ({ ...(await c().update()) }),
    }),
    // ---- admin
    defineEndpoint({
      method: 'GET',
      path: '/tokens/:id/machines',
      adminRole: true,
      tags: ['tokens'],
      response: machinesResponse,
      summary: 'The machines registered with a client token: hostname, platform, client version, peer, last seen, handshake age, rx/tx, last status',
      handler: async ({ params }) => ({ machines: await c().machinesOf(params.id) }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/tokens/:id/machines/:machineId',
      adminRole: true,
      tags: ['tokens'],
      query: machinesQuery,
      response: machineDeletedResponse,
      summary:
        'Forget a registered machine (it must register again). Its peer is kept unless delete_peer=true (never a peer the token is bound to or another machine uses; 409 while routes point at it, and then nothing changes)',
      handler: async ({ params, query }, ctx) => {
        const del = query.delete_peer === 'true' || query.delete_peer === '1';
        return { deleted: await c().forget(params.id, params.machineId, del, actingUserId(ctx.state.principal)) };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/settings/client',
      tags: ['settings'],
      response: clientSettingsResponse,
      summary: 'Desktop-client settings: the default split tunnel and the release GET /client/update announces',
      handler: async () => ({ client: await c().settings() }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/settings/client',
      tags: ['settings'],
      body: clientSettingsBody,
      response: clientSettingsResponse,
      summary:
        'Set the default split tunnel (CIDRs; null = VPN subnet only) and/or the announced release ({version, download_url, notes?}; null = from the environment)',
      handler: async ({ body }, ctx) => {
        const client = await c().setSettings(body);
        await deps.activity.record({
          source: 'settings',
          event_type: 'client_settings_changed',
          msg: msg('client.settings_changed'),
          details: { fields: Object.keys(body) },
          user_id: actingUserId(ctx.state.principal) ?? null,
        });
        return { client };
      },
    }),
  ];
}
