// RDP sessions (rdp/sessions.ts, rdp/history.ts): start, heartbeat, end through the service the
// client endpoints call; disconnect-all through the admin endpoint, observed by the client's next
// heartbeat; the lost sweep with a short configured timeout (called and scheduled); sessions ended by
// disabling and deleting the route; history with its limit; the export as CSV (RFC 4180, parsed
// here) and JSON; the session events.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { createRdp, opsServer, type Ctx } from './rdp-ops-helpers.js';
import { waitFor } from '../../test/lib/wait.js';
import { CompanionApi } from '../../gateway/src/api.js';
import { TcpListeners } from '../../gateway/src/listeners.js';
import { createLogger } from '@gatehouse/common/json-log.js';
import { disconnectAllResponse, historyResponse } from '../src/rdp/schema.js';
import { EXPORT_COLUMNS } from '../src/rdp/history.js';
import type { GatewayListener, RdpSession } from './lib/protocol.js';
import type { ActivityEntry } from './lib/protocol.js';
import type { Refusal } from './lib/api-types.js';

let c: Ctx;
before(async () => {
  // gateway peers get loopback addresses (127.78.0.0/24), so a companion's API and listeners can bind there
  c = await opsServer({ GATEHOUSE_RDP_SESSION_LOST_AFTER: '1', GATEHOUSE_WG_SUBNET: '127.78.0.0/24' });
});
after(async () => c.s.close());

const svc = () => c.s.deps.rdpSessions;
const who = (token_id: number | null = null, client_name = 'desk-1') => ({ token_id, client_name });

