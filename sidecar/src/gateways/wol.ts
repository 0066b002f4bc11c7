// Wake-on-LAN for gateway routes (ctx.gatewayWol).
//
// The server never sends magic packets itself: the LAN host sits behind a gateway. wake() asks the
// route's companion, through its API on the tunnel (POST http://<gateway tunnel ip>:<api_port>/wol,
// Authorization: Bearer <push token>), to broadcast the packet on the LAN that holds the target.
//
// The visitor's side ("waking up" page): for an HTTP gateway route with wol_enabled, the companion
// answers a request it cannot deliver (LAN target refuses, is unreachable or times out) with 502
// and the header X-Gatehouse-Gateway-Error: lan-unreachable. Caddy's reverse_proxy for that route
// has a handle_response for exactly that answer which hands the request to this sidecar's
// GET /gateway-wol/wait (header X-Gatehouse-Wol-Route: <route id>). waitPage() then:
//   - starts a wake cycle for the route (first request) and sends the packet at once,
//   - re-sends it at most every RESEND_MS while the cycle runs (a lost UDP packet is not fatal),
//   - answers 503 + Retry-After with an HTML page that reloads the original URL every few seconds
//     (JSON for non-browser clients), so the visitor lands on the real site as soon as the host
//     answers (the companion then proxies normally and Caddy never calls us again),
//   - after GATEHOUSE_GATEWAY_WOL_TIMEOUT answers 504 "did not wake up" without reloading; a visit
//     after a cool-down of COOLDOWN_MS starts a new cycle.
// A heartbeat that reports the route reachable ends its cycle.
import { msg } from '@gatehouse/common/messages/index.js';
import type { Deps } from '../deps.js';
import type { PeerRow } from '../peers/model.js';
import { AppError, notFound } from '../util/errors.js';
import { escapeHtml } from '../web/index.js';
import { isActive } from '../peers/view.js';
import { rowToRoute, type Route } from '../routes/model.js';
import type { GatewaysService } from './service.js';
import type { WolRequest } from '@gatehouse/common/gateway-protocol.js';
import { findRowByPk } from '../db/define.js';
import type { WakeResult } from '../routes/schema.js';

export const RESEND_MS = 15_000;
export const COOLDOWN_MS = 30_000;
export const REFRESH_S = 5;

interface Cycle {
  startedAt: number;
  lastSentAt: number;
  sends: number;
  lastError: string | null;
}

export interface Page {
  status: number;
  type: string;
  body: string;
  headers: Record<string, string>;
}

export class WolService {
  private cycles = new Map<number, Cycle>();

  constructor(
    private readonly deps: Deps,
    private readonly gateways: GatewaysService,
  ) {
    gateways.onRouteReachable((id) => this.cycles.delete(id));
  }

  private async gatewayRoute(routeId: number): Promise<{ route: Route; peer: PeerRow }> {
    const row = await findRowByPk(this.deps.db.models.Route, routeId, {});
    if (!row) throw notFound(msg('resource.not_found', { what: 'Route' }));
    const route = rowToRoute(row);
    if (route.target_kind !== 'gateway' || route.target_peer_id === null)
      throw new AppError('conflict', msg('route.not_gateway', { route_id: routeId }), { id: msg('route.field.wol_gateway_only') });
    if (!route.wol_mac) throw new AppError('conflict', msg('route.no_mac', { route_id: routeId }), { wol_mac: msg('route.field.set_wol_mac') });
    const peer = await findRowByPk(this.deps.db.models.Peer, route.target_peer_id, {});
    if (!peer) throw notFound(msg('resource.not_found', { what: 'Gateway peer' }));
    return { route, peer };
  }

