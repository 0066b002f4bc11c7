// The shapes of the desktop client API the client sends and reads: types only, derived from the
// server's own zod schemas (one definition of each shape; `import type` is erased, so the bundle
// holds no sidecar code).
import type { z } from 'zod';
import type * as S from '../../sidecar/src/client-api/schema.js';

export type RegisterInput = z.input<typeof S.registerBody>;
export type HeartbeatInput = z.input<typeof S.heartbeatBody>;
export type PingResponse = z.infer<typeof S.pingResponse>;
export type PermissionsResponse = z.infer<typeof S.permissionsResponse>;
export type RegisterResponse = z.infer<typeof S.registerResponse>;
export type ConfigResponse = z.infer<typeof S.configResponse>;
export type ConfigCheckResponse = z.infer<typeof S.configCheckResponse>;
export type HeartbeatResponse = z.infer<typeof S.heartbeatResponse>;
export type DeviceStatusInput = z.input<typeof S.statusBody>;
export type DeviceStatusResponse = z.infer<typeof S.statusResponse>;
export type HostnameReportResponse = z.infer<typeof S.hostnameReportResponse>;
export type ServicesResponse = z.infer<typeof S.servicesResponse>;

// ---- RDP (sidecar/src/rdp/client-endpoints.ts)
export interface MaintenanceWindow {
  from: string;
  to: string;
  note: string;
}
export interface ClientRdpRoute {
  id: number;
  name: string;
  description: string | null;
  access_mode: 'internal' | 'external' | 'both' | 'gateway';
  has_credentials: boolean;
  rotation_pending: boolean;
  maintenance: MaintenanceWindow | null;
  upcoming_maintenance: MaintenanceWindow[];
  wol_enabled: boolean;
  network_level_auth: boolean;
  resolution: string | null;
  color_depth: number;
  audio_mode: 'local' | 'remote' | 'off';
  clipboard_enabled: boolean;
}
export interface ClientRdpListResponse {
  ok: true;
  routes: ClientRdpRoute[];
}
export interface ConnectAddress {
  host: string;
  port: number;
  mode: 'internal' | 'external' | 'gateway';
}
export interface ClientRdpConnectResponse {
  ok: true;
  rdp_route_id: number;
  name: string;
  access_mode: ClientRdpRoute['access_mode'];
  address: ConnectAddress;
  candidates: Array<ConnectAddress & { rdp_file: string }>;
  rdp_file: string;
  credentials: unknown;
  kid: string;
  credentials_updated_at: string | null;
  session: { path: string; heartbeat_interval_s: number; lost_after_s: number };
}
type EndReason = 'client' | 'lost' | 'disconnected' | 'route_disabled' | 'route_deleted';
export interface ClientRdpSessionResponse {
  ok: true;
  session: { id: number; rdp_route_id: number; status: 'active' | 'ended'; started_at: number; last_heartbeat_at: number; ended_at: number | null; end_reason: EndReason | null; duration_s: number };
}
export interface ClientRdpHeartbeatResponse {
  ok: true;
  session_id: number;
  disconnect: boolean;
  reason: EndReason | null;
  message: string | null;
  status: 'active' | 'ended';
  lost_after_s: number;
}
