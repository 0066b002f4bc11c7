// A small JSON client for the server's token-authenticated APIs (the gateway companion's
// /api/v1/gateway/*, the desktop client's /api/v1/client/*): fixed headers (the bearer token, the
// client's machine fingerprint), a timeout per call, and one error type that says whether the server
// answered at all (status null = unreachable) so callers can back off and keep their last config.
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly body: unknown = null,
  ) {
    super(message);
  }
}

export interface ApiResponse<T> {
  status: number;
  data: T;
  headers: Headers;
}

export type ApiMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export class ApiClient {
  /**
   * @param baseUrl the server, e.g. https://vpn.example.com (a trailing slash is dropped)
   * @param prefix the API's path prefix, e.g. /api/v1/client
   * @param headers sent with every call (authorization, fingerprint)
   */
  constructor(
    readonly baseUrl: string,
    private readonly prefix: string,
    private readonly headers: Record<string, string>,
    private readonly timeoutMs = 10_000,
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
  }

  async call<T = unknown>(method: ApiMethod, path: string, body?: unknown, okStatuses: number[] = [200]): Promise<ApiResponse<T>> {
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}${this.prefix}${path}`, {
        method,
        headers: { ...this.headers, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new ApiError(`server unreachable: ${cause?.code ?? cause?.message ?? (err as Error).message}`, null);
    }
    const text = await res.text();
    let data: unknown = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = text;
    }
    if (!okStatuses.includes(res.status)) {
      const msg = data && typeof data === 'object' && 'error' in data ? String(data.error) : res.statusText;
      throw new ApiError(`${method} ${path}: ${res.status} ${msg}`, res.status, data);
    }
    return { status: res.status, data: data as T, headers: res.headers };
  }
}
