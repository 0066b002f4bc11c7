// Circuit breaker, sidecar side (the breaker itself is the gatehouse_circuit_breaker Caddy module,
// rendered by proxy/fragments/resilience.ts; its README documents the closed → open → half-open cycle).
//
// - POST /internal/circuit-breaker: Caddy's state reports. Not an admin endpoint and not public in
//   practice: only a loopback peer (or this host's own listening address) that sends the secret of
//   <dataDir>/caddy-report.secret in X-Gatehouse-Secret is heard; everything else gets 404 as if the
//   path did not exist. Stores cb_failure_count / cb_opened_at on the route WITHOUT a proxy reload
//   (the renderer pins seeds in memory: proxy/breaker.ts).
// - POST /api/v1/routes/:id/circuit-breaker/reset: zeroes the stored state and re-renders with
//   reset_at = now (400 when the breaker is not enabled on the route). Licence feature circuit_breaker (the endpoint's `feature`, enforced by http/app.ts).
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { z } from 'zod';
import type Koa from 'koa';
import type { Database } from '../db/index.js';
import type { ActivityLog } from '../logs/activity.js';
import type { EventBus } from '../events.js';
import { breakerSecretPath } from '../proxy/fragments/resilience.js';
import type { ProxyService } from '../proxy/service.js';
import { rowToRoute, type RouteRow } from '../routes/model.js';
import type { BreakerReset } from '../routes/schema.js';
import type { Clock } from '../util/clock.js';
import { AppError, notFound } from '../util/errors.js';

export const BREAKER_SECRET_HEADER = 'x-gatehouse-secret';

/** Creates the report secret (32 random bytes, base64url, mode 0600) if missing; returns it. */
export function ensureBreakerSecret(dataDir: string): string {
  const file = breakerSecretPath(dataDir);
  try {
    const s = fs.readFileSync(file, 'utf8').trim();
    if (s.length >= 32) {
      fs.chmodSync(file, 0o600);
      return s;
    }
  } catch {
    /* missing: create */
  }
  const secret = crypto.randomBytes(32).toString('base64url');
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, secret + '\n', { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return secret;
}

export const breakerReport = z.strictObject({
  route_id: z.string().regex(/^[1-9]\d{0,9}$/),
  state: z.enum(['closed', 'open', 'half_open']),
  failure_count: z.number().int().min(0).max(1e9),
  opened_at: z.number().int().min(0),
  at: z.number().int().min(0),
});

function isLoopback(addr: string | undefined): boolean {
  if (!addr) return false;
  const a = addr.startsWith('::ffff:') ? addr.slice(7) : addr;
  if (net.isIPv4(a)) return a.startsWith('127.');
  return a === '::1';
}

export interface BreakerServiceOptions {
  db: Database;
  clock: Clock;
  activity: ActivityLog;
  /** circuit_open / circuit_closed (the activity rows come from them) */
  events: EventBus;
  proxy: ProxyService;
  secret: string;
}

export class BreakerService {
  /** Newest report time per route (reports are ordered per route; drop older ones). */
  private lastAt = new Map<number, number>();
  private readonly secret: Buffer;
  reports = 0;

  constructor(private readonly o: BreakerServiceOptions) {
    this.secret = Buffer.from(o.secret);
  }

  /** Whether a request may report: loopback (or same-host) peer and the right secret. */
  authorized(ctx: Koa.Context): boolean {
    const sock = ctx.req.socket;
    const local = sock.remoteAddress !== undefined && sock.remoteAddress === sock.localAddress;
    if (!isLoopback(sock.remoteAddress) && !local) return false;
    const got = Buffer.from(ctx.get(BREAKER_SECRET_HEADER) ?? '');
    return got.length === this.secret.length && crypto.timingSafeEqual(got, this.secret);
  }

  /** Stores a report; no proxy reload. Returns whether it was applied. */
  async report(r: z.infer<typeof breakerReport>): Promise<boolean> {
    const id = Number(r.route_id);
    const prev = this.lastAt.get(id);
    if (prev !== undefined && r.at < prev) return false;
    this.lastAt.set(id, r.at);
    const opened = r.state === 'closed' ? null : r.opened_at || null;
    // only a closing report needs the stored opened_at (to log how long the breaker was open)
    const before =
      r.state === 'closed'
        ? ((await this.o.db.models.Route.findByPk(id, { attributes: ['cb_opened_at'], raw: true })) as { cb_opened_at: number | string | null } | null)
        : null;
    const [n] = await this.o.db.models.Route.update(
      { cb_failure_count: r.failure_count, cb_opened_at: opened },
      { where: { id, circuit_breaker_enabled: true } },
    );
    this.reports++;
    if (n && r.state === 'open') {
      await this.o.events.emit({ type: 'circuit_open', route_id: id, failure_count: r.failure_count });
    } else if (n && r.state === 'closed' && before?.cb_opened_at != null) {
      // a successful trial request after the timeout: the backend is back
      const openS = Math.max(0, Math.round((r.at - Number(before.cb_opened_at)) / 1000));
      await this.o.events.emit({ type: 'circuit_closed', route_id: id, open_seconds: openS });
    }
    return n > 0;
  }

  /** Zeroes the state and re-renders with reset_at = now (applied once by the module). */
  async reset(id: number, actor?: number): Promise<BreakerReset> {
    const now = this.o.clock();
    const route = await this.o.proxy.transact(async (t, changes) => {
      changes.routes(id);
      const row = (await this.o.db.models.Route.findByPk(id, { raw: true, transaction: t })) as RouteRow | null;
      if (!row) throw notFound(msg('resource.not_found', { what: 'Route' }));
      const r = rowToRoute(row);
      if (!r.circuit_breaker_enabled)
        throw new AppError('conflict', msg('route.breaker_not_enabled'), { circuit_breaker_enabled: msg('route.field.breaker_must_be_enabled') });
      await this.o.db.models.Route.update({ cb_failure_count: 0, cb_opened_at: null }, { where: { id }, transaction: t });
      this.o.proxy.breakers.reset(id, now);
      return r;
    });
    this.lastAt.set(id, now);
    await this.o.activity.record({
      source: 'routes',
      event_type: 'circuit_breaker_reset',
      msg: msg('route.breaker_reset', { domain: route.domain }),
      details: { route_id: id },
      user_id: actor,
    });
    return { route_id: id, cb_failure_count: 0, cb_opened_at: null, reset_at: new Date(now).toISOString() };
  }
}
