// Which fields an RDP route's access mode makes required. One rule for the create body's schema
// (rdp/schema.ts: every missing field of an empty form comes back in one answer, beside the others)
// and the service's check of the merged route (rdp/service.ts).
import { msg, type Msg } from '@gatehouse/common/messages/index.js';

/** What the rule reads of an RDP route or a create body (null, undefined and '' are all missing). */
export interface ModeFields {
  access_mode?: unknown;
  target_host?: unknown;
  target_peer_id?: unknown;
  external_host?: unknown;
  gateway_peer_id?: unknown;
  listen_port?: unknown;
  wol_enabled?: unknown;
  wol_mac?: unknown;
}

const missing = (v: unknown) => v === null || v === undefined || v === '';

/** The fields required by the route's access mode (and by Wake-on-LAN) that r lacks, each with its message. */
export function missingForMode(r: ModeFields): Record<string, Msg> {
  const f: Record<string, Msg> = {};
  switch (r.access_mode) {
    case 'internal':
      if (missing(r.target_host) && missing(r.target_peer_id)) f.target_host = msg('rdp.field.target_required_internal');
      break;
    case 'external':
      if (missing(r.target_host)) f.target_host = msg('rdp.field.target_required_external');
      break;
    case 'both':
      if (missing(r.target_host) && missing(r.target_peer_id)) f.target_host = msg('rdp.field.target_required_both');
      if (missing(r.external_host)) f.external_host = msg('rdp.field.external_host_required');
      break;
    case 'gateway':
      if (missing(r.gateway_peer_id)) f.gateway_peer_id = msg('rdp.field.gateway_peer_required');
      if (missing(r.target_host)) f.target_host = msg('rdp.field.target_required_gateway');
      if (missing(r.listen_port)) f.listen_port = msg('rdp.field.listen_port_required');
      break;
  }
  if (r.wol_enabled === true && missing(r.wol_mac)) f.wol_mac = msg('route.field.wol_mac_required');
  return f;
}
