import type Koa from 'koa';
import type { TLSSocket } from 'node:tls';

export function normalizeIp(ip: string | undefined): string {
  if (!ip) return '';
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip;
}

export function isLoopback(ip: string): boolean {
  return ip === '::1' || ip.startsWith('127.');
}

/**
 * The visitor's address. When the TCP peer is loopback (Caddy on this host) and trustProxy is on,
 * the last X-Forwarded-For entry is taken: that is the one our own Caddy appended.
 */
export function clientIp(ctx: Koa.Context, trustProxy: boolean): string {
  const remote = normalizeIp(ctx.req.socket.remoteAddress);
  if (trustProxy && isLoopback(remote)) {
    const xff = ctx.get('X-Forwarded-For');
    if (xff) {
      const parts = xff
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const last = parts[parts.length - 1];
      if (last) return normalizeIp(last);
    }
  }
  return remote;
}

/** Whether the request came over HTTPS (directly, or to our Caddy which forwarded it). */
export function isSecure(ctx: Koa.Context, trustProxy: boolean): boolean {
  if ((ctx.req.socket as Partial<TLSSocket>).encrypted) return true;
  const remote = normalizeIp(ctx.req.socket.remoteAddress);
  return trustProxy && isLoopback(remote) && ctx.get('X-Forwarded-Proto') === 'https';
}
