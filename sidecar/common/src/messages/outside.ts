// What other parties answered (a webhook's receiver, the licence service, an RDP host or gateway, a
// route's upstream checked for uptime): each failure is a coded category, and the other party's
// own words, when there are any, are its `detail` parameter, shown as they came. The texts stored
// before codes (a delivery's last_error, a route check's error, the licence's last refresh error)
// are read back as their codes with readBack() (index.ts), so these English wordings are those texts.
import type { Catalogue, MessageRef, Words } from './define.js';

export const outside = {
  'webhook.delivery.status': (p: { status: number }) => `HTTP ${p.status}`,
  'webhook.delivery.timeout': (p: { ms: number }) => `timed out after ${p.ms} ms`,
  'webhook.delivery.dns': (p: { detail: string }) => `DNS: ${p.detail}`,
  'webhook.delivery.not_allowed': () => 'not allowed',
  'webhook.delivery.aborted': () => 'aborted',
  'webhook.delivery.invalid_url': () => 'invalid URL',
  'webhook.delivery.secret_unreadable': () => 'the secret cannot be opened with this master key; save the webhook with a new secret',
  'webhook.delivery.network': (p: { detail: string }) => p.detail,
  'licence.service.offline_invalid': () => 'the stored key does not verify with the trusted public keys',
  'licence.service.bad_key': (p: { detail: string }) => `the licence service answered a key that does not verify: ${p.detail}`,
  'licence.service.revoked': (p: { detail: string }) => `revoked by the licence service: ${p.detail}`,
  'licence.service.refused': (p: { detail: string }) => `the licence service refused the licence: ${p.detail}`,
  'licence.service.unreachable': (p: { detail: string }) => `the licence service cannot be reached: ${p.detail}`,
  'licence.service.no_key': () => 'the licence service answered HTTP 200 without a key',
  'licence.service.status_detail': (p: { status: number; detail: string }) => `the licence service answered HTTP ${p.status}: ${p.detail}`,
  'licence.service.status': (p: { status: number }) => `the licence service answered HTTP ${p.status}`,
  'licence.service.other': (p: { detail: string }) => p.detail,
  'route.check.timeout': (p: { s: number }) => `no answer within ${p.s} s`,
  'route.check.tcp_timeout': (p: { s: number }) => `no TCP connection within ${p.s} s`,
  'route.check.no_gateway_target': () => 'route has no gateway target',
  'route.check.gateway_not_found': () => 'gateway peer not found',
  'route.check.gateway_disabled': () => 'gateway peer disabled',
  'route.check.no_listen_port': () => 'route has no listen port',
  'route.check.network': (p: { detail: string }) => p.detail,
  // Caddy's admin API, when a configuration load or host change fails (GET /caddy/status
  // last_error_code): the category; Caddy's or the network's own words are `detail`, which the admin
  // app shows beside it (as `last_error`, the text itself)
  'caddy.error.rejected': (p: { status: number; detail: string }) => `Caddy refused the configuration (HTTP ${p.status})`,
  'caddy.error.unreachable': (_p: { detail: string }) => "Caddy's admin API is not reachable",
  'caddy.error.timeout': (p: { ms: number; detail: string }) => `Caddy's admin API did not answer within ${p.ms} ms`,
  'caddy.error.other': (_p: { detail: string }) => 'Loading the configuration into Caddy failed',
  'rdp.check.refused': () => 'connection refused',
  'rdp.check.timeout': (p: { ms: number }) => `no answer within ${p.ms} ms`,
  'rdp.check.host_unreachable': () => 'host unreachable',
  'rdp.check.not_resolved': () => 'name not resolved',
  'rdp.check.network': (p: { detail: string }) => p.detail,
  'rdp.check.no_address': () => 'no address for this path',
  'rdp.check.no_gateway': () => 'no gateway set',
  'rdp.check.gateway_error': (p: { detail: string }) => `gateway: ${p.detail}`,
  'rdp.check.gateway_down': (p: { name: string; status: string; reason: MessageRef }, w: Words) => `gateway "${p.name}" is ${p.status}: ${w(p.reason)}`,
  'rdp.check.no_linked_route': () => 'no linked L4 route',
  'rdp.check.not_reported': (p: { name: string; route_id: number }) => `gateway "${p.name}" has not reported the linked route ${p.route_id} yet`,
  'rdp.check.gateway_cannot_reach': (p: { name: string; host: string; port: number }) => `the gateway "${p.name}" cannot reach ${p.host}:${p.port}`,
  'rdp.check.unreachable': () => 'unreachable',
  'rdp.check.not_checked': () => 'not checked',
  'backup.target.not_allowed': () => 'not allowed',
  'backup.target.error': (p: { detail: string }) => p.detail,
  'rdp.check.paths': (p: { paths: { path: string; reason: MessageRef }[] }, w: Words) => p.paths.map((x) => `${x.path}: ${w(x.reason)}`).join('; '),
} satisfies Catalogue;
