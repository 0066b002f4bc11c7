// The shapes of the desktop client API the client sends and reads: types only, derived from the
// server's own zod schemas (one definition of each shape; `import type` is erased, so the bundle
// holds no sidecar code).
import type { z } from 'zod';
import type * as S from '../../sidecar/src/client-api/schema.js';
import type * as R from '../../sidecar/src/rdp/client-endpoints.js';

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
export type ClientRdpListResponse = z.infer<typeof R.clientRdpListResponse>;
export type ClientRdpRoute = ClientRdpListResponse['routes'][number];
export type ConnectAddress = ClientRdpConnectResponse['address'];
type EndReason = 'client' | 'lost' | 'disconnected' | 'route_disabled' | 'route_deleted';
/** Where and how often to record the session (a server without session endpoints leaves it out). */
export interface SessionHints {
  path: string;
  heartbeat_interval_s: number;
  lost_after_s: number;
}
export type ClientRdpConnectResponse = z.infer<typeof R.clientRdpConnectResponse> & { session?: SessionHints };
// TODO(clientcli): derive from the session schemas once POST/PATCH/DELETE /client/rdp/:id/session land.
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
