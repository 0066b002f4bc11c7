// Wake-on-LAN of RDP routes (rdp/wol.ts, POST /rdp/:id/wol, GET /rdp/:id/wol/status):
// - direct (internal/external/both): a real UDP socket on loopback receives the exact 102-byte
//   magic packets at the configured port (GATEHOUSE_RDP_WOL_PORT; 9 in production);
// - gateway: the real companion API (gateway/src/api.ts with its real sendWol) on the gateway peer's
//   tunnel address (a loopback subnet here) gets the order with the push token and sends the packet;
// - the wake cycle: pending until the target answers (awake) or timeout_ms passes (timeout);
// - 400 with fields without Wake-on-LAN or MAC, and for a bad timeout_ms.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { createRdp, opsServer, tcpListener, type Ctx } from './rdp-ops-helpers.js';
import { waitFor } from '../../test/lib/wait.js';
import { wolResponse } from '../src/rdp/schema.js';
import { CompanionApi } from '../../gateway/src/api.js';
import { sendWol } from '../../gateway/src/wol.js';
import { createLogger } from '@gatehouse/common/json-log.js';
import type { ActivityEntry } from './lib/protocol.js';

/** The magic packet written out by hand: 6 × 0xFF, then the 6 MAC bytes 16 times. */
function expectedPacket(mac: string): Buffer {
  const m = mac.split(/[:-]/).map((x) => parseInt(x, 16));
  const bytes = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
  for (let i = 0; i < 16; i++) bytes.push(...m);
  return Buffer.from(bytes);
}

async function udpReceiver(host = '127.0.0.1'): Promise<{ port: number; packets: Buffer[]; close(): void }> {
  const sock = dgram.createSocket('udp4');
  const packets: Buffer[] = [];
  sock.on('message', (m) => packets.push(m));
  await new Promise<void>((r) => sock.bind(0, host, () => r()));
  return { port: sock.address().port, packets, close: () => sock.close() };
}

let c: Ctx;
let udp: Awaited<ReturnType<typeof udpReceiver>>;
before(async () => {
  udp = await udpReceiver();
  // the gateway peers get addresses in 127.77.0.0/24: loopback on Linux, so the companion API can listen there
  c = await opsServer({ GATEHOUSE_WG_SUBNET: '127.77.0.0/24', GATEHOUSE_RDP_WOL_PORT: String(udp.port) });
});
after(async () => {
  udp.close();
  await c.s.close();
});

const MAC = '52:54:00:AB:CD:EF';

describe('direct Wake-on-LAN (peer-typed and directly addressed targets)', () => {
  test('POST /rdp/:id/wol sends 3 magic packets of exactly 102 bytes to target_host at the WoL port; status pending → awake when the host answers', async () => {
    const closed = await tcpListener();
    const port = closed.port;
    await closed.close();
    const route = await createRdp(c, {
      access_mode: 'internal',
      target_host: '127.0.0.1',
      target_port: port,
      wol_enabled: true,
      wol_mac: MAC.toLowerCase().replace(/:/g, '-'),
    });
    udp.packets.length = 0;
    const r = await c.api(`/rdp/${route.id}/wol`, { method: 'POST', json: { timeout_ms: 20_000 } });
    assert.equal(r.status, 200, JSON.stringify(r.data));
    wolResponse.parse(r.data);
    assert.equal(r.data.wol.state, 'pending');
    assert.equal(r.data.wol.via, 'direct');
    assert.equal(r.data.wol.mac, MAC);
    assert.deepEqual(r.data.wol.sent_to, [`127.0.0.1:${udp.port}`]);
    assert.equal(r.data.wol.timeout_ms, 20_000);
    await waitFor(() => udp.packets.length >= 3, 1000, 'three magic packets');
    assert.equal(udp.packets.length, 3);
    for (const p of udp.packets) {
      assert.equal(p.length, 102);
      assert.deepEqual(p, expectedPacket(MAC));
    }

    // the host is still asleep: pending, with the reason
    let st = await c.api(`/rdp/${route.id}/wol/status`);
    assert.equal(st.status, 200);
    wolResponse.parse(st.data);
    assert.equal(st.data.wol.state, 'pending');
    assert.match(st.data.wol.last_error!, /connection refused/);
    assert.match(JSON.stringify(st.data.wol.last_error_code), /"code":"rdp\.check\./, 'the reason as a message');

    // the host wakes up (its RDP port answers)
    const up = await tcpListener(port);
    try {
      await new Promise((r) => setTimeout(r, 1100)); // not a condition: status polls reachability at most once a second
      st = await c.api(`/rdp/${route.id}/wol/status`);
      assert.equal(st.data.wol.state, 'awake', JSON.stringify(st.data));
      assert.equal(typeof st.data.wol.awake_at, 'number');
      assert.ok(up.accepted() >= 1);
      const act = (await c.api('/logs/activity?source=rdp&limit=100')).data.entries.filter(
        (e: ActivityEntry) => e.event_type === 'rdp_wol_sent' && e.details?.rdp_route_id === route.id,
      );
      assert.equal(act.length, 1);
    } finally {
      await up.close();
    }
  });

  test('a host that does not answer within timeout_ms: timeout', async () => {
    const closed = await tcpListener();
    await closed.close();
    const route = await createRdp(c, {
      access_mode: 'both',
      target_host: '127.0.0.1',
      target_port: closed.port,
      external_host: 'localhost',
      listen_port: closed.port,
      wol_enabled: true,
      wol_mac: MAC,
    });
    assert.equal((await c.api(`/rdp/${route.id}/wol`, { method: 'POST', json: { timeout_ms: 1000 } })).status, 200);
    assert.equal((await c.api(`/rdp/${route.id}/wol/status`)).data.wol.state, 'pending');
    await new Promise((r) => setTimeout(r, 1100)); // not a condition: the 1 s timeout_ms passes
    const st = await c.api(`/rdp/${route.id}/wol/status`);
    assert.equal(st.data.wol.state, 'timeout', JSON.stringify(st.data));
  });

  test('400 with fields: Wake-on-LAN off, no MAC, bad timeout_ms; idle before any packet; 404 for an unknown route', async () => {
    const off = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: 3389, wol_enabled: false });
    udp.packets.length = 0;
    const r = await c.api(`/rdp/${off.id}/wol`, { method: 'POST', json: {} });
    assert.equal(r.status, 409);
    assert.equal(r.data.ok, false);
    assert.ok(r.data.fields!.wol_enabled);
    const idle = await c.api(`/rdp/${off.id}/wol/status`);
    assert.equal(idle.status, 200);
    assert.equal(idle.data.wol.state, 'idle');
    const on = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: 3389, wol_enabled: true, wol_mac: MAC });
    for (const [body, field] of [
      [{ timeout_ms: 10 }, 'timeout_ms'],
      [{ timeout_ms: 'soon' }, 'timeout_ms'],
      [{ timeout_ms: 10_000_000 }, 'timeout_ms'],
      [{ other: 1 }, ''],
    ] as const) {
      const bad = await c.api(`/rdp/${on.id}/wol`, { method: 'POST', json: body });
      assert.equal(bad.status, 400, JSON.stringify(body));
      assert.ok(bad.data.fields, JSON.stringify(bad.data));
      if (field) assert.ok(bad.data.fields[field], JSON.stringify(bad.data));
    }
    assert.equal((await c.api('/rdp/999999/wol', { method: 'POST', json: {} })).status, 404);
    await new Promise((r) => setTimeout(r, 100)); // not a condition: proves nothing is sent
    assert.equal(udp.packets.length, 0, 'nothing sent on a 400');
  });
});

