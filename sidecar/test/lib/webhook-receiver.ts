// A real HTTP receiver for webhook tests: records every POST (headers, exact body, whether its
// signature verifies with the secret, when it came by the given clock) and answers with the status
// the test decides (a fixed one, or one per request from a list; 'hang' never answers).
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The README's verification recipe, written out independently of the sidecar's code: HMAC-SHA256
 * with the secret over "<X-Gatehouse-Timestamp>.<raw body>", hex, compared in constant time with
 * X-Gatehouse-Signature after "sha256="; the timestamp within toleranceS of now.
 */
export function receiverVerifies(secret: string, timestamp: string, signature: string, rawBody: string, nowMs: number, toleranceS = 300): boolean {
  if (!/^\d+$/.test(timestamp) || Math.abs(nowMs / 1000 - Number(timestamp)) > toleranceS) return false;
  const expected = Buffer.from(
    'sha256=' +
      crypto
        .createHmac('sha256', secret)
        .update(timestamp + '.' + rawBody)
        .digest('hex'),
  );
  const got = Buffer.from(signature);
  return got.length === expected.length && crypto.timingSafeEqual(got, expected);
}

/** A delivery's JSON body, as the queue sends it (sidecar/src/webhooks/queue.ts). */
export interface WebhookBody {
  id: string;
  event: string;
  created_at: string;
  timestamp: number;
  data: Record<string, unknown>;
}

export interface Received {
  at: number;
  path: string;
  event: string;
  delivery: string;
  timestamp: string;
  signature: string;
  body: string;
  /** the body parsed (null when it is not JSON) */
  json: WebhookBody | null;
  signatureValid: boolean;
}

export interface Receiver {
  url: string;
  port: number;
  got: Received[];
  /** statuses for the next requests, in order; then `status` */
  script: (number | 'hang')[];
  status: number | 'hang';
  close(): Promise<void>;
}

export async function startReceiver(secret: string, opts: { clock?: () => number; port?: number; toleranceS?: number } = {}): Promise<Receiver> {
  const clock = opts.clock ?? Date.now;
  const hung = new Set<http.ServerResponse>();
  const r: Receiver = { url: '', port: 0, got: [], script: [], status: 200, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const h = (n: string) => String(req.headers[n.toLowerCase()] ?? '');
      let json: WebhookBody | null = null;
      try {
        json = JSON.parse(body) as WebhookBody;
      } catch {
        /* recorded as is */
      }
      const signatureValid = receiverVerifies(secret, h('X-Gatehouse-Timestamp'), h('X-Gatehouse-Signature'), body, clock(), opts.toleranceS);
      r.got.push({
        at: clock(),
        path: req.url ?? '',
        event: h('X-Gatehouse-Event'),
        delivery: h('X-Gatehouse-Delivery'),
        timestamp: h('X-Gatehouse-Timestamp'),
        signature: h('X-Gatehouse-Signature'),
        body,
        json,
        signatureValid,
      });
      const st = r.script.length ? r.script.shift()! : r.status;
      if (st === 'hang') {
        hung.add(res);
        return;
      }
      res.writeHead(st, { 'content-type': 'text/plain' }).end(`status ${st}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  r.port = (server.address() as AddressInfo).port;
  r.url = `http://127.0.0.1:${r.port}/hook`;
  r.close = () =>
    new Promise<void>((resolve) => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}
