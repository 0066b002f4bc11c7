// Thin HTTP mapping of the gateways feature:
// - admin: GET /gateways; GET /peers/:id/gateway-info and POST /peers/:id/gateway-env/rotate
//   (gateways/peer-endpoints.ts, peers scope) and POST /routes/:id/wol
//   (gateways/route-wol-endpoints.ts, routes scope);
// - gateway companion API (auth 'gateway': the gateway bearer token only): /gateway/config,
//   /gateway/config/check, /gateway/status, /gateway/probe, /gateway/heartbeat;
// - public: GET /gateway-wol/wait, the waking-up page Caddy hands sleeping WoL routes to.
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import type http from 'node:http';
import type Koa from 'koa';
import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import { createApp } from '../http/app.js';
import { defineEndpoint, type Endpoint, type Served } from '../http/registry.js';
import { bearerToken, checkGatewaySource, VIA_TUNNEL, type Principal } from '../http/auth.js';
import { zodFields } from '../http/errors.js';
import { UNKNOWN_PARAMETER_MSG } from '../http/input.js';
import { peerGatewayEndpoints } from './peer-endpoints.js';
import { routeWolEndpoints } from './route-wol-endpoints.js';
import { AppError, unauthorized, validation } from '../util/errors.js';
import type { GatewaysService } from './service.js';
import {
  checkQuery,
  gatewayCheckResponse,
  gatewayConfigResponse,
  gatewayHeartbeatResponse,
  gatewaysResponse,
  gatewayStatusResponse,
  probeBody,
  probeResponse,
} from './schema.js';
import { heartbeatSchema, statusSchema, WOL_ROUTE_HEADER, WOL_WAIT_PATH } from '@gatehouse/common/gateway-protocol.js';

/**
 * The calling gateway's peer id. Authentication (http/auth.ts checkGatewaySource, and the fast path
 * below) has already required the request to come from that gateway's own tunnel address.
 */
function callerPeer(_gateways: GatewaysService, ctx: Koa.Context): number {
  const p = ctx.state.principal as Principal | undefined;
  if (p?.kind !== 'gateway') throw unauthorized(msg('auth.gateway_token_required'));
  return p.peerId;
}

export const CHECK_PATH = '/api/v1/gateway/config/check';

/** Largest body POST /gateway/probe echoes. */
export const PROBE_MAX_BYTES = 1024 * 1024;
const PROBE_HEADERS = ['X-Probe-Peer-Id', 'X-Probe-Bytes', 'X-Probe-Sha256', 'X-Server-Time'];

/** The request body as bytes, at most `max` (413 beyond). */
async function readRaw(ctx: Koa.Context, max: number): Promise<Buffer> {
  const declared = Number(ctx.get('Content-Length'));
  if (Number.isFinite(declared) && declared > max) throw new AppError('payload_too_large', msg('request.body_too_large', { max_bytes: max }));
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw new AppError('payload_too_large', msg('request.body_too_large', { max_bytes: max }));
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** GET /gateway/config/check for an authenticated gateway: 304 when `hash` is current, else 200 + the hash. */
async function answerCheck(
  gateways: GatewaysService,
  ctx: Koa.Context,
  peerId: number,
  hash: string | undefined,
): Promise<Served<typeof gatewayCheckResponse> | undefined> {
  const r = await gateways.check(peerId, hash);
  if (!r.changed) {
    ctx.status = 304;
    return undefined;
  }
  return { changed: true as const, config_hash: r.config_hash };
}

/**
 * The same endpoint as the declared GET /gateway/config/check (same token rules, validation, answers
 * and error bodies, which the outer error middleware renders), answered as early middleware: every
 * companion polls it every few seconds and the generic chain (session, router, body, zod) costs
 * about three times the work of the check itself (scripts/bench/gateway-poll.ts). The declaration
 * stays in the registry for the OpenAPI document and the authorization matrix.
 */
export function checkFastPath(deps: AppContext): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || ctx.path !== CHECK_PATH) return next();
    const gw = deps.gateways;
    const token = bearerToken(ctx);
    const v = token ? await gw.verify(token) : null;
    if (!v) throw unauthorized(msg('auth.gateway_token_required'));
    checkGatewaySource(ctx, v.address, deps.config.gateways.tokenAnySource);
    ctx.state.principal = { kind: 'gateway', peerId: v.peerId } satisfies Principal;
    // the same strict query as the declared endpoint (an unknown parameter is a 400); a repeated one counts once
    const q = checkQuery.safeParse(Object.fromEntries(Object.entries(ctx.query).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v])));
    if (!q.success) throw validation(msg('request.validation_failed'), zodFields(q.error, UNKNOWN_PARAMETER_MSG));
    const body = await answerCheck(gw, ctx, callerPeer(gw, ctx), q.data.hash);
    if (body) ctx.body = { ok: true, ...body };
  };
}

/** The companion API alone, as the tunnel listener serves it (requests flagged VIA_TUNNEL, the idle poll on the fast path). */
export function gatewayTunnelApp(deps: AppContext): http.RequestListener {
  const app = createApp(deps, gatewayApiEndpoints(deps), {
    early: [
      async (ctx, next) => {
        ctx.state[VIA_TUNNEL] = true;
        await next();
      },
      checkFastPath(deps),
    ],
  });
  return app.callback();
}

