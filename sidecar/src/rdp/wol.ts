// Wake-on-LAN for RDP routes (ctx.rdpWol). No Koa here.
//
// wake(): the magic packet (6 × 0xFF, then the MAC 16 times: 102 bytes) for the route's wol_mac
//   - gateway mode: through the route's gateway companion (ctx.gatewayWol.viaCompanion: the same
//     POST /wol on the companion API that HTTP gateway routes use), which broadcasts it on the LAN
//     subnet holding target_host;
//   - internal, external, both (a peer or a directly addressed host): sent by this server as UDP
//     unicast to target_host at GATEHOUSE_RDP_WOL_PORT (default 9, "discard"), 3 packets 100 ms apart.
//     For a target on a VPN peer's LAN the packet goes through the tunnel to that peer's address; a
//     host whose NIC only listens for broadcasts needs a directed-broadcast address as target_host or
//     a gateway-mode route.
// A wake starts a wake cycle (kept in memory, per route): state `pending` until the route's target
// answers (its reachability along the route's path, rdp/status.ts) → `awake`, or timeout_ms passes
// → `timeout`. status() is the poll: each call while pending checks reachability once (at most once
// a second), so the caller (admin UI) polls it every few seconds.
// 400 when the route has no Wake-on-LAN (wol_enabled false, or no wol_mac).
import { msg } from '@gatehouse/common/messages/index.js';
import type { Deps } from '../deps.js';
import { AppError } from '../util/errors.js';
import { sendMagicPackets } from '@gatehouse/common/wol.js';
import type { WolService } from '../gateways/wol.js';
import type { RdpRouteLike, RdpRouteSource, RdpStatus } from './status.js';
import type { z } from 'zod';
import type { wakeCycle } from './schema.js';

export const WOL_PACKETS = 3;
export const WOL_SPACING_MS = 100;
export const DEFAULT_WOL_TIMEOUT_MS = 120_000;
export const MAX_WOL_TIMEOUT_MS = 600_000;
/** status() checks reachability at most this often per route */
export const POLL_MIN_MS = 1000;

/** A route's wake cycle as GET/POST /rdp/:id/wol serve it (rdp/schema.ts wakeCycle). */
export type WakeCycle = z.output<typeof wakeCycle>;
export type WakeState = WakeCycle['state'];

const normMac = (mac: string) => mac.replace(/[:-]/g, '').toUpperCase().match(/../g)!.join(':');

/** Sends `count` magic packets for mac to host:port over UDP (unicast, or a directed broadcast); returns the bytes of one packet. */
export function sendMagicPacket(mac: string, host: string, port: number, count = WOL_PACKETS, spacingMs = WOL_SPACING_MS): Promise<number> {
  return sendMagicPackets(mac, [host], { port, count, spacingMs });
}

export class RdpWol {
  private cycles = new Map<number, WakeCycle>();

  constructor(
    private readonly deps: Deps,
    private readonly rdp: RdpRouteSource,
    private readonly status: RdpStatus,
    private readonly gatewayWol: WolService,
  ) {}

  private wolOf(route: RdpRouteLike): string {
    if (!route.wol_enabled) throw new AppError('conflict', msg('rdp.no_wol', { name: route.name }), { wol_enabled: msg('rdp.field.wol_not_enabled') });
    if (!route.wol_mac) throw new AppError('conflict', msg('rdp.no_mac', { name: route.name }), { wol_mac: msg('rdp.field.set_wol_mac') });
    return route.wol_mac;
  }

