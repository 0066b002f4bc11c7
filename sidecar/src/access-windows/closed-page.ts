// The closed page: what a route outside its access window answers (403), served to Caddy only
// (proxy/fragments/access-window.ts renders the closed host as a reverse_proxy to it). Only a
// loopback peer (or this host's own listening address) that sends the report secret of
// <dataDir>/caddy-report.secret (the circuit breaker's, resilience/breaker.ts) is answered;
// anything else gets a plain 404. Each answer is counted for the route.
import crypto from 'node:crypto';
import type http from 'node:http';
import net from 'node:net';
import type { FastPath } from '../feature.js';
import { CLOSED_PAGE_PATH } from '../proxy/fragments/access-window.js';
import type { AccessWindowsService } from './service.js';
import { nextChange, parseSchedule } from './schedule.js';
import type { AccessSchedule } from './schema.js';
import { closedPageHtml, localTime } from './text.js';

function isLocal(req: http.IncomingMessage): boolean {
  const sock = req.socket;
  if (sock.remoteAddress !== undefined && sock.remoteAddress === sock.localAddress) return true;
  const a = sock.remoteAddress?.startsWith('::ffff:') ? sock.remoteAddress.slice(7) : (sock.remoteAddress ?? '');
  return net.isIPv4(a) ? a.startsWith('127.') : a === '::1';
}

const wantsJson = (accept: string) => /application\/([a-z.+-]*\+)?json/i.test(accept) && !/text\/html/i.test(accept);
const german = (lang: string) => /^\s*de([-;,\s]|$)/i.test(lang);

export interface ClosedPageOptions {
  secret: string;
  windows: () => AccessWindowsService;
  /** the route's schedule (null: none, or no such route) */
  scheduleOf: (routeId: number) => Promise<AccessSchedule | null>;
  clock: () => number;
}

export function closedPageFastPath(o: ClosedPageOptions): FastPath {
  const secret = Buffer.from(o.secret);
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== CLOSED_PAGE_PATH) return false;
    const got = Buffer.from(String(req.headers['x-gatehouse-secret'] ?? ''));
    const id = Number(req.headers['x-gatehouse-route-id']);
    if (!isLocal(req) || got.length !== secret.length || !crypto.timingSafeEqual(got, secret) || !Number.isSafeInteger(id) || id <= 0) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not Found\n');
      return true;
    }
    void (async () => {
      const schedule = parseSchedule(await o.scheduleOf(id));
      const opensAt = schedule ? nextChange(schedule, o.clock()) : null;
      o.windows().countClosed(id);
      const headers = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' };
      if (wantsJson(String(req.headers.accept ?? ''))) {
        const opens = opensAt === null ? null : new Date(opensAt).toISOString();
        const message = opensAt !== null && schedule ? `Closed; it opens again on ${localTime(opensAt, schedule, 'en')}` : 'Closed';
        res
          .writeHead(403, { ...headers, 'Content-Type': 'application/json' })
          .end(`${JSON.stringify({ ok: false, error: 'access_window_closed', message, opens_at: opens })}\n`);
        return;
      }
      const lang = german(String(req.headers['accept-language'] ?? '')) ? 'de' : 'en';
      res.writeHead(403, { ...headers, 'Content-Type': 'text/html; charset=utf-8' }).end(closedPageHtml(schedule, opensAt, lang));
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Error\n');
    });
    return true;
  };
}
