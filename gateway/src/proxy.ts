// The companion's HTTP reverse proxy (GATEWAY_PROXY_PORT on the tunnel address). Caddy sends every
// HTTP gateway route here with the original Host header; the route is picked by host (exact name,
// then a one-label `*.` wildcard) and the request goes to its LAN target (http, or https with
// backend_https: certificate not verified, the domain as SNI). WebSocket and other Upgrade requests
// are tunnelled. Keep-alive connections to LAN targets are pooled per target.
//
// Errors: a LAN target that refuses, is unreachable or does not accept within
// GATEWAY_LAN_CONNECT_TIMEOUT gets 502 with X-Gatehouse-Gateway-Error: lan-unreachable (Caddy shows
// the Wake-on-LAN page for that answer on WoL routes); an unknown host gets 404.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import { LAN_ERROR_HEADER, LAN_ERROR_VALUE, type GatewayRouteConfig } from '@gatehouse/common/gateway-protocol.js';
import type { Logger } from '@gatehouse/common/json-log.js';
import { listenOn } from './listen.js';

/** Set on the companion's own answers (404 for unknown hosts, 502s); the health self-check looks for it. */
export const COMPANION_HEADER = 'X-Gatehouse-Companion';
export const SELF_CHECK_HOST = 'gatehouse-selfcheck.invalid';

const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'CONNECT_TIMEOUT']);

/** A request's host without port, lowercased ("[::1]:8080" → "::1"). */
export function hostOf(header: string | undefined): string {
  const h = (header ?? '').trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']'));
  return h.replace(/:\d+$/, '').replace(/\.$/, '');
}

/** Host → route for HTTP routes: exact names first, then `*.rest` for one extra label. */
export class HostMap {
  private exact = new Map<string, GatewayRouteConfig>();
  private wild = new Map<string, GatewayRouteConfig>();
  constructor(routes: GatewayRouteConfig[]) {
    for (const r of routes) {
      if (r.route_type !== 'http') continue;
      if (r.domain.startsWith('*.')) this.wild.set(r.domain.slice(2), r);
      else this.exact.set(r.domain, r);
    }
  }
  get size(): number {
    return this.exact.size + this.wild.size;
  }
  match(host: string): GatewayRouteConfig | undefined {
    const e = this.exact.get(host);
    if (e) return e;
    const dot = host.indexOf('.');
    return dot > 0 ? this.wild.get(host.slice(dot + 1)) : undefined;
  }
}

function filterRawHeaders(raw: string[], extraDrop: string[] = []): string[] {
  const drop = new Set([...HOP, ...extraDrop]);
  // Connection: the headers it names are hop-by-hop too
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() === 'connection') for (const n of raw[i + 1].split(',')) drop.add(n.trim().toLowerCase());
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (!drop.has(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  return out;
}

function rawToHeaders(raw: string[]): http.OutgoingHttpHeaders {
  const h: Record<string, string | string[]> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i];
    const cur = h[k];
    h[k] = cur === undefined ? raw[i + 1] : Array.isArray(cur) ? [...cur, raw[i + 1]] : [cur, raw[i + 1]];
  }
  return h;
}

export interface ProxyOptions {
  connectTimeoutMs: number;
  log: Logger;
}

export class HttpProxy {
  private hosts = new HostMap([]);
  private agents = new Map<string, http.Agent>();
  private sockets = new Set<Duplex>();
  readonly server: http.Server;
  requests = 0;
  lanErrors = 0;