  /** Sends the magic packet (see the top of this file) and starts a wake cycle of timeout_ms. */
  async wake(routeId: number, opts: { timeout_ms?: number; actor?: number | null } = {}): Promise<WakeCycle> {
    const route = await this.rdp.get(routeId);
    const mac = this.wolOf(route);
    const timeout = Math.min(MAX_WOL_TIMEOUT_MS, opts.timeout_ms ?? DEFAULT_WOL_TIMEOUT_MS);
    const via = route.access_mode === 'gateway' ? 'gateway' : 'direct';
    let sent_to: string[];
    try {
      if (via === 'gateway') {
        if (!route.gateway_peer_id)
          throw new AppError('conflict', msg('rdp.no_gateway', { name: route.name }), { gateway_peer_id: msg('rdp.field.gateway_needed') });
        const { companion } = await this.gatewayWol.viaCompanion(route.gateway_peer_id, {
          mac,
          target_host: route.target_host,
          route_id: route.gateway_l4_route_id ?? undefined,
          count: WOL_PACKETS,
        });
        const to =
          companion && typeof companion === 'object' && Array.isArray((companion as { sent_to?: unknown }).sent_to)
            ? (companion as { sent_to: unknown[] }).sent_to.map(String)
            : [];
        sent_to = to.length ? to : [`gateway peer ${route.gateway_peer_id}`];
      } else {
        const port = this.deps.config.rdpOps.wolPort;
        try {
          await sendMagicPacket(mac, route.target_host, port);
        } catch (err) {
          throw new AppError('upstream', msg('rdp.magic_packet_failed', { target: `${route.target_host}:${port}`, error: (err as Error).message }));
        }
        sent_to = [`${route.target_host}:${port}`];
      }
    } catch (err) {
      if (err instanceof AppError && err.kind !== 'validation' && err.kind !== 'conflict') {
        await this.deps.activity.record({
          severity: 'warning',
          source: 'rdp',
          event_type: 'rdp_wol_failed',
          msg: msg('rdp.wol_failed', { name: route.name, error: err.message }),
          details: { rdp_route_id: route.id, mac: normMac(mac), via, error: err.message },
          user_id: opts.actor ?? null,
        });
      }
      throw err;
    }
    const now = this.deps.clock();
    const cycle: WakeCycle = {
      rdp_route_id: route.id,
      state: 'pending',
      via,
      mac: normMac(mac),
      sent_to,
      sent_at: now,
      timeout_ms: timeout,
      deadline: now + timeout,
      awake_at: null,
      last_check_at: null,
      latency_ms: null,
      last_error: null,
      last_error_code: null,
    };
    this.cycles.set(route.id, cycle);
    await this.deps.activity.record({
      source: 'rdp',
      event_type: 'rdp_wol_sent',
      msg: msg('rdp.wol_sent', { name: route.name, mac: cycle.mac, via, sent_to }),
      details: { rdp_route_id: route.id, mac: cycle.mac, via, sent_to, timeout_ms: timeout },
      user_id: opts.actor ?? null,
    });
    return { ...cycle };
  }

  /** The wake cycle of a route, polling the target's reachability once while it is pending (see the top). */
  async poll(routeId: number): Promise<WakeCycle> {
    const route = await this.rdp.get(routeId);
    const c = this.cycles.get(route.id);
    if (!c) {
      return {
        rdp_route_id: route.id,
        state: 'idle',
        via: route.access_mode === 'gateway' ? 'gateway' : 'direct',
        mac: route.wol_mac ? normMac(route.wol_mac) : '',
        sent_to: [],
        sent_at: 0,
        timeout_ms: 0,
        deadline: 0,
        awake_at: null,
        last_check_at: null,
        latency_ms: null,
        last_error: null,
        last_error_code: null,
      };
    }
    const now = this.deps.clock();
    if (c.state === 'pending' && (c.last_check_at === null || now - c.last_check_at >= POLL_MIN_MS)) {
      c.last_check_at = now;
      const s = await this.status.check(route);
      if (s.reachable) {
        c.state = 'awake';
        c.awake_at = this.deps.clock();
        c.latency_ms = s.latency_ms;
        c.last_error = null;
        c.last_error_code = null;
      } else {
        c.last_error = s.error;
        c.last_error_code = s.error_code;
        if (this.deps.clock() >= c.deadline) c.state = 'timeout';
      }
    } else if (c.state === 'pending' && now >= c.deadline) {
      c.state = 'timeout';
    }
    return { ...c };
  }
}
