// The companion API (GATEWAY_API_PORT on the tunnel address), called by the server with the push
// token (Authorization: Bearer <GATEWAY_PUSH_TOKEN>):
//   GET  /health    no auth: {ok, version} (container health checks)
//   GET  /status    the companion's state: config hash, listeners, server connectivity, last heartbeat
//   POST /wol       {mac, target_host?, route_id?, count?}: send the Wake-on-LAN magic packet on the LAN
//   POST /refresh   check the server for a new configuration now
//   POST /disconnect {route_id}: close every live connection of that route's TCP listener (RDP
//                   disconnect-all in gateway mode); answers {route_id, closed}
// Bodies are JSON, at most 16 KB; answers follow the server's {ok, ...} / {ok:false, error, fields?}.
import crypto from 'node:crypto';
import http from 'node:http';
import { z } from 'zod';
import { disconnectRequestSchema, wolRequestSchema } from '@gatehouse/common/gateway-protocol.js';
import type { Logger } from '@gatehouse/common/json-log.js';
import { gatewayVersion } from './telemetry.js';
import type { WolResult } from './wol.js';
import { listenOn } from './listen.js';

export interface ApiHandlers {
  status(): Record<string, unknown>;
  wol(req: z.infer<typeof wolRequestSchema>): Promise<WolResult>;
  refresh(): void;
  /** closes the live connections of a route's listener; how many */
  disconnect(routeId: number): number;
}

const MAX_BODY = 16 * 1024;

function digest(s: string): Buffer {
  return crypto.createHash('sha256').update(s).digest();
}

export class CompanionApi {
  readonly server: http.Server;
  private readonly expected: Buffer;

  constructor(
    pushToken: string,
    private readonly h: ApiHandlers,
    private readonly log: Logger,
  ) {
    this.expected = digest(pushToken);
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        this.log.error('companion API error', { err: String(err) });
        this.send(res, 500, { ok: false, error: 'internal error' });
      });
    });
  }

  listen(port: number, host: string): Promise<void> {
    return listenOn(this.server, port, host);
  }

  close(): Promise<void> {
    return new Promise((r) => {
      this.server.close(() => r());
      this.server.closeAllConnections();
    });
  }

  private send(res: http.ServerResponse, status: number, body: unknown): void {
    if (res.headersSent) return;
    res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(JSON.stringify(body));
  }

  private authorized(req: http.IncomingMessage): boolean {
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    return !!m && crypto.timingSafeEqual(digest(m[1]), this.expected);
  }

  private async body(req: http.IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > MAX_BODY) throw Object.assign(new Error('body too large'), { status: 413 });
      chunks.push(c as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (!text) return {};
    try {
      return JSON.parse(text);
    } catch {
      throw Object.assign(new Error('body is not JSON'), { status: 400 });
    }
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://companion');
    const route = `${req.method} ${url.pathname}`;
    if (route === 'GET /health') return this.send(res, 200, { ok: true, version: gatewayVersion() });
    if (!['GET /status', 'POST /wol', 'POST /refresh', 'POST /disconnect'].includes(route))
      return this.send(res, 404, { ok: false, error: `No such endpoint: ${route}` });
    if (!this.authorized(req)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return this.send(res, 401, { ok: false, error: 'A valid push token is required' });
    }
    if (route === 'GET /status') return this.send(res, 200, { ok: true, ...this.h.status() });
    if (route === 'POST /refresh') {
      this.h.refresh();
      return this.send(res, 202, { ok: true });
    }
    let raw: unknown;
    try {
      raw = await this.body(req);
    } catch (err) {
      return this.send(res, (err as { status?: number }).status ?? 400, { ok: false, error: (err as Error).message });
    }
    const invalid = (error: z.ZodError) => {
      const fields: Record<string, string> = {};
      for (const i of error.issues) fields[i.path.join('.') || '_'] ??= i.message;
      return this.send(res, 400, { ok: false, error: 'Validation failed', fields });
    };
    if (route === 'POST /disconnect') {
      const d = disconnectRequestSchema.safeParse(raw);
      if (!d.success) return invalid(d.error);
      const closed = this.h.disconnect(d.data.route_id);
      this.log.info("Live connections closed on the server's request", { route_id: d.data.route_id, closed });
      return this.send(res, 200, { ok: true, route_id: d.data.route_id, closed });
    }
    const parsed = wolRequestSchema.safeParse(raw);
    if (!parsed.success) return invalid(parsed.error);
    try {
      const r = await this.h.wol(parsed.data);
      this.log.info('Wake-on-LAN packet sent', { ...r, route_id: parsed.data.route_id ?? null });
      return this.send(res, 200, { ok: true, ...r });
    } catch (err) {
      this.log.warn('Wake-on-LAN failed', { err: String(err) });
      return this.send(res, 502, { ok: false, error: `sending the magic packet failed: ${(err as Error).message}` });
    }
  }
}
