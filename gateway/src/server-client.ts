// Calls to the server's gateway API (GATEHOUSE_SERVER_URL/api/v1/gateway/*) with the gateway token
// (the shared JSON client of @gatehouse/common, also used by the desktop client).
import { ApiClient } from '@gatehouse/common/api-client.js';

export { ApiError as ServerError } from '@gatehouse/common/api-client.js';

export class ServerClient extends ApiClient {
  constructor(baseUrl: string, token: string, timeoutMs = 10_000) {
    super(baseUrl, '/api/v1/gateway', { authorization: `Bearer ${token}` }, timeoutMs);
  }
}
