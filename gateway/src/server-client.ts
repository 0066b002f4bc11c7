// Calls to the server's gateway API (GATEHOUSE_SERVER_URL/api/v1/gateway/*) with the gateway token.
export class ServerError extends Error {
  constructor(message: string, readonly status: number | null, readonly body: unknown = null) {
    super(message);
  }
}

export interface ServerResponse<T> {
  status: number;
  data: T;
}

export class ServerClient {
  constructor(private readonly baseUrl: string, private readonly token: string, private readonly timeoutMs = 10_000) {}

  async call<T = any>(method: 'GET' | 'POST', path: string, body?: unknown, okStatuses: number[] = [200]): Promise<ServerResponse<T>> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}/api/v1/gateway${path}`, {
        method,
        headers: { authorization: `Bearer ${this.token}`, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new ServerError(`server unreachable: ${cause?.code ?? cause?.message ?? (err as Error).message}`, null);
    }
    const text = await res.text();
    let data: any = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = text;
    }
    if (!okStatuses.includes(res.status)) {
      const msg = data && typeof data === 'object' && 'error' in data ? String(data.error) : res.statusText;
      throw new ServerError(`${method} ${path}: ${res.status} ${msg}`, res.status, data);
    }
    return { status: res.status, data: data as T };
  }
}