describe('gateway Wake-on-LAN', () => {
  test("through the companion API of the route's gateway: push token, MAC, the LAN target and the linked route; the companion sends the packet", async () => {
    const g = await c.api('/peers', { method: 'POST', json: { name: `rdp-wol-gw-${process.pid}`, is_gateway: true } });
    assert.equal(g.status, 201, JSON.stringify(g.data));
    const peer = g.data.peer;
    assert.match(peer.address, /^127\.77\.0\./);
    const orders: unknown[] = [];
    const api = new CompanionApi(
      g.data.gateway!.pushToken,
      {
        status: () => ({}),
        refresh: () => undefined,
        disconnect: () => 0, // not exercised here (rdp-ops-sessions.test.ts)
        wol: async (req) => {
          orders.push(req);
          // the companion's own sender, aimed at our receiver instead of the LAN broadcast address
          return sendWol(req.mac, { targetHost: req.target_host, override: ['127.0.0.1'], port: udp.port, count: req.count });
        },
      },
      createLogger('error'),
    );
    await api.listen(0, peer.address);
    const apiPort = (api.server.address() as { port: number }).port;
    try {
      const patched = await c.api(`/peers/${peer.id}`, { method: 'PUT', json: { api_port: apiPort } });
      assert.equal(patched.status, 200, JSON.stringify(patched.data));
      const route = await createRdp(c, {
        access_mode: 'gateway',
        gateway_peer_id: peer.id,
        target_host: '192.168.60.20',
        target_port: 3389,
        listen_port: 43390,
        wol_enabled: true,
        wol_mac: MAC,
      });
      udp.packets.length = 0;
      const r = await c.api(`/rdp/${route.id}/wol`, { method: 'POST', json: {} });
      assert.equal(r.status, 200, JSON.stringify(r.data));
      assert.equal(r.data.wol.via, 'gateway');
      assert.deepEqual(r.data.wol.sent_to, [`127.0.0.1:${udp.port}`]);
      assert.deepEqual(orders, [{ mac: MAC, target_host: '192.168.60.20', route_id: route.gateway_l4_route_id, count: 3 }]);
      await waitFor(() => udp.packets.length >= 3, 1000, 'three magic packets');
      assert.equal(udp.packets.length, 3);
      for (const p of udp.packets) assert.deepEqual(p, expectedPacket(MAC));
    } finally {
      await api.close();
    }
    // the companion is gone: 502, recorded
    const route2 = await createRdp(c, {
      access_mode: 'gateway',
      gateway_peer_id: peer.id,
      target_host: '192.168.60.21',
      target_port: 3389,
      listen_port: 43391,
      wol_enabled: true,
      wol_mac: MAC,
    });
    const r = await c.api(`/rdp/${route2.id}/wol`, { method: 'POST', json: {} });
    assert.equal(r.status, 502, JSON.stringify(r.data));
    const failed = (await c.api('/logs/activity?source=rdp&limit=100')).data.entries.filter(
      (e: ActivityEntry) => e.event_type === 'rdp_wol_failed' && e.details?.rdp_route_id === route2.id,
    );
    assert.equal(failed.length, 1);
  });
});
