// The desktop client's RDP endpoints (auth 'client': a token with scope client or full-access plus the
// machine fingerprint header; licence feature remote_desktop; the client rate limit):
//   GET    /client/rdp                 the RDP routes this client may use (enabled; allowed_user_ids null
//                                      or holding the token's user), with maintenance and rotation flags
//   GET    /client/rdp/:id/status      target reachability (ctx.rdpStatus)
//   GET    /client/rdp/:id/connect     ?key=<base64 SPKI of a one-time RSA-OAEP SHA-256 key, 2048-4096 bits>:
//                                      the `.rdp` profile (rdp-file.ts), the address(es) for the access
//                                      mode, and the stored credentials re-encrypted for that key (reencrypt.ts)
//   POST   /client/rdp/:id/session     session start; PATCH heartbeat ({session_id} → {disconnect, reason});
//   DELETE /client/rdp/:id/session     end ({session_id}) — all three through ctx.rdpSessions
// A route the client may not use is a 404 (its existence is not revealed). Refusals of connect:
// 409 {reason: route_disabled | rotation_pending | not_connectable}, 423 {reason: maintenance, maintenance}.
import { msg } from '@gatehouse/common/messages/index.js';
import type Koa from 'koa';
import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import { FINGERPRINT_HEADER, type Principal } from '../http/auth.js';
import { optionalMachineHeaders } from '../client-api/schema.js';
import { rdpSessionEndReason } from '../event-kinds.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { AppError, notFound, unauthorized } from '../util/errors.js';
import { credentialEnvelopeSchema, type CredentialEnvelope } from '@gatehouse/common/rdp-credentials.js';
import { renderRdpFile, type RdpProfileSettings } from './rdp-file.js';
import { oneTimeKeyText, reencryptForClient, validateOneTimeKey } from './reencrypt.js';
import type { RdpRoute } from './model.js';
import { clientRdpHeartbeatResponse, rdpRouteStatus, type MaintenanceWindow, type RdpRouteView } from './schema.js';
import { statusQuery } from './ops-endpoints.js';

/** Where a client connects (the connect answer's `address`). */
export type ConnectAddress = z.infer<typeof address>;
export type ConnectMode = ConnectAddress['mode'];

/** The route fields the connect address depends on. */
export type ConnectRoute = Pick<RdpRouteView, 'access_mode' | 'target_host' | 'target_port' | 'external_host' | 'listen_port' | 'gateway_l4_route_id' | 'name'>;

/**
 * Where the client connects, in the order it should try (pure):
 * - internal: target_host:target_port, through the tunnel;
 * - external: the public address (external_host, else target_host) on listen_port (else target_port);
 * - both: the internal address first, then the external one: the client takes the first that its
 *   own reachability check (a TCP connect) answers;
 * - gateway: the server's public host (GATEHOUSE_PUBLIC_HOST, else the machine's hostname: the host
 *   gateway.env and the peers' WireGuard endpoint use too) on the linked L4 route's listen_port.
 * An address that is missing (gateway without listen_port, both without external_host) is left out;
 * none at all is a 409.
 */
export function connectAddresses(route: ConnectRoute, publicHost: string): ConnectAddress[] {
  const out: ConnectAddress[] = [];
  const internal = () => out.push({ host: route.target_host, port: route.target_port, mode: 'internal' });
  const external = (host: string | null) => {
    if (host) out.push({ host, port: route.listen_port ?? route.target_port, mode: 'external' });
  };
  switch (route.access_mode) {
    case 'internal':
      internal();
      break;
    case 'external':
      external(route.external_host ?? route.target_host);
      break;
    case 'both':
      internal();
      external(route.external_host);
      break;
    case 'gateway':
      if (route.listen_port !== null && route.gateway_l4_route_id !== null) out.push({ host: publicHost, port: route.listen_port, mode: 'gateway' });
      break;
  }
  if (!out.length)
    throw new AppError('conflict', msg('rdp.not_connectable', { name: route.name, access_mode: route.access_mode }), undefined, { reason: 'not_connectable' });
  return out;
}