  constructor(private readonly opts: ProxyOptions) {
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.on('upgrade', (req, socket, head) => this.upgrade(req, socket, head));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
    });
    this.server.keepAliveTimeout = 65_000;
  }

  /** Open client connections (for the traffic snapshot). */
  get activeConnections(): number {
    return this.sockets.size;
  }

  setRoutes(routes: GatewayRouteConfig[]): void {
    this.hosts = new HostMap(routes);
    // drop pools of targets no route uses any more
    const keep = new Set(routes.map((r) => this.agentKey(r)));
    for (const [k, a] of this.agents) {
      if (!keep.has(k)) {
        a.destroy();
        this.agents.delete(k);
      }
    }
  }

  listen(port: number, host: string): Promise<void> {
    return listenOn(this.server, port, host);
  }

  async close(): Promise<void> {
    await new Promise<void>((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
    for (const a of this.agents.values()) a.destroy();
    this.agents.clear();
  }

  private agentKey(r: GatewayRouteConfig): string {
    return `${r.backend_https ? 'https' : 'http'}://${r.target_lan_host}:${r.target_lan_port}`;
  }

  private agent(r: GatewayRouteConfig): http.Agent {
    const k = this.agentKey(r);
    let a = this.agents.get(k);
    if (!a) {
      a = r.backend_https
        ? new https.Agent({ keepAlive: true, maxSockets: 256, rejectUnauthorized: false })
        : new http.Agent({ keepAlive: true, maxSockets: 256 });
      this.agents.set(k, a);
    }
    return a;
  }

  private own(res: http.ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', [COMPANION_HEADER]: '1', ...extra });
    res.end(`${text}\n`);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    this.requests++;
    const host = hostOf(req.headers.host);
    const route = this.hosts.match(host);
    if (!route) {
      this.own(res, 404, host === SELF_CHECK_HOST ? 'gatehouse gateway proxy' : `404 Not Found: no gateway route for ${host || '(no host)'}`);
      return;
    }
    const mod = route.backend_https ? https : http;
    const headers = rawToHeaders(filterRawHeaders(req.rawHeaders));
    const up = mod.request({
      host: route.target_lan_host,
      port: route.target_lan_port,
      method: req.method,
      path: req.url,
      headers,
      agent: this.agent(route),
      ...(route.backend_https ? { servername: route.domain.startsWith('*.') ? host : route.domain, rejectUnauthorized: false } : {}),
    });
    let connected = false;
    const connectTimer = setTimeout(() => {
      if (!connected) up.destroy(Object.assign(new Error('connect timeout'), { code: 'CONNECT_TIMEOUT' }));
    }, this.opts.connectTimeoutMs);
    up.on('socket', (s) => {
      const sock = s as net.Socket;
      if (!sock.connecting) {
        connected = true; // a pooled keep-alive socket
        clearTimeout(connectTimer);
      } else {
        sock.once(route.backend_https ? 'secureConnect' : 'connect', () => {
          connected = true;
          clearTimeout(connectTimer);
        });
      }
    });
    up.on('response', (ur) => {
      connected = true;
      clearTimeout(connectTimer);
      res.writeHead(ur.statusCode ?? 502, ur.statusMessage, filterRawHeaders(ur.rawHeaders));
      ur.pipe(res);
      ur.on('error', () => res.destroy());
    });
    up.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(connectTimer);
      const code = err.code ?? 'ERROR';
      if (!connected && CONNECT_ERRORS.has(code)) {
        this.lanErrors++;
        this.opts.log.debug('LAN target unreachable', { route_id: route.id, target: `${route.target_lan_host}:${route.target_lan_port}`, code });
        this.own(res, 502, `502 Bad Gateway: the LAN target of ${route.domain} (${route.target_lan_host}:${route.target_lan_port}) is unreachable (${code})`, {
          [LAN_ERROR_HEADER]: LAN_ERROR_VALUE,
        });
      } else {
        this.own(res, 502, `502 Bad Gateway: the LAN target of ${route.domain} failed (${code})`);
      }
    });
    req.on('aborted', () => up.destroy());
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  }

  private upgrade(req: http.IncomingMessage, client: Duplex, head: Buffer): void {
    const route = this.hosts.match(hostOf(req.headers.host));
    if (!route) {
      client.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const target = route.backend_https
      ? tls.connect({
          host: route.target_lan_host,
          port: route.target_lan_port,
          servername: route.domain.startsWith('*.') ? undefined : route.domain,
          rejectUnauthorized: false,
        })
      : net.connect({ host: route.target_lan_host, port: route.target_lan_port });
    let connected = false;
    const timer = setTimeout(() => target.destroy(new Error('connect timeout')), this.opts.connectTimeoutMs);
    target.once(route.backend_https ? 'secureConnect' : 'connect', () => {
      connected = true;
      clearTimeout(timer);
      // request line and headers as received (Connection/Upgrade kept: this is the upgrade itself)
      const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      target.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) target.write(head);
      target.pipe(client).pipe(target);
    });
    const fail = () => {
      clearTimeout(timer);
      if (!connected && client.writable)
        client.end(`HTTP/1.1 502 Bad Gateway\r\n${LAN_ERROR_HEADER}: ${LAN_ERROR_VALUE}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      if (connected) client.destroy();
      target.destroy();
    };
    target.on('error', fail);
    client.on('error', () => target.destroy());
    client.on('close', () => target.destroy());
  }
}
