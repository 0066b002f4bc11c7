// Messages of home gateways: refusals, the status reasons (as data in gateway-status.ts), activity rows.
import type { Catalogue, MessageRef } from './define.js';

const SELF_CHECK: Record<string, string> = { http_proxy: 'HTTP proxy', api: 'companion API', dns: 'DNS', tcp_listeners: 'TCP listeners' };

export const gateways = {
  'gateway.not_gateway_peer': (p: { peer_id: number }) => `Peer ${p.peer_id} is not a gateway peer (create it with is_gateway: true)`,
  'gateway.no_private_key': (p: { name: string }) => `Peer "${p.name}" has no stored private key, so no gateway.env can be built`,
  'gateway.no_tokens_yet': (p: { peer_id: number }) => `Gateway ${p.peer_id} has no tokens yet: rotate its gateway.env first`,
  'gateway.inactive': (p: { name: string }) => `Gateway "${p.name}" is disabled or expired`,
  'gateway.wake_failed': (p: { error: string }) => `The gateway companion could not be asked to wake the host: ${p.error}`,
  // the reasons of a heartbeat's verdict and of a status (gateways/state.ts)
  'gateway.health.lan_reachable': (p: { up: number; total: number }) => `${p.up}/${p.total} LAN targets reachable`,
  'gateway.health.lan_unreachable': (p: { total: number }) => `none of its ${p.total} LAN target${p.total === 1 ? ' is' : 's are'} reachable`,
  'gateway.health.self_check_passed': () => 'no routes; self-check passed',
  'gateway.health.self_check_failed': (p: { failed: string[] }) =>
    `no routes; self-check failed${p.failed.length ? ` (${p.failed.map((f) => SELF_CHECK[f] ?? f).join(', ')})` : ''}`,
  /** a verdict stored before verdicts were data: the companion's own words */
  'gateway.health.reported': (p: { detail: string }) => p.detail,
  'gateway.status.no_tokens': () => 'no tokens issued yet',
  'gateway.status.no_heartbeat': () => 'no heartbeat received yet',
  'gateway.status.heartbeat_stale': (p: { age_s: number; offline_after_s: number }) => `no heartbeat for ${p.age_s} s (offline after ${p.offline_after_s} s)`,
  'gateway.status.unhealthy': (p: { health: MessageRef | null }, w) =>
    `heartbeat received, but ${p.health ? w(p.health) : 'the gateway reports itself unhealthy'}`,
  /** a reason stored before reasons were data (old gateway events) that no code words: the stored text */
  'gateway.status.not_recorded': (p: { detail: string }) => p.detail,
  'gateway.status.healthy': (p: { health: MessageRef | null }, w) => (p.health ? w(p.health) : 'heartbeat received'),
  // activity
  'gateway.status_changed': (p: { name: string; to: 'online' | 'offline' | 'unknown'; from: 'online' | 'offline' | 'unknown'; reason: MessageRef }, w) =>
    `Gateway "${p.name}" is ${p.to} (was ${p.from}): ${w(p.reason)}`,
  'gateway.tokens_rotated': (p: { name: string }) => `Gateway "${p.name}": tokens rotated; the companion needs the new gateway.env`,
  'gateway.wol_failed': (p: { domain: string; name: string; error: string }) => `Wake-on-LAN for ${p.domain} through gateway "${p.name}" failed: ${p.error}`,
  'gateway.wol_sent': (p: { domain: string; mac: string; name: string }) => `Wake-on-LAN packet for ${p.domain} (${p.mac}) sent through gateway "${p.name}"`,
} satisfies Catalogue;