/**
 * The session heartbeat interval a client is told (s): half the time after which a silent session is
 * closed as lost, so one late or failed heartbeat is tolerated. Not shorter: the heartbeats share the
 * client rate limit (100 per 15 min per IP) with the tunnel's idle poll and heartbeat; with the
 * defaults (lost after 90 s → every 45 s: 20 per 15 min; the reference client's config check every
 * 15 s: 60, heartbeat every 60 s: 15) an RDP session leaves room for connect, start and end.
 */
export function sessionHeartbeatInterval(lostAfterS: number): number {
  return Math.max(5, Math.floor(lostAfterS / 2));
}

// --- schemas ---

const id = z.number().int();
const ms = z.number().int().meta({ description: 'epoch milliseconds' });
const accessMode = z.enum(['internal', 'external', 'both', 'gateway']);
const windowView = z.object({ from: z.string().meta({ format: 'date-time' }), to: z.string().meta({ format: 'date-time' }), note: z.string() });

const clientRoute = z
  .object({
    id,
    name: z.string(),
    description: z.string().nullable(),
    access_mode: accessMode,
    has_credentials: z.boolean().meta({ description: 'connect returns credentials (encrypted for the one-time key) when true' }),
    rotation_pending: z.boolean().meta({ description: 'the credentials await re-entry by an admin after a master-key rotation: connect is refused meanwhile' }),
    maintenance: windowView.nullable().meta({ description: 'the maintenance window in force now (connect is refused meanwhile), or null' }),
    upcoming_maintenance: z.array(windowView).meta({ description: 'windows that have not ended yet, earliest first' }),
    wol_enabled: z.boolean(),
    network_level_auth: z.boolean(),
    resolution: z.string().nullable(),
    color_depth: z.number().int(),
    audio_mode: z.enum(['local', 'remote', 'off']),
    clipboard_enabled: z.boolean(),
  })
  .meta({ description: 'An RDP route as the desktop client sees it' });

const address = z.object({
  host: z.string(),
  port: z.number().int(),
  mode: z.enum(['internal', 'external', 'gateway']).meta({
    description: "internal: through the WireGuard tunnel; external: the public address; gateway: the server's public host, relayed by the gateway companion",
  }),
});

const connectQuery = z.strictObject({
  key: oneTimeKeyText.meta({
    description:
      'the one-time RSA-OAEP (SHA-256) public key, 2048-4096 bits, as base64 (standard or URL-safe) of its SPKI DER, percent-encoded; the credentials come back encrypted for it',
  }),
});

const sessionView = z.object({
  id,
  rdp_route_id: id,
  status: z.enum(['active', 'ended']),
  started_at: ms,
  last_heartbeat_at: ms,
  ended_at: ms.nullable(),
  end_reason: rdpSessionEndReason.nullable(),
  duration_s: z.number().int(),
  client_name: z.string().nullable(),
  machine_id: id.nullable().meta({ description: 'the registered machine (POST /client/register) that started it' }),
  peer_id: id.nullable(),
  disconnect_requested_at: ms.nullable().meta({ description: 'when an admin asked this session to end (the next heartbeat says disconnect); null: not asked' }),
  token_id: id.nullable().meta({ description: 'the client token that started it' }),
  user_id: id.nullable().meta({ description: 'the user of that token (its bound user, else its creator)' }),
});

const sessionStartBody = z
  .object({
    client_name: z
      .string()
      .max(253, 'at most 253 characters')
      .regex(/\S/, 'must not be empty')
      .trim()
      .optional()
      .meta({ description: "the client machine's hostname" }),
  })
  .strict()
  .optional();
