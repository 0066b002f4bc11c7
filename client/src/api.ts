// The desktop client API (/api/v1/client/*) as the client uses it: the bearer token and the machine
// fingerprint on every call (the shared ApiClient of @gatehouse/common), one method per endpoint.
import { ApiClient, ApiError } from '@gatehouse/common/api-client.js';
import { FINGERPRINT_HEADER } from './fingerprint.js';
import type * as P from './protocol.js';

export { ApiError };

export class ClientApi extends ApiClient {
  constructor(serverUrl: string, token: string, fingerprint: string, timeoutMs = 10_000) {
    super(serverUrl, '/api/v1/client', { authorization: `Bearer ${token}`, [FINGERPRINT_HEADER]: fingerprint }, timeoutMs);
  }

  async ping(): Promise<P.PingResponse> {
    return (await this.call<P.PingResponse>('GET', '/ping')).data;
  }

  async permissions(): Promise<P.PermissionsResponse> {
    return (await this.call<P.PermissionsResponse>('GET', '/permissions')).data;
  }

  async register(body: P.RegisterInput): Promise<P.RegisterResponse> {
    return (await this.call<P.RegisterResponse>('POST', '/register', body, [200, 201])).data;
  }

  async config(): Promise<P.ConfigResponse> {
    return (await this.call<P.ConfigResponse>('GET', '/config')).data;
  }

  /** null when the config with `hash` is current (304); else the new hash. */
  async check(hash: string | null): Promise<string | null> {
    const r = await this.call<P.ConfigCheckResponse>('GET', `/config/check${hash ? `?hash=${encodeURIComponent(hash)}` : ''}`, undefined, [200, 304]);
    return r.status === 304 ? null : r.data.config_hash;
  }

  async heartbeat(body: P.HeartbeatInput): Promise<P.HeartbeatResponse> {
    return (await this.call<P.HeartbeatResponse>('POST', '/heartbeat', body)).data;
  }

  /** POST /client/status: the detailed device status (any JSON object; os, os_version, uptime_s, tunnel are checked). */
  async deviceStatus(body: P.DeviceStatusInput): Promise<P.DeviceStatusResponse> {
    return (await this.call<P.DeviceStatusResponse>('POST', '/status', body)).data;
  }

  async reportHostname(hostname: string): Promise<P.HostnameReportResponse> {
    return (await this.call<P.HostnameReportResponse>('POST', '/peer/hostname', { hostname })).data;
  }

  async services(): Promise<P.ServicesResponse> {
    return (await this.call<P.ServicesResponse>('GET', '/services')).data;
  }

  async rdpList(): Promise<P.ClientRdpListResponse> {
    return (await this.call<P.ClientRdpListResponse>('GET', '/rdp')).data;
  }

  /** GET /client/rdp/:id/status: the target's reachability (the last scheduled check, or one now with refresh). */
  async rdpStatus(id: number, refresh = false): Promise<P.ClientRdpStatusResponse> {
    return (await this.call<P.ClientRdpStatusResponse>('GET', `/rdp/${id}/status${refresh ? '?refresh=true' : ''}`)).data;
  }

  async rdpConnect(id: number, publicKeySpkiB64: string): Promise<P.ClientRdpConnectResponse> {
    return (await this.call<P.ClientRdpConnectResponse>('GET', `/rdp/${id}/connect?key=${encodeURIComponent(publicKeySpkiB64)}`)).data;
  }

  async rdpSessionStart(id: number, clientName: string): Promise<P.ClientRdpSessionResponse> {
    return (await this.call<P.ClientRdpSessionResponse>('POST', `/rdp/${id}/session`, { client_name: clientName }, [200, 201])).data;
  }

  async rdpSessionHeartbeat(id: number, sessionId: number): Promise<P.ClientRdpHeartbeatResponse> {
    return (await this.call<P.ClientRdpHeartbeatResponse>('PATCH', `/rdp/${id}/session`, { session_id: sessionId })).data;
  }

  async rdpSessionEnd(id: number, sessionId: number): Promise<P.ClientRdpSessionResponse> {
    return (await this.call<P.ClientRdpSessionResponse>('DELETE', `/rdp/${id}/session`, { session_id: sessionId })).data;
  }
}
