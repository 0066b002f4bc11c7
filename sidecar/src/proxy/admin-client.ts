// A small client for Caddy's admin API (http://GATEHOUSE_CADDY_ADMIN, loopback only).
// POST /load replaces the whole configuration atomically: if Caddy rejects it, the previous one keeps
// serving and the error text comes back in {"error": "..."}. POST /gatehouse/hostroute/changes
// (caddy-modules/hostroute, admin.api.gatehouse_hostroute) puts and deletes single hosts of the
// running configuration's host maps, all or nothing, without a reload.
import http from 'node:http';
import { msg, type Msg } from '@gatehouse/common/messages/index.js';

export class CaddyAdminError extends Error {
  constructor(
    message: string,
    /** HTTP status from Caddy, or undefined when Caddy could not be reached. */
    public readonly status?: number,
  ) {
    super(message);
  }

  /** Caddy answered and refused (as opposed to: Caddy is not reachable). */
  get rejected(): boolean {
    return this.status !== undefined;
  }
}

/** The sign of a request this client gave up waiting for (see call()). */
const TIMEOUT = /timeout after (\d+) ms/;

/**
 * A failed load or change as a message: its coded category (caddy.error.*) with the error's own
 * text as `detail` (Caddy's reason, or the network's), which the admin app shows beside the worded
 * category. Gatehouse's status keeps the text as `last_error`.
 */
export function caddyErrorMessage(err: unknown): Msg {
  const detail = err instanceof Error ? err.message : String(err);
  if (!(err instanceof CaddyAdminError)) return msg('caddy.error.other', { detail });
  if (err.status !== undefined) return msg('caddy.error.rejected', { status: err.status, detail });
  const t = TIMEOUT.exec(detail);
  if (t) return msg('caddy.error.timeout', { ms: Number(t[1]), detail });
  return msg('caddy.error.unreachable', { detail });
}

export interface AdminClientOptions {
  /** Timeout of one /load (a 10,000-route config takes about a second). */
  loadTimeoutMs?: number;
  requestTimeoutMs?: number;
}

export class CaddyAdminClient {
  private readonly host: string;
  private readonly port: number;
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  private loadTimeoutMs: number;
  private requestTimeoutMs: number;

  constructor(
    readonly address: string,
    opts: AdminClientOptions = {},
  ) {
    const i = address.lastIndexOf(':');
    this.host = address.slice(0, i).replace(/^\[|\]$/g, '');
    this.port = Number(address.slice(i + 1));
    this.loadTimeoutMs = opts.loadTimeoutMs ?? 60_000;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 5_000;
  }

  // node:http rather than fetch: fetch sends Sec-Fetch-Mode, which makes Caddy's admin API apply
  // its browser (Origin) checks.
  private call(
    method: string,
    path: string,
    body: string | undefined,
    timeoutMs: number,
    extraHeaders: Record<string, string> = {},
  ): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: this.host,
          port: this.port,
          method,
          path,
          agent: this.agent,
          headers: {
            ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}),
            ...extraHeaders,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            clearTimeout(timer);
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
          });
          res.on('error', (err) => {
            clearTimeout(timer);
            reject(new CaddyAdminError(`Caddy admin API at ${this.address} is not reachable (${err.message})`));
          });
        },
      );
      const timer = setTimeout(() => req.destroy(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(new CaddyAdminError(`Caddy admin API at ${this.address} is not reachable (${err.code ?? err.message})`));
      });
      req.end(body);
    });
  }

  private static message(status: number, text: string): string {
    try {
      const j = JSON.parse(text) as { error?: string };
      if (j && typeof j.error === 'string') return j.error;
    } catch {
      /* plain text */
    }
    return text.trim() || `HTTP ${status}`;
  }

  /**
   * POST /load with the full configuration (an object, or its JSON text). Always applied
   * (`Cache-Control: must-revalidate`): after host changes, Caddy's copy of the last loaded JSON
   * no longer describes what runs, so "config is unchanged" must not skip the load.
   */
  async load(config: unknown): Promise<void> {
    const body = typeof config === 'string' ? config : JSON.stringify(config);
    const { status, text } = await this.call('POST', '/load', body, this.loadTimeoutMs, { 'cache-control': 'must-revalidate' });
    if (status !== 200) throw new CaddyAdminError(CaddyAdminClient.message(status, text), status);
  }

  /**
   * POST /gatehouse/hostroute/changes: puts and deletes hosts of the running host maps, all or
   * nothing (400 with Caddy's reason: nothing changed). Idempotent, so it is sent again once on a
   * connection closed before any answer (Caddy replaces its admin server at every /load) and on 503
   * (a full load replaced the configuration while the change was being applied).
   */
  async changes(body: unknown): Promise<Record<string, Record<string, string | null>>> {
    const text0 = JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      let res: { status: number; text: string };
      try {
        res = await this.call('POST', '/gatehouse/hostroute/changes', text0, this.loadTimeoutMs);
      } catch (err) {
        if (attempt < 2) continue;
        throw err;
      }
      if (res.status === 503 && attempt < 2) continue;
      if (res.status !== 200) throw new CaddyAdminError(CaddyAdminClient.message(res.status, res.text), res.status);
      return (JSON.parse(res.text) as { maps: Record<string, Record<string, string | null>> }).maps;
    }
  }

  /** GET /gatehouse/hostroute/maps/<map>/hosts: every host of a running host map with its hash (null: no such map). */
  async hostHashes(map: string): Promise<Record<string, string> | null> {
    const { status, text } = await this.call('GET', `/gatehouse/hostroute/maps/${encodeURIComponent(map)}/hosts`, undefined, this.loadTimeoutMs);
    if (status === 404) return null;
    if (status !== 200) throw new CaddyAdminError(CaddyAdminClient.message(status, text), status);
    return (JSON.parse(text) as { hosts: Record<string, string> }).hosts;
  }

  /** GET /config/: the running configuration (null when Caddy runs without one). */
  async getConfig(): Promise<unknown> {
    const { status, text } = await this.call('GET', '/config/', undefined, this.loadTimeoutMs);
    if (status !== 200) throw new CaddyAdminError(CaddyAdminClient.message(status, text), status);
    return text.trim() === '' ? null : JSON.parse(text);
  }

  /** Whether the running configuration has an object with this "@id" (GET /id/<id>). */
  async hasId(id: string): Promise<boolean> {
    const { status, text } = await this.call('GET', `/id/${encodeURIComponent(id)}`, undefined, this.requestTimeoutMs);
    if (status === 200) return true;
    if (status === 404) return false;
    throw new CaddyAdminError(CaddyAdminClient.message(status, text), status);
  }

  /** GET /metrics: Caddy's own Prometheus metrics (text format; the http app's need `apps.http.metrics`). */
  async metrics(timeoutMs = this.requestTimeoutMs): Promise<string> {
    const { status, text } = await this.call('GET', '/metrics', undefined, timeoutMs);
    if (status !== 200) throw new CaddyAdminError(CaddyAdminClient.message(status, text), status);
    return text;
  }

  /** True when the admin API answers at all. */
  async ping(timeoutMs = this.requestTimeoutMs): Promise<boolean> {
    try {
      await this.call('GET', '/config/admin', undefined, timeoutMs);
      return true;
    } catch {
      return false;
    }
  }
}