const sessionRef = z
  .object({
    session_id: z
      .number({ error: (i) => (i.input === undefined ? 'required' : 'must be a number') })
      .int('must be an integer')
      .positive('must be positive'),
  })
  .strict();

export const clientRdpListResponse = z.object({ ok: z.literal(true), routes: z.array(clientRoute) });
export const clientRdpStatusResponse = z.object({ ok: z.literal(true), status: rdpRouteStatus });
export const clientRdpConnectResponse = z.object({
  ok: z.literal(true),
  rdp_route_id: id,
  name: z.string(),
  access_mode: accessMode,
  address: address.meta({ description: 'the first candidate: the address to use unless the access mode is both and it does not answer' }),
  candidates: z.array(address.extend({ rdp_file: z.string() })).meta({
    description:
      'every address in the order to try, each with its own profile (both: internal, then external; the client takes the first its TCP check reaches)',
  }),
  rdp_file: z.string().meta({ description: 'the .rdp connect profile (CRLF lines) for `address`: no user name and never a password' }),
  credentials: credentialEnvelopeSchema.nullable().meta({
    description:
      "the stored credentials ({username, password, domain}) re-encrypted for the one-time key (scheme RSA-OAEP-256+A256GCM, kid = that key's id); null when the route has none",
  }),
  kid: z.string().meta({ description: 'the key id of the one-time key as the server read it (first 16 hex digits of SHA-256 over its SPKI DER)' }),
  credentials_updated_at: z.string().nullable(),
  session: z.object({
    path: z.string().meta({ description: 'POST to start, PATCH {session_id} to heartbeat, DELETE {session_id} to end' }),
    heartbeat_interval_s: z.number().int(),
    lost_after_s: z.number().int().meta({ description: 'a session without a heartbeat for this long is closed as lost' }),
  }),
});
export const clientRdpSessionResponse = z.object({ ok: z.literal(true), session: sessionView });

// --- handlers ---

function caller(ctx: { state: { principal?: Principal } }): Extract<Principal, { kind: 'client' }> {
  const p = ctx.state.principal;
  if (p?.kind !== 'client') throw unauthorized(msg('auth.client_token_required'));
  return p;
}

/** Whether the token's user may use the route (allowed_user_ids null: every client token). */
function allowedFor(route: Pick<RdpRoute, 'allowed_user_ids'>, p: Extract<Principal, { kind: 'client' }>): boolean {
  return route.allowed_user_ids === null || (p.userId !== null && route.allowed_user_ids.includes(p.userId));
}

