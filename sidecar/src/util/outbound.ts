// Every request the server makes to a URL it was given (webhook deliveries and their test, branding
// images fetched by URL, the licence refresh, the S3 endpoint of auto-backups, every request to an
// OpenID Connect provider: discovery, keys, tokens, user info) goes through this one guard against
// request forgery (SSRF): such a request must not make the server call itself, loopback, or hosts on
// private networks (the admin API, Caddy's admin API on 127.0.0.1:2019, the peers' tunnel addresses,
// cloud metadata at 169.254.169.254, the LAN behind the server).
//
// - Only global unicast addresses are targets (ipaddr.js classifies them; every numeric form of an
//   IPv4 address is parsed: 127.1, 0x7f.1, 2130706433, 0177.0.0.1). IPv6 addresses that embed an IPv4
//   address are judged by that address: IPv4-compatible ::/96, mapped ::ffff:0:0/96, translated
//   ::ffff:0:0:0/96 and NAT64 64:ff9b::/96; local-use NAT64 64:ff9b:1::/48, 6to4 2002::/16 and Teredo
//   2001::/32 (whose embedded addresses reach relays and tunnels) are refused whole. The addresses of
//   this machine's interfaces and its configured public address are refused too.
// - A name is resolved once per connection; every address it resolves to is checked (one bad address
//   refuses the name), and the connection goes to the address just checked (the agents below pin it:
//   no second resolution between check and connect, so a DNS answer that changes in between —
//   rebinding — cannot get past). A literal address is checked before connecting.
// - Redirects are followed only where the caller allows it, each hop through the same check.
// - A refused target is reported as "not allowed" and nothing more (no address, status code, error
//   text or port: the guard must not become a scanner). Why, is kept in NotAllowed.reason for the log.
//
// Which uses may reach loopback, private ranges and this server anyway is the operator's explicit
// choice, GATEHOUSE_OUTBOUND_ALLOW_PRIVATE (a list of uses, config.ts; none by default), never something
// an API caller can change. GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=true is the older spelling for webhooks.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import type { Duplex } from 'node:stream';
import ipaddr from 'ipaddr.js';

/** The server-side fetches, each with its own policy (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE names them). */
export const OUTBOUND_USES = ['webhooks', 'branding', 'licence', 'backup_s3', 'oidc'] as const;
export type OutboundUse = (typeof OUTBOUND_USES)[number];

export interface Resolved {
  address: string;
  family: 4 | 6;
}
export type Lookup = (host: string) => Promise<Resolved[]>;
export const systemLookup: Lookup = async (host) =>
  (await dns.promises.lookup(host, { all: true, verbatim: true })).map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));

export interface OutboundPolicy {
  /** loopback, private ranges and this server allowed (the operator's choice for this use) */
  allowPrivate: boolean;
  /** this server's addresses besides its interfaces (its configured public address) */
  serverAddresses?: readonly string[];
  /** the resolver (default: the system's, as any other program on this machine resolves) */
  lookup?: Lookup;
}

/** A target the guard refuses. The message is all a caller may show; `reason` is for the log. */
export class NotAllowed extends Error {
  constructor(readonly reason: string) {
    super('not allowed');
    this.name = 'NotAllowed';
  }
}

/** Whether an error is (or wraps, as the S3 client does) a refusal of the guard. */
export function isNotAllowed(err: unknown): boolean {
  for (let e = err as { name?: string; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++)
    if (e instanceof NotAllowed || e.name === 'NotAllowed') return true;
  return false;
}

/** A request that failed for another reason (resolution, connection, time, size, too many redirects). */
export class FetchFailed extends Error {
  constructor(
    readonly reason: string,
    readonly kind: 'dns' | 'connect' | 'timeout' | 'too_large' | 'redirects' | 'protocol' = 'connect',
    readonly code?: string,
  ) {
    super('could not be fetched');
    this.name = 'FetchFailed';
  }
}

const EMBEDS_V4_AT_END = ['ipv4Mapped', 'rfc6145'];
const NAT64 = ipaddr.parseCIDR('64:ff9b::/96');
const COMPAT = ipaddr.parseCIDR('::/96');

/** The address an IP literal stands for, IPv4 forms parsed and IPv4-embedding IPv6 forms unwrapped; null when not an address. */
function effective(ip: string): { addr: ipaddr.IPv4 | ipaddr.IPv6; why?: string } | null {
  const raw = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(raw)) return null;
  const a = ipaddr.parse(raw);
  if (a.kind() === 'ipv4') return { addr: a };
  const v6 = a as ipaddr.IPv6;
  const range = v6.range();
  const embedded = () => {
    const p = v6.parts;
    return ipaddr.fromByteArray([p[6] >> 8, p[6] & 255, p[7] >> 8, p[7] & 255]) as ipaddr.IPv4;
  };
  if (EMBEDS_V4_AT_END.includes(range) || v6.match(NAT64) || (v6.match(COMPAT) && range !== 'unspecified' && range !== 'loopback')) return { addr: embedded() };
  return { addr: v6 };
}

