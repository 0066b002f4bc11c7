// The shapes of the desktop client API the client sends and reads: types only, derived from the
// server's own zod schemas (one definition of each shape; `import type` is erased, so the bundle
// holds no sidecar code).
import type { z } from 'zod';
import type * as S from '../../sidecar/src/client-api/schema.js';
import type * as R from '../../sidecar/src/rdp/client-endpoints.js';
import type * as RdpSchema from '../../sidecar/src/rdp/schema.js';

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
export type ClientRdpConnectResponse = z.infer<typeof R.clientRdpConnectResponse>;
export type ClientRdpStatusResponse = z.infer<typeof R.clientRdpStatusResponse>;
export type ClientRdpSessionResponse = z.infer<typeof R.clientRdpSessionResponse>;
export type ClientRdpHeartbeatResponse = z.infer<typeof RdpSchema.clientRdpHeartbeatResponse>;
