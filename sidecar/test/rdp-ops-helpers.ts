// Helpers of the rdp-ops-*.test.ts files: a test server with an admin token, RDP route creation
// through the real API, real TCP listeners on loopback, and the bus events of a test.
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestServer, apiToken, bearer, apiInit, type ApiInit, type TestServer } from './lib/server.js';
import type { DomainEvent } from '../src/events.js';
import type { RdpRouteView } from '../src/rdp/schema.js';

export interface Ctx {
  s: TestServer;
  h: Record<string, string>;
  api: ApiInit;
  events: DomainEvent[];
}

export async function opsServer(env: Record<string, string> = {}): Promise<Ctx> {
  const s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RDP_CHECK_TIMEOUT: '2', ...env });
  const h = bearer(await apiToken(s));
  const events: DomainEvent[] = [];
  s.deps.events.onAny((e) => {
    if (e.type.startsWith('rdp_')) events.push(e);
  });
  const api = apiInit(
    () => s,
    () => h,
  );
  return { s, h, api, events };
}

let n = 0;
/** POST /rdp with the given fields (a unique name unless given); returns the created route. */
export async function createRdp(c: Ctx, json: Record<string, unknown>): Promise<RdpRouteView> {
  const r = await c.api('/rdp', { method: 'POST', json: { name: `rdp-${process.pid}-${++n}`, ...json } });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const route = r.data.route as RdpRouteView;
  assert.ok(route.id, `the created route in ${JSON.stringify(r.data)}`);
  return route;
}

/** A TCP listener on 127.0.0.1 (port 0: the kernel picks) that accepts and holds connections. */
export async function tcpListener(port = 0): Promise<{ port: number; accepted: () => number; close(): Promise<void> }> {
  const socks = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((c) => {
    accepted++;
    socks.add(c);
    c.on('error', () => undefined);
    c.on('close', () => socks.delete(c));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of socks) c.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A loopback TCP port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const l = await tcpListener();
  await l.close();
  return l.port;
}
