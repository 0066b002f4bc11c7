// One delivery attempt: the exact body POSTed to the webhook's URL with its signature headers, through
// the request-forgery guard (util/outbound.ts: every address checked, the connection pinned to the
// checked one), with a time limit. No redirects are followed: only a 2xx answer counts as delivered.
// A refused target is recorded as "not allowed" and nothing more.
import crypto from 'node:crypto';
import { FetchFailed, guardedRequest, NotAllowed, type OutboundPolicy } from '../util/outbound.js';
import { msg } from '@gatehouse/common/messages/index.js';

export const SIGNATURE_HEADER = 'X-Gatehouse-Signature';
export const TIMESTAMP_HEADER = 'X-Gatehouse-Timestamp';
export const EVENT_HEADER = 'X-Gatehouse-Event';
export const DELIVERY_HEADER = 'X-Gatehouse-Delivery';

/** hex HMAC-SHA256 over "<timestamp>.<body>" with the webhook's secret; sent as "sha256=<hex>". */
export function sign(secret: string, timestamp: number, body: string): string {
  return crypto.createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/**
 * The receiver's check (docs/guides/webhooks.md): the signature matches the timestamp and the exact body,
 * and the timestamp is no older than toleranceS seconds.
 */
export function verifySignature(
  secret: string,
  headers: { timestamp: string | undefined; signature: string | undefined },
  body: string,
  nowMs: number,
  toleranceS = 300,
): boolean {
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
  /** the guard's policy of webhooks (deps.outbound('webhooks')) */
  policy: OutboundPolicy;
  userAgent: string;
  /** aborts the attempt (server shutdown): resolves with error "aborted" */
  signal?: AbortSignal;
}

export async function send(input: SendInput, o: SenderOptions): Promise<SendResult> {
  const t0 = performance.now();
  const done = (status: number | null, error: string | null): SendResult => ({
    ok: error === null && status !== null && status >= 200 && status < 300,
    status,
    error,
    duration_ms: Math.round(performance.now() - t0),
  });
  try {
    new URL(input.url);
  } catch {
    return done(null, msg('webhook.delivery.invalid_url').text);
  }
  if (o.signal?.aborted) return done(null, msg('webhook.delivery.aborted').text);
  const ts = Math.floor(input.now / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': o.userAgent,
    [EVENT_HEADER]: input.event,
    [DELIVERY_HEADER]: input.uid,
    [TIMESTAMP_HEADER]: String(ts),
    [SIGNATURE_HEADER]: `sha256=${sign(input.secret, ts, input.body)}`,
  };
  try {
    // the answer's body is not needed: a little is read (so the server is not stuck), then the connection is closed
    const res = await guardedRequest(input.url, {
      policy: o.policy,
      method: 'POST',
      headers,
      body: input.body,
      timeoutMs: o.timeoutMs,
      maxBytes: 65536,
      overflow: 'truncate',
      maxRedirects: 0,
      signal: o.signal,
    });
    return done(res.status, res.status >= 200 && res.status < 300 ? null : msg('webhook.delivery.status', { status: res.status }).text);
  } catch (err) {
    if (o.signal?.aborted) return done(null, msg('webhook.delivery.aborted').text);
    if (err instanceof NotAllowed) return done(null, msg('webhook.delivery.not_allowed').text);
    if (err instanceof FetchFailed)
      return done(
        null,
        err.kind === 'timeout'
          ? msg('webhook.delivery.timeout', { ms: o.timeoutMs }).text
          : err.kind === 'dns'
            ? msg('webhook.delivery.dns', { detail: err.reason }).text
            : err.reason,
      );
    return done(null, (err as Error).message);
  }
}

/**
 * The guard's policy for one webhook: the operator's policy of webhooks (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE,
 * for every webhook), widened to loopback, private ranges and this server when an admin chose
 * allow_private for this webhook. Used when the URL is saved and at every connection of a delivery.
 */
export function webhookPolicy(base: OutboundPolicy, allowPrivate: boolean): OutboundPolicy {
  return allowPrivate ? { ...base, allowPrivate: true } : base;
}
