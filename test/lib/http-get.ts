// A plain GET to a loopback listener with a chosen Host header, used by the tests that talk to Caddy
// or the gateway companion's proxy: the status, body and headers, or null when nothing answers.
import http from 'node:http';

export interface GetResult {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

export interface GetOptions {
  path?: string;
  bindHost?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export function getWithHost(port: number, host: string, o: GetOptions = {}): Promise<GetResult | null> {
  return new Promise((resolve) => {
    const req = http.request(
      { host: o.bindHost ?? '127.0.0.1', port, path: o.path ?? '/', headers: { host, ...o.headers }, agent: false, timeout: o.timeoutMs ?? 3000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', () => resolve(null));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
