// Messages of RDP routes, their sessions, credentials and Wake-on-LAN: refusals, reasons and activity rows.
import type { Catalogue, MessageRef } from './define.js';

export const rdp = {
  'rdp.not_connectable': (p: { name: string; access_mode: string }) =>
    `RDP route "${p.name}" has no address a client can connect to (its ${p.access_mode} settings are incomplete)`,
  'rdp.disabled': (p: { name: string }) => `RDP route "${p.name}" is disabled`,
  'rdp.maintenance': (p: { name: string; until: string; note: string | null }) =>
    `RDP route "${p.name}" is in a maintenance window until ${p.until}${p.note ? `: ${p.note}` : ''}`,
  'rdp.reenter_after_rotation': (p: { name: string }) => `RDP route "${p.name}": the credentials must be re-entered by an admin after a master-key rotation`,
  'rdp.one_time_key_invalid': () => 'Invalid one-time key',
  'rdp.field.not_rsa_key': () => 'not an RSA public key (base64 SPKI DER) usable with RSA-OAEP SHA-256',
  'rdp.field.rsa_bits': (p: { bits: number; min: number; max: number }) => `the RSA key has ${p.bits} bits; ${p.min} to ${p.max} are accepted`,
  'rdp.field.rsa_exponent': () => 'the RSA public exponent must be odd and at least 3',
  'rdp.credentials_old_key': () => 'The stored credentials were encrypted for a server key that is no longer current; an admin must re-enter them',
  'rdp.credentials_unreadable': () => 'The stored credentials cannot be opened with the server key; an admin must re-enter them',
  'rdp.field.no_server_key': () => 'no server key exists yet: encrypt with the key from GET /rdp/pubkey',
  'rdp.field.kid_not_current': (p: { kid: string; current: string }) =>
    `made for key ${p.kid}, which is not the current server key ${p.current}: encrypt again with the key from GET /rdp/pubkey`,
  'rdp.no_pending_rotation': (p: { name: string }) => `RDP route '${p.name}' has no pending credential rotation`,
  'rdp.credentials_retired_key': (p: { name: string; kid: string | null; id: number }) =>
    `The credentials of RDP route '${p.name}' were made for the retired key ${p.kid}: enter them again (PUT /rdp/${p.id}/credentials) before acknowledging`,
  'rdp.name_taken': (p: { name: string; id: number }) => `An RDP route named '${p.name}' already exists (id ${p.id})`,
  'rdp.no_wol': (p: { name: string }) => `RDP route "${p.name}" has no Wake-on-LAN`,
  'rdp.field.wol_not_enabled': () => 'Wake-on-LAN is not enabled on this RDP route',
  'rdp.no_mac': (p: { name: string }) => `RDP route "${p.name}" has no MAC address`,
  'rdp.field.set_wol_mac': () => 'set wol_mac on the RDP route first',
  'rdp.no_gateway': (p: { name: string }) => `RDP route "${p.name}" has no gateway`,
  'rdp.field.gateway_needed': () => 'a gateway-mode route needs its gateway peer',
  'rdp.magic_packet_failed': (p: { target: string; error: string }) => `The magic packet could not be sent to ${p.target}: ${p.error}`,
  // why a session ended (rdp_session_ended and the session history)
  'rdp.end.client': () => 'client',
  'rdp.end.lost': () => 'lost',
  'rdp.end.disconnected': () => 'disconnected',
  'rdp.end.route_disabled': () => 'route_disabled',
  'rdp.end.route_deleted': () => 'route_deleted',
  // activity
  'rdp.created': (p: { name: string; access_mode: string }) => `RDP route ${p.name} created (${p.access_mode})`,
  'rdp.updated': (p: { name: string }) => `RDP route ${p.name} updated`,
  'rdp.deleted': (p: { name: string }) => `RDP route ${p.name} deleted`,
  'rdp.toggled': (p: { name: string; enabled: boolean }) => `RDP route ${p.name} ${p.enabled ? 'enabled' : 'disabled'}`,
  'rdp.reachable': (p: { name: string; path: string; latency_ms: number | null }) =>
    `RDP route "${p.name}" is reachable again (${p.path}${p.latency_ms !== null ? `, ${p.latency_ms} ms` : ''})`,
  /** reason: the check's error as a message (rdp.check.paths); rows written before it carry only the English `error` */
  'rdp.unreachable': (p: { name: string; path: string; error: string | null; reason?: MessageRef | null }, w) =>
    `RDP route "${p.name}" is unreachable (${p.path}${p.reason ? `: ${w(p.reason)}` : p.error ? `: ${p.error}` : ''})`,
  'rdp.session_started': (p: { session_id: number; name: string; client_name: string | null }) =>
    `RDP session ${p.session_id} on "${p.name}" started${p.client_name ? ` by ${p.client_name}` : ''}`,
  'rdp.session_ended': (
    p: { session_id: number; name: string; reason: 'client' | 'lost' | 'disconnected' | 'route_disabled' | 'route_deleted'; duration_s: number },
    w,
  ) => `RDP session ${p.session_id} on "${p.name}" ended (${w({ code: `rdp.end.${p.reason}` })}) after ${p.duration_s} s`,
  'rdp.disconnect_requested': (p: { count: number; name: string; method: string; closed: number | null; error: string | null }) =>
    `Disconnect requested for ${p.count} active session(s) of RDP route "${p.name}"${p.method === 'gateway' ? (p.error ? `; the gateway could not close the live connections: ${p.error}` : `; the gateway closed ${p.closed} live connection(s)`) : ''}`,
  'rdp.wol_failed': (p: { name: string; error: string }) => `Wake-on-LAN for RDP route "${p.name}" failed: ${p.error}`,
  'rdp.wol_sent': (p: { name: string; mac: string; via: 'gateway' | 'direct'; sent_to: string[] }) =>
    `Wake-on-LAN packet for RDP route "${p.name}" (${p.mac}) sent ${p.via === 'gateway' ? 'through its gateway' : `to ${p.sent_to.join(', ')}`}`,
  'rdp.credentials_released': (p: { name: string; token_id: number | null; client_name: string | null }) =>
    `Credentials of RDP route "${p.name}" released to desktop client token #${p.token_id}${p.client_name ? ` on ${p.client_name}` : ''} (encrypted for its one-time key)`,
} satisfies Catalogue;