/** The companion API endpoints (also mounted alone on the tunnel listener). */
export function gatewayApiEndpoints(deps: AppContext): Endpoint[] {
  const gw = () => deps.gateways;
  const tags = ['gateway'];
  return [
    defineEndpoint({
      method: 'GET',
      path: '/gateway/config',
      response: gatewayConfigResponse,
      auth: 'gateway',
      tags,
      summary: "This gateway's configuration: its routes (LAN targets, listener ports, WoL fields), TCP/UDP listeners, proxy port, and config_hash",
      handler: async (_i, ctx) => {
        const { config, hash } = await gw().config(callerPeer(gw(), ctx));
        ctx.set('ETag', `"${hash}"`);
        return { ...config, config_hash: hash };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/gateway/config/check',
      response: gatewayCheckResponse,
      auth: 'gateway',
      tags,
      query: checkQuery,
      summary: 'Idle poll: 304 when `hash` is the current config_hash, otherwise 200 with the new hash',
      // normally answered by checkFastPath (early middleware) with this same logic
      handler: async ({ query }, ctx) => answerCheck(gw(), ctx, callerPeer(gw(), ctx), query.hash),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/gateway/status',
      response: gatewayStatusResponse,
      auth: 'gateway',
      tags,
      body: statusSchema,
      summary: 'Traffic snapshot {rx_bytes, tx_bytes, active_connections}; does not count as a heartbeat',
      handler: async ({ body }, ctx) => ({ ...(await gw().trafficStatus(callerPeer(gw(), ctx), body)) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/gateway/probe',
      auth: 'gateway',
      tags,
      body: probeBody,
      response: probeResponse,
      alsoContent: ['*/*'],
      ownBody: 'a JSON body is validated as an object or array; any other Content-Type is read raw and echoed byte for byte',
      summary: `Echo for end-to-end checks (round-trip time, payload integrity). A JSON body comes back as {ok, peer_id, echo, bytes, server_time}; any other body (text, binary, form, none) comes back byte for byte with its Content-Type and the headers ${PROBE_HEADERS.join(', ')}. At most ${PROBE_MAX_BYTES} bytes (413 beyond).`,
      handler: async ({ body }, ctx) => {
        const peer_id = callerPeer(gw(), ctx);
        if (ctx.is('application/json') === 'application/json')
          return { peer_id, echo: body ?? null, bytes: Buffer.byteLength(JSON.stringify(body ?? null)), server_time: deps.clock() };
        // The body parser read form bodies (rawBody); every other type is still unread on the socket.
        const rawBody = (ctx.request as { rawBody?: unknown }).rawBody;
        const raw = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : await readRaw(ctx, PROBE_MAX_BYTES);
        ctx.status = 200;
        ctx.set('X-Probe-Peer-Id', String(peer_id));
        ctx.set('X-Probe-Bytes', String(raw.length));
        ctx.set('X-Probe-Sha256', crypto.createHash('sha256').update(raw).digest('hex'));
        ctx.set('X-Server-Time', String(deps.clock()));
        // Only the calling gateway sees this, but an echoed type must never be rendered as a page.
        ctx.set('X-Content-Type-Options', 'nosniff');
        ctx.set('Content-Security-Policy', "default-src 'none'; sandbox");
        ctx.type = ctx.get('Content-Type') || 'application/octet-stream';
        ctx.body = raw;
        return undefined;
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/gateway/heartbeat',
      response: gatewayHeartbeatResponse,
      auth: 'gateway',
      tags,
      body: heartbeatSchema,
      summary: 'Heartbeat: stored whole as health, judged by route_reachability (overall_healthy as fallback), hostname reported as the agent hostname',
      handler: async ({ body }, ctx) => ({ ...(await gw().heartbeat(callerPeer(gw(), ctx), body)) }),
    }),
  ];
}

export function gatewayEndpoints(deps: AppContext): Endpoint[] {
  const gw = () => deps.gateways;
  const wol = () => deps.gatewayWol;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/gateways',
      response: gatewaysResponse,
      tags: ['gateways'],
      summary: 'Every gateway peer: status (online/offline/unknown and why), last heartbeat (health), routes, config sync',
      handler: async () => ({ gateways: await gw().list() }),
    }),
    ...peerGatewayEndpoints(deps),
    ...routeWolEndpoints(deps),
    defineEndpoint({
      method: 'GET',
      path: WOL_WAIT_PATH,
      auth: 'public',
      tags: ['gateways'],
      headers: z.object({
        [WOL_ROUTE_HEADER]: z
          .string({ error: 'required: Caddy sets it on a Wake-on-LAN gateway route' })
          .regex(/^[1-9]\d{0,9}$/, 'must be a route id')
          .meta({ description: 'the route id; Caddy sets it on a Wake-on-LAN gateway route (this page is only reached through one)' }),
      }),
      pages: true,
      errors: {
        '404': 'no such route, or it has no Wake-on-LAN target',
        '502': 'the route is disabled or has Wake-on-LAN off: the host is not answering',
        '503': 'the host is asleep: a Wake-on-LAN packet was sent; the page reloads (Retry-After) until the host answers',
        '504': 'the host did not wake up within GATEHOUSE_GATEWAY_WOL_TIMEOUT',
      },
      summary: 'Waking-up page for a Wake-on-LAN gateway route whose host is asleep (reached through Caddy; sends the packet, reloads until the host answers)',
      handler: async (_i, ctx) => {
        const page = await wol().waitPage(ctx.get(WOL_ROUTE_HEADER) || undefined, ctx.accepts('html', 'json') === 'html');
        ctx.status = page.status;
        for (const [k, v] of Object.entries(page.headers)) ctx.set(k, v);
        ctx.type = page.type;
        ctx.body = page.body;
      },
    }),
    ...gatewayApiEndpoints(deps),
  ];
}