let ownCache: { at: number; set: Set<string> } | null = null;
/** The addresses of this machine's interfaces (the server itself, also on public addresses), normalised; kept 10 s. */
function ownAddresses(): Set<string> {
  const now = Date.now();
  if (ownCache && now - ownCache.at < 10_000) return ownCache.set;
  const set = new Set<string>();
  for (const list of Object.values(os.networkInterfaces()))
    for (const i of list ?? []) {
      const e = effective(i.address);
      if (e) set.add(e.addr.toNormalizedString());
    }
  ownCache = { at: now, set };
  return set;
}

/** Why this address may not be a target, or null when it may (global unicast, not this server). */
export function addressProblem(ip: string, extra: readonly string[] = []): string | null {
  const e = effective(ip);
  if (!e) return `${ip} is not an IP address`;
  const { addr } = e;
  const range = addr.range();
  if (addr.kind() === 'ipv6' && (range === '6to4' || range === 'teredo' || range === 'rfc6052')) return `${ip} is a tunnel or translation address (${range})`;
  if (range !== 'unicast') return `${ip} is a ${range} address, not a global unicast one`;
  const norm = addr.toNormalizedString();
  if (ownAddresses().has(norm) || extra.some((x) => effective(x)?.addr.toNormalizedString() === norm)) return `${ip} is an address of this server`;
  return null;
}

/** Whether a host (name or literal, brackets allowed) is an IP literal in any form ipaddr.js reads (127.1 included). */
function literal(host: string): string | null {
  const h = host.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(h.replace(/%.*$/, '')) ? h : null;
}

/**
 * Resolves a host (or takes a literal) and checks every address; returns the addresses to connect to
 * (a literal in its plain form). Throws NotAllowed, or FetchFailed('dns') when the name does not resolve.
 */