export function rdpClientEndpoints(deps: AppContext): Endpoint[] {
  const tags = ['client'];
  const feature = 'remote_desktop' as const;
  const auth = 'client' as const;

  /** The route if this client may see it: allowed for its user and enabled (404 otherwise). */
  const visible = async (routeId: number, p: Extract<Principal, { kind: 'client' }>, opts: { disabledToo?: boolean } = {}): Promise<RdpRoute> => {
    let route: RdpRoute;
    try {
      route = await deps.rdp.getRoute(routeId);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'not_found') throw notFound(msg('resource.not_found', { what: 'RDP route' }));
      throw err;
    }
    if (!allowedFor(route, p) || (!route.enabled && !opts.disabledToo)) throw notFound(msg('resource.not_found', { what: 'RDP route' }));
    return route;
  };

  const refuseIfUnavailable = (route: RdpRoute, now: number): void => {
    if (!route.enabled) throw new AppError('conflict', msg('rdp.disabled', { name: route.name }), undefined, { reason: 'route_disabled' });
    const w: MaintenanceWindow | null = deps.rdp.activeMaintenance(route, now);
    if (w) {
      throw new AppError('locked', msg('rdp.maintenance', { name: route.name, until: w.to, note: w.note ?? null }), undefined, {
        reason: 'maintenance',
        maintenance: w,
      });
    }
  };

  const lostAfterS = () => Math.round(deps.rdpSessions.lostAfterMs / 1000);
  /**
   * 404 when the session exists but was started on another route than the path's (a session deleted
   * with its route is left to rdpSessions, which answers its last heartbeat with the disconnect order).
   */
  const onRoute = async (sessionId: number, routeId: number): Promise<void> => {
    const row = (await deps.db.models.RdpSession.findByPk(sessionId, { raw: true, attributes: ['rdp_route_id'] })) as { rdp_route_id: number | string } | null;
    if (row && Number(row.rdp_route_id) !== routeId) throw notFound(msg('resource.not_found', { what: 'RDP session' }));
  };

  /** Who the session belongs to: the token, its user, the registered machine (when it registered) and its peer. */
  const who = async (ctx: Koa.Context, clientName?: string | null) => {
    const p = caller(ctx);
    const m = await deps.clientMachines.forPrincipal(p, ctx.get(FINGERPRINT_HEADER) || undefined);
    return {
      token_id: p.tokenId,
      user_id: p.userId,
      machine_id: m?.id ?? null,
      peer_id: m?.peer_id ?? p.peerId,
      client_name: clientName ?? m?.hostname ?? null,
    };
  };

  return [
    defineEndpoint({
      method: 'GET',
      path: '/client/rdp',
      auth,
      tags,
      headers: optionalMachineHeaders,
      feature,
      response: clientRdpListResponse,
      summary:
        "The RDP routes this client may use (enabled; allowed_user_ids null or holding the token's user), with the maintenance window in force and whether credentials await re-entry after a master-key rotation",
      handler: async (_i, ctx) => {
        const p = caller(ctx);
        const now = deps.clock();
        const routes = (await deps.rdp.listRoutes()).filter((r) => r.enabled && allowedFor(r, p));
        return {
          routes: routes.map((r) => ({
            id: r.id,
            name: r.name,
            description: r.description,
            access_mode: r.access_mode,
            has_credentials: r.credentials_envelope !== null,
            rotation_pending: r.rotation_state === 'pending',
            maintenance: deps.rdp.activeMaintenance(r, now),
            upcoming_maintenance: r.maintenance_windows.filter((w) => Date.parse(w.to) > now),
            wol_enabled: r.wol_enabled,
            network_level_auth: r.network_level_auth,
            resolution: r.resolution,
            color_depth: r.color_depth,
            audio_mode: r.audio_mode,
            clipboard_enabled: r.clipboard_enabled,
          })),
        };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/client/rdp/:id/status',
      auth,
      tags,
      headers: optionalMachineHeaders,
      feature,
      response: clientRdpStatusResponse,
      query: statusQuery,
      summary:
        "Reachability of the RDP target along the route's path (the last scheduled check, or one now with ?refresh=1), with the maintenance window in force",
      handler: async ({ params, query }, ctx) => {
        const route = await visible(params.id, caller(ctx));
        return { status: await deps.rdpStatus.status(route.id, query.refresh ?? false) };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/client/rdp/:id/connect',
      auth,
      tags,
      headers: optionalMachineHeaders,
      feature,
      response: clientRdpConnectResponse,
      query: connectQuery,
      summary:
        'A connect profile: the .rdp file, the address(es) for the access mode, and the stored credentials re-encrypted for the one-time public key in ?key= (never stored, never logged)',
      errors: {
        '422':
          'the one-time key is not an RSA public key usable with RSA-OAEP SHA-256 of 2048-4096 bits with an odd exponent (its form is in the document; its content is not)',
        '409': 'refused: reason route_disabled, rotation_pending (credentials must be re-entered by an admin after a master-key rotation) or not_connectable',
        '423': 'refused: reason maintenance, with the window in force ({from, to, note})',
      },
      handler: async ({ params, query }, ctx) => {
        const p = caller(ctx);
        const clientKey = await validateOneTimeKey(query.key);
        const route = await visible(params.id, p, { disabledToo: true });
        refuseIfUnavailable(route, deps.clock());
        if (route.rotation_state === 'pending') {
          throw new AppError('conflict', msg('rdp.reenter_after_rotation', { name: route.name }), undefined, { reason: 'rotation_pending' });
        }
        const candidates = connectAddresses(route, deps.publicHost.current().host).map((a) => ({
          ...a,
          rdp_file: renderRdpFile({ ...(route as RdpProfileSettings), address: a }),
        }));
        let credentials: CredentialEnvelope | null = null;
        if (route.credentials_envelope !== null && route.credentials_kid !== null) {
          credentials = await reencryptForClient(deps.rdp.keys, JSON.parse(route.credentials_envelope), route.credentials_kid, clientKey);
          // an audit trail of every release of stored credentials: which token, user and machine got them
          const w = await who(ctx);
          await deps.activity.record({
            source: 'rdp',
            event_type: 'rdp_credentials_released',
            msg: msg('rdp.credentials_released', { name: route.name, token_id: w.token_id ?? null, client_name: w.client_name ?? null }),
            details: {
              rdp_route_id: route.id,
              token_id: w.token_id,
              machine_id: w.machine_id,
              peer_id: w.peer_id,
              client_name: w.client_name,
              key_id: clientKey.kid,
            },
            user_id: w.user_id,
          });
        }
        const lost = lostAfterS();
        const first = candidates[0];
        ctx.set('Cache-Control', 'no-store');
        return {
          rdp_route_id: route.id,
          name: route.name,
          access_mode: route.access_mode,
          address: { host: first.host, port: first.port, mode: first.mode },
          candidates,
          rdp_file: first.rdp_file,
          credentials,
          kid: clientKey.kid,
          credentials_updated_at: route.credentials_updated_at === null ? null : new Date(route.credentials_updated_at).toISOString(),
          session: { path: `/api/v1/client/rdp/${route.id}/session`, heartbeat_interval_s: sessionHeartbeatInterval(lost), lost_after_s: lost },
        };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/client/rdp/:id/session',
      auth,
      tags,
      headers: optionalMachineHeaders,
      feature,
      body: sessionStartBody,
      response: clientRdpSessionResponse,
      status: 201,
      summary: 'Session start: the client opened an RDP connection on this route (refused like connect when the route is disabled or in maintenance)',
      errors: { '409': 'the route is disabled', '423': 'the route is in a maintenance window (reason maintenance, maintenance)' },
      handler: async ({ params, body }, ctx) => {
        const p = caller(ctx);
        const route = await visible(params.id, p, { disabledToo: true });
        refuseIfUnavailable(route, deps.clock());
        const s = await deps.rdpSessions.start(route.id, await who(ctx, body?.client_name));
        return { session: s };
      },
    }),
    defineEndpoint({
      method: 'PATCH',
      path: '/client/rdp/:id/session',
      auth,
      tags,
      headers: optionalMachineHeaders,
      feature,
      body: sessionRef,
      response: clientRdpHeartbeatResponse,
      summary:
        'Session heartbeat ({session_id}): {disconnect: true, reason} orders the client to drop the RDP connection (disconnect-all, route disabled or deleted)',
      handler: async ({ params, body }, ctx) => {
        await onRoute(body.session_id, params.id);
        const a = await deps.rdpSessions.heartbeat(body.session_id, await who(ctx));
        return { ...a, reason: a.reason ?? null, message: a.message ?? null };
      },
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/client/rdp/:id/session',
      auth,
      tags,
      headers: optionalMachineHeaders,
      feature,
      body: sessionRef,
      response: clientRdpSessionResponse,
      summary: 'Session end ({session_id}); ending an ended session returns it as it is',
      handler: async ({ params, body }, ctx) => {
        await onRoute(body.session_id, params.id);
        return { session: await deps.rdpSessions.end(body.session_id, await who(ctx), 'client') };
      },
    }),
  ];
}
