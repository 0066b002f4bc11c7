// One delivery attempt: the exact body POSTed to the webhook's URL with its signature headers, to an
// address the request-forgery guard (ssrf.ts) has just checked, with a time limit. No redirects are
// followed (a redirect could lead past the guard): only a 2xx answer counts as delivered.
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkedAddresses, ForbiddenTarget, type Lookup } from './ssrf.js';

export const SIGNATURE_HEADER = 'X-Gatehouse-Signature';
export const TIMESTAMP_HEADER = 'X-Gatehouse-Timestamp';
export const EVENT_HEADER = 'X-Gatehouse-Event';
export const DELIVERY_HEADER = 'X-Gatehouse-Delivery';

/** hex HMAC-SHA256 over "<timestamp>.<body>" with the webhook's secret; sent as "sha256=<hex>". */
export function sign(secret: string, timestamp: number, body: string): string {
  return crypto.createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/**
 * The receiver's check (README "Webhooks"): the signature matches the timestamp and the exact body,
 * and the timestamp is no older than toleranceS seconds.
 */
export function verifySignature(secret: string, headers: { timestamp: string | undefined; signature: string | undefined }, body: string, nowMs: number, toleranceS = 300): boolean {
  const ts = Number(headers.timestamp);
  if (!Number.isInteger(ts) || Math.abs(nowMs / 1000 - ts) > toleranceS) return false;
  const m = /^sha256=([0-9a-f]{64})$/.exec(headers.signature ?? '');
  if (!m) return false;
  return crypto.timingSafeEqual(Buffer.from(m[1], 'hex'), Buffer.from(sign(secret, ts, body), 'hex'));
}

export interface SendInput {
  url: string;
  secret: string;
  event: string;
  uid: string;
  body: string;
  /** epoch ms (signature timestamp) */
  now: number;
}

export interface SendResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  duration_ms: number;
}

export interface SenderOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  serverAddresses?: readonly string[];
  lookup?: Lookup;
  userAgent: string;
  /** aborts the attempt (server shutdown): resolves with error "aborted" */
  signal?: AbortSignal;
}

export async function send(input: SendInput, o: SenderOptions): Promise<SendResult> {
  const t0 = performance.now();
  const done = (status: number | null, error: string | null): SendResult => ({ ok: error === null && status !== null && status >= 200 && status < 300, status, error, duration_ms: Math.round(performance.now() - t0) });
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    return done(null, 'invalid URL');
  }
  let target;
  try {
    [target] = await checkedAddresses(url.hostname, { allowPrivate: o.allowPrivate, serverAddresses: o.serverAddresses, lookup: o.lookup });
  } catch (err) {
    return done(null, err instanceof ForbiddenTarget ? `refused: ${err.message}` : `DNS: ${(err as Error).message}`);
  }
  const ts = Math.floor(input.now / 1000);
  // the connection goes to the address just checked, whatever the name resolves to by now
  const lookup: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else cb(null, target.address, target.family);
  };
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(input.body)),
    'user-agent': o.userAgent,
    [EVENT_HEADER]: input.event,
    [DELIVERY_HEADER]: input.uid,
    [TIMESTAMP_HEADER]: String(ts),
    [SIGNATURE_HEADER]: `sha256=${sign(input.secret, ts, input.body)}`,
  };
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (status: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(status, error));
    };
    const req = (url.protocol === 'https:' ? https : http).request(url, { method: 'POST', headers, lookup, agent: false }, (res) => {
      const status = res.statusCode ?? null;
      // the answer's body is not needed: read a little (so the server is not stuck) and hang up
      let seen = 0;
      res.on('data', (c: Buffer) => {
        seen += c.length;
        if (seen > 65536) res.destroy();
      });
      res.on('end', () => finish(status, status !== null && status >= 200 && status < 300 ? null : `HTTP ${status}`));
      res.on('close', () => finish(status, status !== null && status >= 200 && status < 300 ? null : `HTTP ${status}`));
      res.on('error', () => finish(status, status !== null && status >= 200 && status < 300 ? null : `HTTP ${status}`));
    });
    const timer = setTimeout(() => {
      finish(null, `timed out after ${o.timeoutMs} ms`);
      req.destroy();
    }, o.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => finish(null, err.code ? `${err.code}: ${err.message}` : err.message));
    const abort = () => {
      finish(null, 'aborted');
      req.destroy();
    };
    if (o.signal?.aborted) abort();
    else o.signal?.addEventListener('abort', abort, { once: true });
    req.end(input.body);
  });
}
