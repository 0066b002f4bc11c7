// Which fields a route's type and target kind make required. One rule for the create body's schema
// (routes/schema.ts: every missing field of an empty form comes back in one answer, beside the
// others) and the service's check of the merged route (routes/service.ts).
import { msg, type Msg } from '@gatehouse/common/messages/index.js';

/** What the rule reads of a route or a create body (null and undefined are both missing). */
export interface KindFields {
  route_type?: 'http' | 'l4' | null;
  target_kind?: 'peer' | 'gateway' | null;
  l4_protocol?: unknown;
  l4_listen_port?: unknown;
  peer_id?: unknown;
  target_port?: unknown;
  target_peer_id?: unknown;
  target_lan_host?: unknown;
  target_lan_port?: unknown;
  /** several backends (routes/traffic.ts): the first one sets the target fields */
  backends?: unknown;
}

const missing = (v: unknown) => v === null || v === undefined;

/** The fields required by the route's type (http when unset) and target kind (peer when unset) that r lacks, each with its message. */
export function missingForKind(r: KindFields): Record<string, Msg> {
  const f: Record<string, Msg> = {};
  if (r.route_type === 'l4') {
    if (missing(r.l4_protocol)) f.l4_protocol = msg('route.field.l4_protocol_required');
    if (missing(r.l4_listen_port)) f.l4_listen_port = msg('route.field.l4_required');
  }
  if (Array.isArray(r.backends) && r.backends.length) return f;
  if ((r.target_kind ?? 'peer') === 'peer') {
    if (missing(r.peer_id)) f.peer_id = msg('route.field.peer_target_required');
    if (missing(r.target_port)) f.target_port = msg('route.field.peer_target_required');
  } else {
    if (missing(r.target_peer_id)) f.target_peer_id = msg('route.field.gateway_target_required');
    if (missing(r.target_lan_host)) f.target_lan_host = msg('route.field.gateway_target_required');
    if (missing(r.target_lan_port)) f.target_lan_port = msg('route.field.gateway_target_required');
  }
  return f;
}