  /**
   * POST /wol on a gateway's companion (Authorization: Bearer <push token>): it sends the magic packet
   * for `mac` on its LAN (to the broadcast address of the subnet holding target_host). Also used by
   * RDP routes in gateway mode (rdp/wol.ts). Throws AppError 'upstream' when the companion cannot be
   * asked or refuses, 'conflict' when the gateway is disabled or expired.
   */
  async viaCompanion(peerId: number, body: WolRequest): Promise<{ peer: PeerRow; companion: unknown }> {
    const peer = await this.gateways.gatewayPeer(peerId);
    if (!isActive(peer, this.deps.clock())) throw new AppError('conflict', msg('gateway.inactive', { name: peer.name }));
    const push = await this.gateways.pushToken(peer.id);
    const url = `http://${peer.address}:${this.gateways.apiPortOf(peer)}/wol`;
    let companion: unknown;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${push}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(5000),
      });
      companion = await res.json().catch(() => null);
      if (!res.ok)
        throw new Error(
          `companion answered ${res.status}${companion && typeof companion === 'object' && 'error' in companion ? `: ${String((companion as { error: unknown }).error)}` : ''}`,
        );
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new AppError('upstream', msg('gateway.wake_failed', { error: reason }));
    }
    return { peer, companion };
  }

  /** Asks the route's companion to send the magic packet for the route's MAC. */
  async wake(routeId: number, opts: { actor?: number; trigger: 'admin' | 'visitor' }): Promise<WakeResult> {
    const { route, peer } = await this.gatewayRoute(routeId);
    if (!isActive(peer, this.deps.clock())) throw new AppError('conflict', msg('gateway.inactive', { name: peer.name }));
    const body = { mac: route.wol_mac as string, target_host: route.target_lan_host ?? undefined, route_id: route.id, count: 3 };
    let companion: unknown;
    try {
      companion = (await this.viaCompanion(peer.id, body)).companion;
    } catch (err) {
      const reason =
        err instanceof AppError && err.msg.code === 'gateway.wake_failed'
          ? String((err.msg.params as { error?: string } | undefined)?.error)
          : err instanceof Error
            ? err.message
            : String(err);
      await this.deps.activity.record({
        severity: 'warning',
        source: 'gateways',
        event_type: 'gateway_wol_failed',
        msg: msg('gateway.wol_failed', { domain: route.domain, name: peer.name, error: reason }),
        details: { route_id: route.id, peer_id: peer.id, mac: route.wol_mac, trigger: opts.trigger, error: reason },
        user_id: opts.actor ?? null,
      });
      throw err;
    }
    const sentAt = this.deps.clock();
    await this.deps.activity.record({
      source: 'gateways',
      event_type: 'gateway_wol_sent',
      msg: msg('gateway.wol_sent', { domain: route.domain, mac: String(route.wol_mac), name: peer.name }),
      details: { route_id: route.id, peer_id: peer.id, mac: route.wol_mac, trigger: opts.trigger },
      user_id: opts.actor ?? null,
    });
    return { route_id: route.id, gateway_peer_id: peer.id, mac: route.wol_mac as string, sent_at: sentAt, companion };
  }

  /** The state of a route's wake cycle (for the admin view and tests). */
  cycle(routeId: number): (Cycle & { timeout_ms: number }) | null {
    const c = this.cycles.get(routeId);
    return c ? { ...c, timeout_ms: this.deps.config.gateways.wolTimeoutMs } : null;
  }

  /** What a visitor of a sleeping WoL route sees (see the top of this file). */
  async waitPage(routeIdHeader: string | undefined, wantsHtml: boolean): Promise<Page> {
    const routeId = Number(routeIdHeader);
    if (!Number.isInteger(routeId) || routeId <= 0)
      return this.page(400, wantsHtml, 'Bad request', 'This page is only reached through a Wake-on-LAN route.', false);
    let route: Route;
    try {
      route = (await this.gatewayRoute(routeId)).route;
    } catch {
      return this.page(404, wantsHtml, 'Unknown route', 'This route does not exist or has no Wake-on-LAN target.', false);
    }
    if (!route.wol_enabled || !route.enabled) return this.page(502, wantsHtml, 'Host unreachable', `${route.domain} is not answering right now.`, false);
    const now = this.deps.clock();
    const timeout = this.deps.config.gateways.wolTimeoutMs;
    let c = this.cycles.get(routeId);
    if (!c || now - c.startedAt > timeout + COOLDOWN_MS) {
      c = { startedAt: now, lastSentAt: 0, sends: 0, lastError: null };
      this.cycles.set(routeId, c);
    }
    const elapsed = now - c.startedAt;
    if (elapsed > timeout) {
      return this.page(
        504,
        wantsHtml,
        `${route.domain} did not wake up`,
        `The host was sent ${c.sends} Wake-on-LAN packet${c.sends === 1 ? '' : 's'} but did not answer within ${Math.round(timeout / 1000)} seconds.${c.lastError ? ` Last error: ${c.lastError}.` : ''} Try again in a minute.`,
        false,
      );
    }
    if (now - c.lastSentAt >= RESEND_MS) {
      c.lastSentAt = now;
      try {
        await this.wake(routeId, { trigger: 'visitor' });
        c.sends++;
        c.lastError = null;
      } catch (err) {
        c.lastError = err instanceof Error ? err.message : String(err);
      }
    }
    const left = Math.max(0, Math.ceil((timeout - elapsed) / 1000));
    return this.page(
      503,
      wantsHtml,
      `Waking up ${route.domain}…`,
      c.sends > 0
        ? `The host is asleep. A Wake-on-LAN packet was sent ${Math.round(elapsed / 1000)} s ago; this page reloads every ${REFRESH_S} seconds and shows the site as soon as it answers (giving up in ${left} s).`
        : `The host is asleep and could not be woken yet (${c.lastError ?? 'no packet sent'}); retrying every ${REFRESH_S} seconds (giving up in ${left} s).`,
      true,
    );
  }

  private page(status: number, html: boolean, title: string, text: string, refresh: boolean): Page {
    const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
    if (refresh) headers['Retry-After'] = String(REFRESH_S);
    if (!html) {
      return {
        status,
        type: 'application/json; charset=utf-8',
        headers,
        body: JSON.stringify({ ok: false, error: `${title}: ${text}`, waking: refresh, retry_after: refresh ? REFRESH_S : undefined }),
      };
    }
    const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">${
      refresh ? `<meta http-equiv="refresh" content="${REFRESH_S}">` : ''
    }<title>${escapeHtml(title)}</title><style>body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1d2330;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}main{background:#fff;padding:2rem 2.4rem;border-radius:8px;box-shadow:0 2px 12px rgba(0,0,0,.08);max-width:480px;text-align:center}h1{font-size:1.3rem}.spin{width:36px;height:36px;margin:1rem auto;border:4px solid #d8dde6;border-top-color:#2456d3;border-radius:50%;animation:s 1s linear infinite}@keyframes s{to{transform:rotate(360deg)}}a{color:#2456d3}</style></head><body><main>${
      refresh ? '<div class="spin" aria-hidden="true"></div>' : ''
    }<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>${refresh ? '' : '<p><a href="">Try again</a></p>'}</main></body></html>`;
    return { status, type: 'text/html; charset=utf-8', headers, body };
  }
}
