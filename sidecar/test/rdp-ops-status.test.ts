// RDP route status (rdp/status.ts, GET /rdp/status, GET /rdp/:id/status): real TCP listeners on
// loopback for the internal and external paths (each path checked at its own address and port),
// both paths of a `both` route, the gateway companion's reported reachability of the linked L4 route
// with the gateway's status, the maintenance window in force, rdp_status_changed on a change only,
// and the scheduled check.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Heartbeat } from '@gatehouse/common/gateway-protocol.js';
import { closedPort, createRdp, opsServer, tcpListener, type Ctx } from './rdp-ops-helpers.js';
import { waitFor } from '../../test/lib/wait.js';
import { rdpStatusAllResponse, rdpStatusResponse } from '../src/rdp/schema.js';
import { tcpCheck } from '../src/rdp/status.js';
import type { PathCheck } from './lib/protocol.js';
import type { ActivityEntry, RdpStatus } from './lib/protocol.js';

let c: Ctx;
before(async () => {
  c = await opsServer({ GATEHOUSE_WG_SUBNET: '10.79.0.0/24', GATEHOUSE_RDP_STATUS_INTERVAL: '1' });
});
after(async () => c.s.close());

const status = async (id: number, refresh = true) => {
  const r = await c.api(`/rdp/${id}/status${refresh ? '?refresh=1' : ''}`);
  assert.equal(r.status, 200, JSON.stringify(r.data));
  rdpStatusResponse.parse(r.data);
  return r.data.status;
};

function heartbeat(o: Partial<Heartbeat> = {}): Heartbeat {
  return {
    uptime_s: 120,
    http_proxy_healthy: true,
    api_healthy: true,
    dns_resolve_ok: true,
    overall_healthy: true,
    tcp_listeners: [],
    wg_handshake_age_s: 5,
    route_reachability: [],
    hostname: 'rdp-gw',
    config_hash: null,
    telemetry: {
      gateway_version: '0.1.0',
      node_version: 'v20.0.0',
      wg_tools_version: 'wireguard-tools v1.0.20210914',
      cpu_cores: 4,
      cpu_load_avg: [0.1, 0.2, 0.3],
      mem_total: 8e9,
      mem_free: 4e9,
      mem_used: 4e9,
      disk: { total: 1e11, free: 5e10, used: 5e10 },
      os_platform: 'linux',
      os_release: '6.1.0',
      arch: 'x64',
      dns_resolvers: ['192.168.1.1'],
      default_gateway_ip: '192.168.1.1',
    },
    ...o,
  } as Heartbeat;
}

describe('tcpCheck', () => {
  test('a listener answers with a latency; a closed port is refused; an unroutable address times out', async () => {
    const l = await tcpListener();
    try {
      const up = await tcpCheck('127.0.0.1', l.port, 2000);
      assert.equal(up.reachable, true);
      assert.equal(typeof up.latency_ms, 'number');
      assert.ok(up.latency_ms! >= 0 && up.latency_ms! < 2000);
      assert.equal(up.error, null);
      assert.equal(l.accepted() >= 1, true, 'the check really connected');
    } finally {
      await l.close();
    }
    const down = await tcpCheck('127.0.0.1', await closedPort(), 2000);
    assert.deepEqual(down, { reachable: false, latency_ms: null, error: 'connection refused', error_code: { code: 'rdp.check.refused' } });
    // TEST-NET-1 (RFC 5737) is never routed: no answer (or refused/unreachable where a firewall answers), within the limit
    const t0 = Date.now();
    const slow = await tcpCheck('192.0.2.1', 3389, 300);
    assert.equal(slow.reachable, false);
    assert.ok(Date.now() - t0 < 2000);
    assert.match(slow.error ?? '', /no answer within 300 ms|unreachable|refused/);
  });
});