export async function resolveAllowed(host: string, policy: OutboundPolicy): Promise<Resolved[]> {
  const lit = literal(host);
  let list: Resolved[];
  if (lit !== null) {
    const a = ipaddr.parse(lit.replace(/%.*$/, ''));
    list = [{ address: a.toString(), family: a.kind() === 'ipv6' ? 6 : 4 }];
  } else {
    try {
      list = await (policy.lookup ?? systemLookup)(host);
    } catch (err) {
      throw new FetchFailed(`${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, 'dns');
    }
    if (!list.length) throw new FetchFailed(`${host} does not resolve`, 'dns');
  }
  if (!policy.allowPrivate) {
    for (const r of list) {
      const p = addressProblem(r.address, policy.serverAddresses);
      if (p) throw new NotAllowed(lit !== null ? p : `${host} resolves to ${p}`);
    }
  }
  return list;
}

/** A lookup for node's net/tls that answers with addresses resolveAllowed has just checked (the connection is pinned to them). */
export function guardedLookup(policy: OutboundPolicy): net.LookupFunction {
  return ((hostname: string, options: dns.LookupOptions, callback: (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void) => {
    resolveAllowed(hostname, policy).then(
      (list) => {
        const fam = typeof options.family === 'number' ? options.family : 0;
        const pick = list.filter((r) => !fam || r.family === fam);
        if (!pick.length) return callback(Object.assign(new Error(`${hostname}: no IPv${fam} address`), { code: 'ENOTFOUND' }), '', 4);
        if (options.all)
          callback(
            null,
            pick.map((r) => ({ address: r.address, family: r.family })),
          );
        else callback(null, pick[0].address, pick[0].family);
      },
      (err: Error) => callback(err, '', 4),
    );
    // reason: net.LookupFunction is an overload set (one address, or all of them); one implementation serves both and TypeScript cannot match it to the set
  }) as unknown as net.LookupFunction;
}

type ConnectCallback = (err: Error | null, socket?: Duplex) => void;

/** The check of a connection's host: a literal is checked here, a name goes through the pinned lookup. */
function guardConnect(policy: OutboundPolicy, options: net.NetConnectOpts & { host?: string }): { error: NotAllowed } | { options: net.NetConnectOpts } {
  const host = options.host ?? 'localhost';
  const lit = literal(host);
  if (lit !== null) {
    if (!policy.allowPrivate) {
      const p = addressProblem(lit, policy.serverAddresses);
      if (p) return { error: new NotAllowed(p) };
    }
    // a literal in a form net does not take as an address (127.1, 0x7f.1) connects to its plain form
    return { options: { ...options, host: ipaddr.parse(lit.replace(/%.*$/, '')).toString() } as net.NetConnectOpts };
  }
  return { options: { ...options, lookup: guardedLookup(policy) } as net.NetConnectOpts };
}

/** An http.Agent whose every connection goes through the guard (no keep-alive unless asked). */
export class GuardedHttpAgent extends http.Agent {
  constructor(
    private readonly policy: OutboundPolicy,
    opts: http.AgentOptions = {},
  ) {
    super(opts);
  }
  override createConnection(options: net.NetConnectOpts, cb: ConnectCallback): Duplex | undefined {
    const g = guardConnect(this.policy, options);
    if ('error' in g) {
      process.nextTick(() => cb(g.error));
      return undefined;
    }
    // reason: @types/node does not declare Agent.prototype.createConnection, which the agent calls to open a socket
    return (http.Agent.prototype as unknown as { createConnection(o: unknown, c: unknown): Duplex }).createConnection.call(this, g.options, cb);
  }
}

/** An https.Agent whose every connection goes through the guard (certificates checked against the name as usual). */
export class GuardedHttpsAgent extends https.Agent {
  constructor(
    private readonly policy: OutboundPolicy,
    opts: https.AgentOptions = {},
  ) {
    super(opts);
  }
  override createConnection(options: net.NetConnectOpts, cb: ConnectCallback): Duplex | undefined {
    const g = guardConnect(this.policy, options);
    if ('error' in g) {
      process.nextTick(() => cb(g.error));
      return undefined;
    }
    // reason: @types/node does not declare Agent.prototype.createConnection, which the agent calls to open a socket
    return (https.Agent.prototype as unknown as { createConnection(o: unknown, c: unknown): Duplex }).createConnection.call(this, g.options, cb);
  }
}

export interface GuardedRequestOptions {
  policy: OutboundPolicy;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** for the whole request, redirects included */
  timeoutMs: number;
  /** the most bytes of the answer's body read */
  maxBytes: number;
  /** past maxBytes: 'fail' (FetchFailed too_large) or 'truncate' (keep what was read and hang up) */
  overflow?: 'fail' | 'truncate';
  /** how many redirects are followed (each hop checked again); 0: a 3xx is the answer */
  maxRedirects: number;
  signal?: AbortSignal;
}

export interface GuardedResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** the URL that answered (after redirects) */
  url: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function oneRequest(url: URL, o: GuardedRequestOptions, method: string, body: string | Buffer | undefined, signal: AbortSignal): Promise<GuardedResponse> {
  return new Promise<GuardedResponse>((resolve, reject) => {
    const agent = url.protocol === 'https:' ? new GuardedHttpsAgent(o.policy) : new GuardedHttpAgent(o.policy);
    const headers: Record<string, string> = { ...o.headers };
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      req.destroy();
      agent.destroy();
      reject(
        err instanceof NotAllowed || err instanceof FetchFailed
          ? err
          : signal.aborted
            ? new FetchFailed('timed out', 'timeout')
            : new FetchFailed(err.message, 'connect', (err as NodeJS.ErrnoException).code),
      );
    };
    const req = (url.protocol === 'https:' ? https : http).request(url, { method, headers, agent }, (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let size = 0;
      const declared = Number(res.headers['content-length'] ?? '0');
      const done = () => {
        if (settled) return;
        settled = true;
        res.destroy();
        agent.destroy();
        resolve({ status, headers: res.headers, body: Buffer.concat(chunks), url: url.href });
      };
      if (declared > o.maxBytes && o.overflow !== 'truncate') return fail(new FetchFailed(`larger than ${o.maxBytes} bytes`, 'too_large'));
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > o.maxBytes) {
          if (o.overflow === 'truncate') {
            chunks.push(c.subarray(0, c.length - (size - o.maxBytes)));
            return done();
          }
          return fail(new FetchFailed(`larger than ${o.maxBytes} bytes`, 'too_large'));
        }
        chunks.push(c);
      });
      res.on('end', done);
      res.on('error', fail);
      // closed before the end of the body: a failure, not a shorter answer
      res.on('close', () => (res.complete ? done() : fail(new FetchFailed('the connection closed before the end of the answer', 'connect'))));
    });
    req.on('error', fail);
    const onAbort = () => fail(new FetchFailed('timed out', 'timeout'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    req.end(body);
  });
}

/**
 * One request through the guard, following at most o.maxRedirects redirects (each hop checked again;
 * only http and https). Resolves with the answer (any status); throws NotAllowed or FetchFailed.
 */
export async function guardedRequest(target: string | URL, o: GuardedRequestOptions): Promise<GuardedResponse> {
  const signal = o.signal ? AbortSignal.any([o.signal, AbortSignal.timeout(o.timeoutMs)]) : AbortSignal.timeout(o.timeoutMs);
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new FetchFailed('not a URL', 'protocol');
  }
  let method = o.method ?? 'GET';
  let body = o.body;
  for (let hop = 0; ; hop++) {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new NotAllowed(`${url.protocol} is not http or https`);
    if (url.username || url.password) throw new NotAllowed('a URL with credentials');
    const res = await oneRequest(url, o, method, body, signal);
    const location = res.headers.location;
    if (!REDIRECTS.has(res.status) || !location || o.maxRedirects === 0) return res;
    if (hop >= o.maxRedirects) throw new FetchFailed(`more than ${o.maxRedirects} redirects`, 'redirects');
    try {
      url = new URL(location, url);
    } catch {
      throw new FetchFailed('a redirect to something that is not a URL', 'protocol');
    }
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
    }
  }
}

/**
 * A fetch-shaped function over guardedRequest, for code written against fetch (the licence
 * service): redirects are not followed (a 3xx is the answer), the answer's body at most maxBytes.
 */
export function guardedFetch(policy: OutboundPolicy, o: { maxBytes?: number; timeoutMs?: number } = {}): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const url = typeof input === 'string' || input instanceof URL ? input : input.url;
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    const body =
      init.body === undefined || init.body === null
        ? undefined
        : typeof init.body === 'string'
          ? init.body
          : Buffer.from(await new Response(init.body).arrayBuffer());
    let res: GuardedResponse;
    try {
      res = await guardedRequest(url, {
        policy,
        method: init.method,
        headers,
        body,
        timeoutMs: o.timeoutMs ?? 30_000,
        maxBytes: o.maxBytes ?? 1 << 20,
        maxRedirects: 0,
        signal: init.signal ?? undefined,
      });
    } catch (err) {
      // as fetch fails: a TypeError whose cause says why (a refused target: "not allowed", nothing more)
      const cause = err instanceof NotAllowed ? { message: 'not allowed' } : err instanceof FetchFailed ? { code: err.code, message: err.reason } : err;
      throw new TypeError('fetch failed', { cause });
    }
    const h = new Headers();
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) for (const one of Array.isArray(v) ? v : [v]) h.append(k, one);
    return new Response(res.status === 204 || res.status === 304 ? null : new Uint8Array(res.body), { status: res.status, headers: h });
  }) as typeof fetch;
}

/** The policy of one use: private targets only where the operator named the use in GATEHOUSE_OUTBOUND_ALLOW_PRIVATE. */
export function policyFor(
  use: OutboundUse,
  config: { outbound: { allowPrivate: readonly OutboundUse[] }; publicIp?: string | null },
  lookup?: Lookup,
): OutboundPolicy {
  return { allowPrivate: config.outbound.allowPrivate.includes(use), serverAddresses: config.publicIp ? [config.publicIp] : [], lookup };
}