/** RFC 4180 reader for the test: quoted fields may hold commas, CRLF and doubled quotes. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (ch === '"') {
        quoted = false;
        i++;
        continue;
      }
      field += ch;
      i++;
      continue;
    }
    if (ch === '"' && field === '') {
      quoted = true;
      i++;
    } else if (ch === ',') {
      row.push(field);
      field = '';
      i++;
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
    } else {
      assert.notEqual(ch, '\n', 'records end with CRLF');
      assert.notEqual(ch, '"', 'a quote only inside a quoted field');
      field += ch;
      i++;
    }
  }
  assert.equal(quoted, false, 'every quoted field is closed');
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

describe('RDP sessions', () => {
  test('start → heartbeat → end; rdp_session_started/ended; a disabled route refuses a start (409), an unknown one 404', async () => {
    const route = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: 3389 });
    const s = await svc().start(route.id, { ...who(), peer_id: null, user_id: null, machine_id: null });
    assert.equal(s.status, 'active');
    assert.equal(s.client_name, 'desk-1');
    const hb = await svc().heartbeat(s.id, who());
    assert.deepEqual(hb, { disconnect: false, status: 'active', session_id: s.id, lost_after_s: 1 });
    const ended = await svc().end(s.id, who());
    assert.equal(ended.status, 'ended');
    assert.equal(ended.end_reason, 'client');
    assert.deepEqual(await svc().end(s.id, who()), ended, 'ending twice is the same ended session');
    assert.ok(c.events.some((e) => e.type === 'rdp_session_started' && e.session_id === s.id && e.name === route.name && e.client_name === 'desk-1'));
    assert.ok(c.events.some((e) => e.type === 'rdp_session_ended' && e.session_id === s.id && e.reason === 'client'));
    const act = (await c.api('/logs/activity?source=rdp&limit=200')).data.entries
      .filter((e: ActivityEntry) => e.details?.session_id === s.id)
      .map((e: ActivityEntry) => e.event_type)
      .sort();
    assert.deepEqual(act, ['rdp_session_ended', 'rdp_session_started']);

    await assert.rejects(svc().start(999999, who()), (e: { kind?: string }) => e.kind === 'not_found');
    assert.equal((await c.api(`/rdp/${route.id}/toggle`, { method: 'PUT' })).status, 200);
    await assert.rejects(svc().start(route.id, who()), (e: { kind?: string }) => e.kind === 'conflict');
  });

  test("another token's session is not found", async () => {
    const route = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: 3389 });
    const mine = await c.s.deps.rdpSessions.start(route.id, who(null));
    const s = await svc().start(route.id, { token_id: 1, client_name: 'a' });
    await assert.rejects(svc().heartbeat(s.id, { token_id: 2 }), (e: { kind?: string }) => e.kind === 'not_found');
    await assert.rejects(svc().end(s.id, { token_id: 2 }), (e: { kind?: string }) => e.kind === 'not_found');
    assert.equal((await svc().heartbeat(s.id, { token_id: 1 })).disconnect, false);
    await svc().end(mine.id, who());
    await svc().end(s.id, { token_id: 1 });
  });

  test('disconnect-all: the next heartbeat orders the client to drop; the session ends as disconnected', async () => {
    const route = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: 3389 });
    const a = await svc().start(route.id, who(null, 'desk-a'));
    const b = await svc().start(route.id, who(null, 'desk-b'));
    const done = await svc().start(route.id, who(null, 'desk-c'));
    await svc().end(done.id, who());
    const r = await c.api(`/rdp/${route.id}/sessions/disconnect-all`, { method: 'POST' });
    assert.equal(r.status, 200, JSON.stringify(r.data));
    disconnectAllResponse.parse(r.data);
    assert.equal(r.data.count, 2);
    assert.deepEqual([...r.data.session_ids].sort(), [a.id, b.id].sort());

    const hb = await svc().heartbeat(a.id, who());
    assert.equal(hb.disconnect, true);
    assert.equal(hb.reason, 'disconnected');
    assert.equal(hb.status, 'ended');
    assert.match(hb.message ?? '', /administrator/);
    assert.equal((await svc().heartbeat(a.id, who())).disconnect, true, 'and again on a repeated heartbeat');
    // b's client ends its session after the order came some other way: still `disconnected`
    assert.equal((await svc().end(b.id, who())).end_reason, 'disconnected');
    const hist = await c.api(`/rdp/${route.id}/history`);
    historyResponse.parse(hist.data);
    const reasons = Object.fromEntries(hist.data.sessions.map((s: RdpSession) => [s.client_name, s.end_reason]));
    assert.deepEqual(reasons, { 'desk-a': 'disconnected', 'desk-b': 'disconnected', 'desk-c': 'client' });
    assert.equal((await c.api('/rdp/999999/sessions/disconnect-all', { method: 'POST' })).status, 404);
  });

  test('disconnect-all in gateway mode: the companion closes the live connections of the linked L4 route (server-side kill); other modes: marker only', async () => {
    // the LAN host's RDP port: an echo server
    const lan = net.createServer((sock) => sock.pipe(sock));
    await new Promise<void>((r) => lan.listen(0, '127.0.0.1', () => r()));
    const g = await c.api('/peers', { method: 'POST', json: { name: `rdp-kill-gw-${process.pid}`, is_gateway: true } });
    assert.equal(g.status, 201, JSON.stringify(g.data));
    const peer = g.data.peer;
    const route = await createRdp(c, {
      access_mode: 'gateway',
      gateway_peer_id: peer.id,
      target_host: '127.0.0.1',
      target_port: (lan.address() as net.AddressInfo).port,
      listen_port: 43395,
    });
    // what the companion runs: the TCP listeners of its configuration, as the server serves it
    const cfg = await c.s.req('/api/v1/gateway/config', { headers: { authorization: `Bearer ${g.data.gateway!.apiToken}` } });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.data));
    const listeners = new TcpListeners(peer.address, createLogger('error'), { connectTimeoutMs: 2000 });
    await listeners.apply(cfg.data.tcp_listeners);
    const l = cfg.data.tcp_listeners.find((x: GatewayListener) => x.route_id === route.gateway_l4_route_id);
    assert.ok(l, 'the linked route has a companion listener');
    const api = new CompanionApi(
      g.data.gateway!.pushToken,
      {
        status: () => ({}),
        refresh: () => undefined,
        wol: async () => {
          throw new Error('not here');
        },
        disconnect: (id) => listeners.disconnect(id),
      },
      createLogger('error'),
    );
    await api.listen(0, peer.address);
    try {
      assert.equal((await c.api(`/peers/${peer.id}`, { method: 'PUT', json: { api_port: (api.server.address() as net.AddressInfo).port } })).status, 200);
      // an RDP client connected through the companion, with its session
      const client = net.connect({ host: peer.address, port: l.port });
      client.on('error', () => undefined);
      const closed = new Promise<void>((r) => client.once('close', () => r()));
      const echo = await new Promise<string>((resolve) => {
        client.once('data', (d) => resolve(d.toString()));
        client.write('rdp bytes');
      });
      assert.equal(echo, 'rdp bytes');
      const sess = await svc().start(route.id, who(null, 'gw-desk'));
      const r = await c.api(`/rdp/${route.id}/sessions/disconnect-all`, { method: 'POST' });
      assert.equal(r.status, 200, JSON.stringify(r.data));
      disconnectAllResponse.parse(r.data);
      assert.deepEqual(r.data.server_side, { method: 'gateway', closed_connections: 1, error: null });
      assert.equal(r.data.count, 1);
      await closed; // cut by the companion, before any heartbeat
      assert.equal((await svc().heartbeat(sess.id, who())).disconnect, true);

      // switching the route off, and deleting it, cut the live connections the same way
      const connect = async () => {
        const sock = net.connect({ host: peer.address, port: l.port });
        sock.on('error', () => undefined);
        const gone = new Promise<void>((r) => sock.once('close', () => r()));
        await new Promise<void>((resolve) => {
          sock.once('data', () => resolve());
          sock.write('x');
        });
        return { gone }; // wrapped: an async function returning the promise itself would wait for it
      };
      const within = (p: Promise<void>, ms: number, what: string) =>
        Promise.race([p, new Promise((r) => setTimeout(r, ms)).then(() => assert.fail(`${what}: the connection was not closed within ${ms} ms`))]);
      let { gone } = await connect();
      assert.equal((await c.api(`/rdp/${route.id}/toggle`, { method: 'PUT' })).status, 200);
      await within(gone, 3000, 'toggle off');
      assert.equal((await c.api(`/rdp/${route.id}/toggle`, { method: 'PUT' })).status, 200);
      ({ gone } = await connect());
      assert.equal((await c.api(`/rdp/${route.id}`, { method: 'DELETE' })).status, 200);
      await within(gone, 3000, 'delete');
    } finally {
      await api.close();
      listeners.disconnect(route.gateway_l4_route_id!); // closeAll() waits for open connections
      await listeners.closeAll();
      lan.close();
    }
    // the companion is gone: the marker still stands, the failure is reported
    const route2 = await createRdp(c, { access_mode: 'gateway', gateway_peer_id: peer.id, target_host: '127.0.0.1', target_port: 3389, listen_port: 43396 });
    const again = await c.api(`/rdp/${route2.id}/sessions/disconnect-all`, { method: 'POST' });
    assert.equal(again.status, 200);
    assert.equal(again.data.server_side.method, 'gateway');
    assert.equal(again.data.server_side.closed_connections, null);
    assert.match(again.data.server_side.error!, /./);
    const internal = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: 3389 });
    assert.deepEqual((await c.api(`/rdp/${internal.id}/sessions/disconnect-all`, { method: 'POST' })).data.server_side, {
      method: 'marker',
      closed_connections: null,
      error: null,
    });
  });

  test('lost: no heartbeat for GATEHOUSE_RDP_SESSION_LOST_AFTER (1 s here) → ended as lost at its last heartbeat, by the sweep and on its schedule', async () => {
    const route = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: 3389 });
    const s = await svc().start(route.id, who(null, 'sleepy'));
    const alive = await svc().start(route.id, who(null, 'alive'));
    await new Promise((r) => setTimeout(r, 600)); // not a condition: time passes towards the 1 s lost-after
    await svc().heartbeat(alive.id, who());
    await new Promise((r) => setTimeout(r, 600)); // not a condition: `sleepy` passes the 1 s lost-after, `alive` does not
    assert.equal(await svc().sweepLost(), 1);
    const hist = (await svc().history(route.id)).sessions;
    const lost = hist.find((x) => x.id === s.id)!;
    assert.equal(lost.status, 'ended');
    assert.equal(lost.end_reason, 'lost');
    assert.equal(lost.ended_at, lost.last_heartbeat_at);
    assert.equal(hist.find((x) => x.id === alive.id)!.status, 'active');
    const hb = await svc().heartbeat(s.id, who());
    assert.deepEqual({ disconnect: hb.disconnect, reason: hb.reason, status: hb.status }, { disconnect: false, reason: 'lost', status: 'ended' });
    assert.ok(c.events.some((e) => e.type === 'rdp_session_ended' && e.session_id === s.id && e.reason === 'lost'));

    // the scheduled sweep (every max(1 s, lost-after / 3)) ends `alive` once it stops heartbeating
    svc().startSweep();
    try {
      await waitFor(async () => (await svc().active(route.id)).length === 0, 4000, { intervalMs: 100, what: 'the scheduled sweep to end `alive`' });
    } finally {
      svc().stopSweep();
    }
    assert.deepEqual(await svc().active(route.id), []);
  });

  test('disabling the route ends its sessions as route_disabled, deleting it as route_deleted; their heartbeats order a disconnect', async () => {
    const route = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: 3389 });
    const s = await svc().start(route.id, who(7, 'desk-x'));
    assert.equal((await c.api(`/rdp/${route.id}/toggle`, { method: 'PUT' })).status, 200);
    let hb = await svc().heartbeat(s.id, { token_id: 7 });
    assert.deepEqual({ d: hb.disconnect, r: hb.reason }, { d: true, r: 'route_disabled' });
    assert.ok(c.events.some((e) => e.type === 'rdp_session_ended' && e.session_id === s.id && e.reason === 'route_disabled'));

    assert.equal((await c.api(`/rdp/${route.id}/toggle`, { method: 'PUT' })).status, 200);
    const t = await svc().start(route.id, who(7, 'desk-y'));
    const del = await c.api(`/rdp/${route.id}`, { method: 'DELETE' });
    assert.equal(del.status, 200, JSON.stringify(del.data));
    hb = await svc().heartbeat(t.id, { token_id: 7 });
    assert.deepEqual({ d: hb.disconnect, r: hb.reason }, { d: true, r: 'route_deleted' });
    await assert.rejects(svc().heartbeat(t.id, { token_id: 8 }), (e: { kind?: string }) => e.kind === 'not_found', 'another token learns nothing');
    assert.ok(c.events.some((e) => e.type === 'rdp_session_ended' && e.session_id === t.id && e.reason === 'route_deleted'));
    assert.equal((await c.api(`/rdp/${route.id}/history`)).status, 404, 'the history goes with the route');
  });
});

describe('RDP history and export', () => {
  test('GET /rdp/:id/history: newest first, limit default 50, at most 500 (400 with fields beyond)', async () => {
    const route = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: 3389 });
    const ids: number[] = [];
    for (let i = 0; i < 55; i++) ids.push((await svc().start(route.id, who(null, `bulk-${i}`))).id);
    const r = await c.api(`/rdp/${route.id}/history`);
    assert.equal(r.status, 200);
    historyResponse.parse(r.data);
    assert.equal(r.data.sessions.length, 50);
    assert.equal(r.data.total, 55);
    assert.equal(r.data.sessions[0].id, ids[54]);
    assert.equal((await c.api(`/rdp/${route.id}/history?limit=3`)).data.sessions.length, 3);
    for (const bad of ['0', '501', 'x', '2.5']) {
      const b = await c.api(`/rdp/${route.id}/history?limit=${bad}`);
      assert.equal(b.status, 400, bad);
      assert.ok(b.data.fields!.limit, bad);
    }
    for (const id of ids) await svc().end(id, who());
  });

  test('GET /rdp/history/export: CSV (RFC 4180, attachment) and JSON hold the same rows', async () => {
    const route = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: 3389 });
    const tricky = 'desk "quoted", with comma\r\nand a line break';
    const s = await svc().start(route.id, who(null, tricky));
    await svc().end(s.id, who());

    const csv = await c.api('/rdp/history/export?format=csv');
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
    assert.match(csv.headers.get('content-disposition') ?? '', /^attachment; filename="rdp-sessions-.*\.csv"$/);
    const rows = parseCsv(csv.data as string);
    assert.deepEqual(rows[0], EXPORT_COLUMNS);
    const recs = rows.slice(1).map((r) => Object.fromEntries(EXPORT_COLUMNS.map((k, i) => [k, r[i]])));
    const mine = recs.find((r) => r.session_id === String(s.id))!;
    assert.ok(mine, 'the session is in the CSV');
    assert.equal(mine.client_name, tricky);
    assert.equal(mine.route_name, route.name);
    assert.equal(mine.end_reason, 'client');
    assert.equal(mine.status, 'ended');
    assert.equal(new Date(mine.started_at).getTime(), s.started_at);
    assert.equal(mine.peer_id, '', 'null is an empty field');

    const json = await c.api('/rdp/history/export?format=json');
    assert.equal(json.status, 200);
    assert.match(json.headers.get('content-disposition') ?? '', /^attachment; filename="rdp-sessions-.*\.json"$/);
    const arr = json.data as Record<string, unknown>[];
    assert.ok(Array.isArray(arr));
    assert.equal(arr.length, recs.length);
    const j = arr.find((r) => r.session_id === s.id)!;
    assert.equal(j.client_name, tricky);
    assert.equal(j.peer_id, null);
    assert.deepEqual(Object.keys(j), EXPORT_COLUMNS);
    assert.equal(j.duration_s, Number(mine.duration_s));

    const bad = await c.api<Refusal>('/rdp/history/export?format=xml');
    assert.equal(bad.status, 400);
    assert.ok(bad.data.fields!.format);
  });
});