describe('RDP status endpoints', () => {
  test('internal: TCP to target_host:target_port; reachable → unreachable is one rdp_status_changed, not on the first check', async () => {
    const target = await tcpListener();
    const route = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: target.port });
    const first = await status(route.id);
    assert.equal(first.reachable, true, JSON.stringify(first));
    assert.equal(first.path, 'internal');
    assert.equal(first.paths.length, 1);
    assert.deepEqual(
      { ...first.paths[0], latency_ms: typeof first.paths[0].latency_ms },
      { path: 'internal', host: '127.0.0.1', port: target.port, reachable: true, latency_ms: 'number', error: null, error_code: null },
    );
    assert.equal(first.latency_ms, first.paths[0].latency_ms);
    assert.equal(first.maintenance, null);
    assert.equal(c.events.filter((e) => e.type === 'rdp_status_changed' && e.rdp_route_id === route.id).length, 0, 'the first result is no change');

    // without refresh: the kept result (no new connection)
    const before = target.accepted();
    const cached = await status(route.id, false);
    assert.equal(cached.checked_at, first.checked_at);
    assert.equal(target.accepted(), before);

    await target.close();
    const down = await status(route.id);
    assert.equal(down.reachable, false);
    assert.equal(down.latency_ms, null);
    assert.match(down.error!, /internal: connection refused/);
    assert.deepEqual(down.error_code, { code: 'rdp.check.paths', params: { paths: [{ path: 'internal', reason: { code: 'rdp.check.refused' } }] } });
    const changed = c.events.filter((e) => e.type === 'rdp_status_changed' && e.rdp_route_id === route.id);
    assert.equal(changed.length, 1);
    assert.deepEqual(
      { ...changed[0], latency_ms: null },
      {
        type: 'rdp_status_changed',
        rdp_route_id: route.id,
        name: route.name,
        reachable: false,
        previous: true,
        latency_ms: null,
        path: 'internal',
        error: down.error,
        error_code: down.error_code,
      },
    );
    await status(route.id);
    assert.equal(c.events.filter((e) => e.type === 'rdp_status_changed' && e.rdp_route_id === route.id).length, 1, 'no change, no event');
    const act = (await c.api('/logs/activity?source=rdp&limit=100')).data.entries.filter(
      (e: ActivityEntry) => e.event_type === 'rdp_status_changed' && e.details?.rdp_route_id === route.id,
    );
    assert.equal(act.length, 1);
    assert.equal(act[0].severity, 'warning');
    // the reason travels as its message, so a reader's language words it (not the English text)
    assert.equal(act[0].code, 'rdp.unreachable');
    assert.deepEqual(act[0].params?.reason, down.error_code);
    assert.equal(act[0].message, `RDP route "${route.name}" is unreachable (internal: internal: connection refused)`);
  });

  test('external: the public address (listen_port), not the internal target port', async () => {
    const pub = await tcpListener();
    const closed = await closedPort();
    try {
      const route = await createRdp(c, { access_mode: 'external', target_host: '127.0.0.1', target_port: closed, listen_port: pub.port });
      const st = await status(route.id);
      assert.equal(st.reachable, true, JSON.stringify(st));
      assert.deepEqual(
        st.paths.map((p: PathCheck) => [p.path, p.host, p.port, p.reachable]),
        [['external', '127.0.0.1', pub.port, true]],
      );
      assert.ok(pub.accepted() >= 1);
    } finally {
      await pub.close();
    }
  });

  test('both: each path reported; reachable when either answers', async () => {
    const internal = await tcpListener();
    const closed = await closedPort();
    try {
      const route = await createRdp(c, {
        access_mode: 'both',
        target_host: '127.0.0.1',
        target_port: internal.port,
        external_host: 'localhost',
        listen_port: closed,
      });
      const st = await status(route.id);
      assert.equal(st.path, 'both');
      assert.deepEqual(
        st.paths.map((p: PathCheck) => [p.path, p.host, p.port, p.reachable]),
        [
          ['internal', '127.0.0.1', internal.port, true],
          ['external', 'localhost', closed, false],
        ],
      );
      assert.equal(st.reachable, true);
      assert.equal(st.error, null);
    } finally {
      await internal.close();
    }
  });

  test('gateway: the companion reports the linked L4 route; the gateway status counts', async () => {
    const g = await c.api('/peers', { method: 'POST', json: { name: `rdp-gw-${process.pid}`, is_gateway: true } });
    assert.equal(g.status, 201, JSON.stringify(g.data));
    const token: string = g.data.gateway!.apiToken;
    const route = await createRdp(c, {
      access_mode: 'gateway',
      gateway_peer_id: g.data.peer.id,
      target_host: '192.168.50.10',
      target_port: 3389,
      listen_port: 43389,
    });
    const l4 = route.gateway_l4_route_id;
    assert.ok(l4, 'the linked L4 route exists');

    let st = await status(route.id);
    assert.equal(st.reachable, false);
    assert.equal(st.gateway!.status, 'unknown');
    assert.match(st.paths[0].error!, /is unknown/);

    const hb = (reachable: boolean) =>
      c.s.req('/api/v1/gateway/heartbeat', {
        method: 'POST',
        json: heartbeat({ route_reachability: [{ route_id: l4, reachable, latency_ms: reachable ? 4.5 : null }] }),
        headers: { authorization: `Bearer ${token}` },
      });
    assert.equal((await hb(true)).status, 200);
    st = await status(route.id);
    assert.equal(st.reachable, true, JSON.stringify(st));
    assert.equal(st.latency_ms, 4.5);
    assert.deepEqual(st.gateway, { ...st.gateway, peer_id: g.data.peer.id, status: 'online', l4_route_id: l4 });
    assert.deepEqual(
      st.paths.map((p: PathCheck) => [p.path, p.host, p.port, p.reachable]),
      [['gateway', '192.168.50.10', 3389, true]],
    );

    assert.equal((await hb(false)).status, 200);
    st = await status(route.id);
    assert.equal(st.reachable, false);
    assert.match(st.error!, /cannot reach 192\.168\.50\.10:3389/);
    assert.equal(st.gateway!.status, 'offline', "the gateway is offline when none of its LAN targets answers; the route's own report still says why");
    assert.ok(c.events.some((e) => e.type === 'rdp_status_changed' && e.rdp_route_id === route.id && !e.reachable && e.path === 'gateway'));
  });

  test('the active maintenance window is part of the status', async () => {
    const target = await tcpListener();
    try {
      const route = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: target.port });
      const now = Date.now();
      const w = { from: new Date(now - 60_000).toISOString(), to: new Date(now + 3_600_000).toISOString(), note: 'patching' };
      const put = await c.api(`/rdp/${route.id}/maintenance`, { method: 'PUT', json: { windows: [w] } });
      assert.equal(put.status, 200, JSON.stringify(put.data));
      const st = await status(route.id, false);
      assert.equal(st.maintenance?.note, 'patching');
      const all = await c.api('/rdp/status');
      rdpStatusAllResponse.parse(all.data);
      assert.ok(all.data.summary.in_maintenance >= 1);
    } finally {
      await target.close();
    }
  });

  test('GET /rdp/status: every route with the counts; 404 and 400 for bad ids', async () => {
    const r = await c.api('/rdp/status?refresh=1');
    assert.equal(r.status, 200, JSON.stringify(r.data));
    rdpStatusAllResponse.parse(r.data);
    const { summary, routes } = r.data;
    const list = (await c.api('/rdp')).data;
    const ids = list.routes.map((x) => x.id).sort();
    assert.deepEqual(routes.map((x: RdpStatus) => x.rdp_route_id).sort(), ids);
    assert.equal(summary.total, routes.length);
    assert.equal(summary.reachable + summary.unreachable, summary.total);
    assert.equal(summary.reachable, routes.filter((x: RdpStatus) => x.reachable).length);
    assert.equal(summary.enabled + summary.disabled, summary.total);
    assert.equal((await c.api('/rdp/999999/status')).status, 404);
    const bad = await c.api('/rdp/status?refresh=maybe');
    assert.equal(bad.status, 400);
    assert.ok(bad.data.fields!.refresh);
  });

  test('scheduled: the status job checks every route on its interval (GATEHOUSE_RDP_STATUS_INTERVAL)', async () => {
    const target = await tcpListener();
    try {
      const route = await createRdp(c, { access_mode: 'internal', target_host: '127.0.0.1', target_port: target.port });
      assert.equal(c.s.deps.rdpStatus.cached(route.id), null);
      c.s.deps.rdpStatus.start();
      try {
        await waitFor(() => c.s.deps.rdpStatus.cached(route.id), 4000, { intervalMs: 100, what: 'the first scheduled check' });
        const first = c.s.deps.rdpStatus.cached(route.id);
        assert.equal(first?.reachable, true);
        await new Promise((r) => setTimeout(r, 1300)); // not a condition: one status interval (1 s) passes
        const later = c.s.deps.rdpStatus.cached(route.id);
        assert.ok(later!.checked_at > first!.checked_at, 'checked again one interval later');
      } finally {
        c.s.deps.rdpStatus.stop();
      }
    } finally {
      await target.close();
    }
  });
});
