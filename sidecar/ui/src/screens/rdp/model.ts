// The RDP route object of the API (rdpRouteView in sidecar/src/rdp/schema.ts, through src/protocol.ts)
// and what the screens derive from it.
import type { AccessMode, MaintenanceWindow } from '../../protocol';

export type { AccessMode, MaintenanceWindow, PathCheck, RdpRoute, RdpStatus } from '../../protocol';
export const ACCESS_MODES: readonly AccessMode[] = ['internal', 'external', 'both', 'gateway'];

export const RDP_EVENTS = ['rdp_route_created', 'rdp_route_updated', 'rdp_route_deleted', 'rdp_route_toggled'];
export const RDP_STATUS_EVENTS = ['rdp_status_changed'];
export const RDP_SESSION_EVENTS = ['rdp_session_started', 'rdp_session_ended'];

/** The window in force at `now`, if any. */
export function activeWindow(windows: MaintenanceWindow[], now = Date.now()): MaintenanceWindow | null {
  return windows.find((w) => Date.parse(w.from) <= now && now < Date.parse(w.to)) ?? null;
}
