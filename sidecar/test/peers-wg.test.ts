// WireGuardService against an in-memory driver that records every call (the real driver is proven
// end to end in test/e2e/peers.test.ts): one-peer reconciles, full sync, running totals across
// interface and service restarts, traffic samples and rollup, online/offline events, expiry.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from './lib/server.js';
import { manualClock } from '../src/util/clock.js';
import { WireGuardService, SERVER_KEY_SETTING } from '../src/wireguard/service.js';
import { DnsService } from '../src/dns/service.js';
import { SettingsStore } from '../src/settings/store.js';
import { PeersService } from '../src/peers/service.js';
import { DashboardService } from '../src/dashboard/service.js';
import { rollup, addSamples } from '../src/peers/traffic.js';
import { publicKeyFromPrivate } from '@gatehouse/common/wireguard/keys.js';
import type { Deps } from '../src/deps.js';
import type { EventOf } from '../src/events.js';
import type { WgDump, WgInterfaceSpec, WgPeerSpec, WireGuardDriver } from '@gatehouse/common/wireguard/types.js';
import { asRows } from './lib/rows.js';
import { findRowByPk } from '../src/db/define.js';

interface FakePeer extends WgPeerSpec {
  rx: number;
  tx: number;
  latestHandshake: number;
  endpointSeen: string | null;
}

/** An interface in memory: what `wg` would hold, plus counters the test drives. */
class FakeDriver implements WireGuardDriver {
  calls: string[] = [];
  /** every setPeer's spec, in order */
  sets: WgPeerSpec[] = [];
  ifaces = new Map<string, { spec: WgInterfaceSpec; peers: Map<string, FakePeer> }>();
  fresh = (p: WgPeerSpec): FakePeer => ({ ...p, rx: 0, tx: 0, latestHandshake: 0, endpointSeen: null });
  async up(spec: WgInterfaceSpec) {
    this.calls.push('up');
    const cur = this.ifaces.get(spec.iface);
    if (cur) return this.sync(spec).then(() => ({ mode: 'userspace' as const }));
    this.ifaces.set(spec.iface, { spec, peers: new Map(spec.peers.map((p) => [p.publicKey, this.fresh(p)])) });
    return { mode: 'userspace' as const };
  }
  async sync(spec: WgInterfaceSpec) {
    this.calls.push('sync');
    const cur = this.ifaces.get(spec.iface)!;
    const next = new Map<string, FakePeer>();
    for (const p of spec.peers) next.set(p.publicKey, { ...(cur.peers.get(p.publicKey) ?? this.fresh(p)), ...p });
    cur.peers = next;
    cur.spec = spec;
  }
  async setPeer(iface: string, p: WgPeerSpec) {
    this.calls.push(`set:${p.publicKey}`);
    this.sets.push(p);
    const cur = this.ifaces.get(iface)!;
    cur.peers.set(p.publicKey, { ...(cur.peers.get(p.publicKey) ?? this.fresh(p)), ...p });
  }
  async removePeer(iface: string, key: string) {
    this.calls.push(`remove:${key}`);
    this.ifaces.get(iface)!.peers.delete(key);
  }
  async dump(iface: string): Promise<WgDump | null> {
    const cur = this.ifaces.get(iface);
    if (!cur) return null;
    return {
      iface: { publicKey: publicKeyFromPrivate(cur.spec.privateKey), listenPort: cur.spec.listenPort, fwmark: null },
      peers: [...cur.peers.values()].map((p) => ({
        publicKey: p.publicKey,
        endpoint: p.endpointSeen,
        allowedIps: p.allowedIps,
        latestHandshake: p.latestHandshake,
        rx: p.rx,
        tx: p.tx,
        persistentKeepalive: null,
      })),
    };
  }
  async down(iface: string) {
    this.calls.push('down');
    this.ifaces.delete(iface);
  }
  peer(key: string): FakePeer | undefined {
    return this.ifaces.get('ghtest0')?.peers.get(key);
  }
}

let s: TestServer;
const clock = manualClock(Date.UTC(2026, 5, 1, 12, 0, 0));
let driver: FakeDriver;
let deps: Deps;
let wg: WireGuardService;
let peers: PeersService;

function build(d: FakeDriver): { wg: WireGuardService; peers: PeersService } {
  const w = new WireGuardService(deps, { driver: d, pollIntervalMs: 3_600_000, resyncIntervalMs: 3_600_000 });
  return { wg: w, peers: new PeersService(deps, w, new DnsService(deps, w)) };
}

before(async () => {
  s = await startTestServer({ GATEHOUSE_WG_SUBNET: '10.79.0.0/24', GATEHOUSE_WG_INTERFACE: 'ghtest0', GATEHOUSE_WG_PORT: '51777' }, { clock });
  // the same services, with manage on and the in-memory driver
  deps = { ...s.deps, config: { ...s.deps.config, wg: { ...s.deps.config.wg, manage: true } } } as Deps;
  driver = new FakeDriver();
  ({ wg, peers } = build(driver));
  await wg.start();
});
after(async () => {
  await wg.stop();
  await s.close();
});
beforeEach(() => {
  driver.calls = [];
});

describe('interface and reconcile', () => {
  test('start brings the interface up with the sealed server key, the port and the first address', async () => {
    const iface = driver.ifaces.get('ghtest0')!;
    assert.ok(iface);
    assert.equal(iface.spec.listenPort, 51777);
    assert.equal(iface.spec.address, '10.79.0.1/24');
    const sealed = await s.deps.settings.get<string | null>(SERVER_KEY_SETTING, null);
    assert.match(sealed!, /^v1:/);
    assert.ok(!sealed!.includes(iface.spec.privateKey));
    assert.equal(s.deps.crypto.open(sealed!), iface.spec.privateKey);
    assert.equal((await wg.serverKeys()).publicKey, publicKeyFromPrivate(iface.spec.privateKey));
    assert.deepEqual(await wg.healthCheck().then((h) => h.ok), true);
  });

  test('create, disable, enable, key change, expiry and delete each touch only that peer (no full sync)', async () => {
    const a = await peers.create({ name: 'wg-a' });
    const b = await peers.create({ name: 'wg-b' });
    assert.deepEqual(driver.calls, [`set:${a.public_key}`, `set:${b.public_key}`]);
    assert.deepEqual(driver.peer(a.public_key)!.allowedIps, [`${a.address}/32`]);
    assert.ok(driver.peer(a.public_key)!.presharedKey);
    driver.calls = [];
    await peers.setEnabled(a.id, false);
    assert.deepEqual(driver.calls, [`remove:${a.public_key}`]);
    assert.equal(driver.peer(a.public_key), undefined);
    assert.equal((await peers.get(a.id)).enabled, 0, 'kept in the database');
    await peers.setEnabled(a.id, true);
    assert.ok(driver.peer(a.public_key));
    driver.calls = [];
    const rekeyed = await peers.update(a.id, { regenerate_keys: true });
    assert.deepEqual(driver.calls, [`remove:${a.public_key}`, `set:${rekeyed.public_key}`]);
    driver.calls = [];
    await peers.update(b.id, { expires_at: clock() - 1000 });
    assert.deepEqual(driver.calls, [`remove:${b.public_key}`]);
    driver.calls = [];
    await peers.update(b.id, { description: 'no tunnel change' });
    assert.deepEqual(driver.calls, []);
    await peers.update(b.id, { expires_at: null });
    assert.ok(driver.peer(b.public_key));
    driver.calls = [];
    await peers.remove(rekeyed.id);
    assert.deepEqual(driver.calls, [`remove:${rekeyed.public_key}`]);
    assert.ok(!driver.calls.some((c) => c === 'sync' || c === 'up'));
  });

  test('full sync heals drift: a peer removed behind our back and a stranger added are put right', async () => {
    const p = await peers.create({ name: 'drift-1' });
    const iface = driver.ifaces.get('ghtest0')!;
    iface.peers.delete(p.public_key);
    iface.peers.set('S'.repeat(43) + '=', driver.fresh({ publicKey: 'S'.repeat(43) + '=', allowedIps: ['10.79.0.250/32'] }));
    const r = await wg.fullSync();
    assert.equal(r.created, false);
    assert.ok(driver.peer(p.public_key));
    assert.equal(driver.peer('S'.repeat(43) + '='), undefined);
  });

  test('a missing interface: health fails, the next full sync brings it up again with its peers', async () => {
    const p = await peers.create({ name: 'gone-1' });
    await driver.down('ghtest0');
    const hc = await wg.healthCheck();
    assert.equal(hc.ok, false);
    assert.equal(await wg.poll(), null);
    assert.equal(wg.isRunning, false);
    const r = await wg.fullSync();
    assert.equal(r.created, true);
    assert.ok(driver.peer(p.public_key));
    assert.equal((await wg.healthCheck()).ok, true);
  });

  test('restart: every active peer comes back, disabled ones do not', async () => {
    const on = await peers.create({ name: 'rs-on' });
    const off = await peers.create({ name: 'rs-off' });
    await peers.setEnabled(off.id, false);
    driver.calls = [];
    const r = await wg.restart();
    assert.deepEqual(driver.calls, ['down', 'up']);
    assert.ok(r.peers >= 1);
    assert.ok(driver.peer(on.public_key));
    assert.equal(driver.peer(off.public_key), undefined);
  });
});

describe('endpoints after a restart', () => {
  test('a fresh interface gets back the endpoints of peers seen in the last 24 h; a running one keeps what WireGuard learned', async () => {
    const recent = await peers.create({ name: 'ep-recent' });
    const stale = await peers.create({ name: 'ep-stale' });
    const v6 = await peers.create({ name: 'ep-v6' });
    const never = await peers.create({ name: 'ep-never' });
    const seen = (key: string, endpoint: string, agoMs: number) =>
      Object.assign(driver.peer(key)!, { endpointSeen: endpoint, latestHandshake: clock() - agoMs, rx: 1 });
    seen(recent.public_key, '192.0.2.10:51000', 60_000);
    seen(stale.public_key, '192.0.2.11:51000', 25 * 3600_000);
    seen(v6.public_key, '[2001:db8::5]:51820', 1000);
    await wg.poll();
    // a running interface: syncconf without endpoints (the learned ones stay)
    await wg.fullSync();
    assert.equal(driver.peer(recent.public_key)!.endpoint, undefined);
    // the interface is gone (sidecar restart, crash, /wg/restart): the next one starts with them
    await wg.restart();
    assert.equal(driver.peer(recent.public_key)!.endpoint, '192.0.2.10:51000');
    assert.equal(driver.peer(v6.public_key)!.endpoint, '[2001:db8::5]:51820');
    assert.equal(driver.peer(stale.public_key)!.endpoint, undefined, 'not seen for more than 24 h');
    assert.equal(driver.peer(never.public_key)!.endpoint, undefined, 'never connected');
    for (const p of [recent, stale, v6, never]) await peers.remove(p.id);
  });

  test('the carrier stores a new endpoint at once (storeEndpoints, between polls); a standby stores none', async () => {
    const p = await peers.create({ name: 'ep-watch' });
    const stored = async () => (await findRowByPk(s.deps.db.models.Peer, p.id, { attributes: ['endpoint'] }))?.endpoint ?? null;
    let carrier = false;
    wg.setCarrier(() => carrier);
    try {
      Object.assign(driver.peer(p.public_key)!, { endpointSeen: '192.0.2.30:51000', latestHandshake: clock(), rx: 1 });
      assert.equal(await wg.storeEndpoints(), 0, 'a standby');
      assert.equal(await stored(), null);
      carrier = true;
      assert.equal(await wg.storeEndpoints(), 1);
      assert.equal(await stored(), '192.0.2.30:51000');
      assert.equal(await wg.storeEndpoints(), 0, 'unchanged: nothing written');
      // the peer roams
      driver.peer(p.public_key)!.endpointSeen = '198.51.100.7:40000';
      assert.equal(await wg.storeEndpoints(), 1);
      assert.equal(await stored(), '198.51.100.7:40000');
    } finally {
      wg.setCarrier(() => true);
      await peers.remove(p.id);
    }
  });
});

describe('a re-enabled peer', () => {
  test('gets its last endpoint and one keepalive transaction (the server starts the handshake), then exactly its database state', async () => {
    const recent = await peers.create({ name: 're-recent' });
    const stale = await peers.create({ name: 're-stale' });
    const never = await peers.create({ name: 're-never' });
    const seen = (key: string, endpoint: string, agoMs: number) =>
      Object.assign(driver.peer(key)!, { endpointSeen: endpoint, latestHandshake: clock() - agoMs, rx: 1 });
    seen(recent.public_key, '192.0.2.20:51000', 60_000);
    seen(stale.public_key, '192.0.2.21:51000', 25 * 3600_000);
    await wg.poll();
    const ids = [recent.id, stale.id, never.id];
    await peers.batch('disable', ids);
    driver.sets = [];
    await peers.batch('enable', ids);
    const sent = (key: string) =>
      driver.sets.filter((p) => p.publicKey === key).map((p) => ({ endpoint: p.endpoint, persistentKeepalive: p.persistentKeepalive }));
    assert.deepEqual(sent(recent.public_key), [
      { endpoint: '192.0.2.20:51000', persistentKeepalive: 25 },
      { endpoint: undefined, persistentKeepalive: undefined },
    ]);
    assert.deepEqual(
      sent(stale.public_key),
      [{ endpoint: undefined, persistentKeepalive: undefined }],
      'not seen for more than 24 h: no endpoint to go back to',
    );
    assert.deepEqual(sent(never.public_key), [{ endpoint: undefined, persistentKeepalive: undefined }], 'never connected');
    // a change to a peer that is on the interface already is one plain set (its session is alive)
    driver.sets = [];
    await wg.reconcilePeer(recent);
    assert.deepEqual(sent(recent.public_key), [{ endpoint: undefined, persistentKeepalive: undefined }]);
    for (const id of ids) await peers.remove(id);
  });
});

describe('a cluster standby and its take-over', () => {
  test('a standby restores no endpoint and starts no handshake (it would take the tunnel from the carrier); takeOver() gives every recent peer its endpoint and a keepalive transaction', async () => {
    const recent = await peers.create({ name: 'to-recent' });
    const never = await peers.create({ name: 'to-never' });
    Object.assign(driver.peer(recent.public_key)!, { endpointSeen: '192.0.2.30:51000', latestHandshake: clock() - 60_000, rx: 1 });
    await wg.poll();
    let carrier = false;
    wg.setCarrier(() => carrier);
    try {
      // a fresh interface on a standby: the peers without endpoints
      await wg.restart();
      assert.equal(driver.peer(recent.public_key)!.endpoint, undefined);
      // a peer re-enabled while standing by: one plain set
      await peers.setEnabled(recent.id, false);
      driver.sets = [];
      await peers.setEnabled(recent.id, true);
      const sent = (key: string) =>
        driver.sets.filter((p) => p.publicKey === key).map((p) => ({ endpoint: p.endpoint, persistentKeepalive: p.persistentKeepalive }));
      assert.deepEqual(sent(recent.public_key), [{ endpoint: undefined, persistentKeepalive: undefined }]);
      // it becomes the carrier
      carrier = true;
      driver.sets = [];
      assert.equal(await wg.takeOver(), 1);
      assert.deepEqual(sent(recent.public_key).slice(0, 2), [
        { endpoint: '192.0.2.30:51000', persistentKeepalive: 25 },
        { endpoint: '192.0.2.30:51000', persistentKeepalive: undefined },
      ]);
      assert.deepEqual(sent(never.public_key), [], 'never connected: nothing to go back to');
      assert.equal(driver.peer(recent.public_key)!.endpoint, '192.0.2.30:51000');
    } finally {
      wg.setCarrier(() => true);
      for (const id of [recent.id, never.id]) await peers.remove(id);
    }
  });
});

describe('poller', () => {
  test('running totals survive interface restarts and service restarts; samples land in 5-minute buckets', async () => {
    const p = await peers.create({ name: 'poll-1' });
    const fp = () => driver.peer(p.public_key)!;
    fp().rx = 1000;
    fp().tx = 500;
    fp().latestHandshake = clock() - 5000;
    fp().endpointSeen = '192.0.2.7:40000';
    await wg.poll();
    let v = await peers.get(p.id);
    assert.equal(v.total_rx, 1000);
    assert.equal(v.total_tx, 500);
    assert.equal(v.latestHandshake, clock() - 5000);
    assert.equal(v.endpoint, '192.0.2.7:40000');
    assert.equal(v.isOnline, true);
    clock.advance(10_000);
    fp().rx = 1600;
    await wg.poll();
    v = await peers.get(p.id);
    assert.equal(v.total_rx, 1600);
    assert.equal(wg.trafficRates.rx, 60, '600 bytes in 10 s');
    // the interface restarts: counters start again from zero (lower than the last raw value)
    await wg.restart();
    fp().rx = 300;
    fp().tx = 50;
    await wg.poll();
    v = await peers.get(p.id);
    assert.equal(v.total_rx, 1900);
    assert.equal(v.total_tx, 550);
    // toggle off/on re-creates the peer on the interface: counters restart even if they climb past the old raw value
    await peers.setEnabled(p.id, false);
    await peers.setEnabled(p.id, true);
    fp().rx = 5000;
    await wg.poll();
    assert.equal((await peers.get(p.id)).total_rx, 6900);
    // a new service instance on a fresh interface (sidecar restart): totals continue
    await wg.stop();
    assert.equal(driver.ifaces.size, 0);
    ({ wg, peers } = build(driver));
    await wg.start();
    fp().rx = 100;
    await wg.poll();
    assert.equal((await peers.get(p.id)).total_rx, 7000);
    // counters reset behind our back (interface re-created outside the service): the lower raw value is all new
    fp().rx = 40;
    await wg.poll();
    assert.equal((await peers.get(p.id)).total_rx, 7040);
    // traffic samples: every delta in the 5-minute bucket of its poll
    const rows = asRows<'PeerTraffic'>(await s.deps.db.models.PeerTraffic.findAll({ where: { peer_id: p.id }, raw: true }));
    assert.equal(
      rows.reduce((a, r) => a + Number(r.rx), 0),
      7040,
    );
    assert.equal(
      rows.reduce((a, r) => a + Number(r.tx), 0),
      550,
    );
    assert.ok(rows.every((r) => r.resolution === '5m' && Number(r.bucket_start) % 300_000 === 0));
  });

  test("a cluster: two nodes poll their own interfaces into the shared rows; the totals add up and neither node takes the other's counters as its baseline", async () => {
    const p = await peers.create({ name: 'poll-cluster' });
    const node = (name: string) => {
      const d = new FakeDriver();
      const cfg = { ...deps.config, dataDir: fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-wg-${name}-`)), cluster: { enabled: true, nodeName: name } };
      return {
        d,
        dir: cfg.dataDir,
        make: () => new WireGuardService({ ...deps, config: cfg } as Deps, { driver: d, pollIntervalMs: 3_600_000, resyncIntervalMs: 3_600_000 }),
      };
    };
    const a = node('a');
    const b = node('b');
    const wa = a.make();
    let wb = b.make();
    // fullSync brings each node's interface up (start() would also schedule its jobs, on the one scheduler)
    await wa.fullSync();
    await wb.fullSync();
    const on = (n: { d: FakeDriver }) => n.d.ifaces.get('ghtest0')!.peers.get(p.public_key)!;
    const before = (await peers.get(p.id)).total_rx;
    on(a).rx = 1000;
    await wa.poll();
    await wb.poll(); // b's interface moved nothing: its zero is no baseline for a
    on(a).rx = 1500;
    await wa.poll();
    assert.equal((await peers.get(p.id)).total_rx - before, 1500);
    on(b).rx = 200;
    await wb.poll();
    await wa.poll();
    assert.equal((await peers.get(p.id)).total_rx - before, 1700);
    // b's sidecar restarts while its interface keeps running: its baseline comes back from its data directory
    wb = b.make();
    await wb.fullSync();
    on(b).rx = 300;
    await wb.poll();
    assert.equal((await peers.get(p.id)).total_rx - before, 1800, 'only the 100 bytes since b last polled');
    // a's interface is re-created: its lower counter is all new, b unaffected
    on(a).rx = 50;
    await wa.poll();
    assert.equal((await peers.get(p.id)).total_rx - before, 1850);
    const row = asRows<'Peer'>(await s.deps.db.models.Peer.findAll({ where: { id: p.id }, raw: true }))[0];
    assert.equal(Number(row.last_raw_rx), 0, "the shared row keeps no node's raw counter");
    fs.rmSync(a.dir, { recursive: true, force: true });
    fs.rmSync(b.dir, { recursive: true, force: true });
  });

  test('a cluster of nodes starting at once on an empty database ends with one server key: the first stored wins', async () => {
    const kept = await s.deps.settings.get<string | null>(SERVER_KEY_SETTING, null);
    await s.deps.db.models.Setting.destroy({ where: { key: SERVER_KEY_SETTING } });
    try {
      // two nodes, each with its own settings cache (loaded before either stored a key)
      const nodes = [0, 1].map(() => {
        const settings = new SettingsStore(s.deps.db.models, clock);
        return { settings, wg: new WireGuardService({ ...deps, settings } as Deps, { driver: new FakeDriver() }) };
      });
      for (const n of nodes) assert.equal(await n.settings.get<string | null>(SERVER_KEY_SETTING, null), null);
      const keys = await Promise.all(nodes.map((n) => n.wg.serverKeys()));
      assert.equal(keys[0].publicKey, keys[1].publicKey);
      const stored = s.deps.crypto.open((await new SettingsStore(s.deps.db.models, clock).get<string>(SERVER_KEY_SETTING, '')) || '');
      assert.equal(publicKeyFromPrivate(stored), keys[0].publicKey);
    } finally {
      await s.deps.settings.set(SERVER_KEY_SETTING, kept);
    }
  });

  test('online/offline transitions become peer_online / peer_offline activity events', async () => {
    const p = await peers.create({ name: 'evt-1' });
    const fp = driver.peer(p.public_key)!;
    const events = async () =>
      (await s.deps.activity.query({ limit: 1000 })).entries
        .filter((e) => e.details?.peer_id === p.id && /^peer_(on|off)line$/.test(e.event_type))
        .map((e) => e.event_type);
    await wg.poll();
    assert.deepEqual(await events(), []);
    fp.latestHandshake = clock();
    fp.rx = 10;
    await wg.poll();
    assert.deepEqual(await events(), ['peer_online']);
    await wg.poll();
    assert.deepEqual(await events(), ['peer_online'], 'no event without a transition');
    clock.advance(181_000);
    await wg.poll();
    assert.deepEqual((await events()).sort(), ['peer_offline', 'peer_online']);
    assert.equal((await peers.get(p.id)).isOnline, false);
    // a follower of a cluster follows the transitions without announcing them (the leader does, once)
    s.deps.scheduler.setLeadership(() => false);
    try {
      fp.latestHandshake = clock();
      await wg.poll();
      assert.deepEqual((await events()).sort(), ['peer_offline', 'peer_online']);
    } finally {
      s.deps.scheduler.setLeadership(() => true);
    }
    await wg.poll();
    assert.deepEqual((await events()).sort(), ['peer_offline', 'peer_online'], 'nor does it announce the old one when it leads');
  });

  test('peer_traffic: the rates of the peers that moved data, each once more at 0 when it stops; nothing while all are idle', async () => {
    const got: EventOf<'peer_traffic'>[] = [];
    const off = s.deps.events.on('peer_traffic', (e) => void got.push(e));
    try {
      const a = await peers.create({ name: 'rate-a' });
      const b = await peers.create({ name: 'rate-b' });
      // settle: peers of earlier tests that moved data get their last zero
      await wg.poll();
      clock.advance(10_000);
      await wg.poll();
      got.length = 0;
      driver.peer(a.public_key)!.rx = 10_000;
      driver.peer(a.public_key)!.tx = 2_000;
      clock.advance(10_000);
      await wg.poll();
      assert.deepEqual(got, [
        {
          type: 'peer_traffic',
          interval_s: 10,
          rx_rate: 1000,
          tx_rate: 200,
          peers: [{ peer_id: a.id, rx_rate: 1000, tx_rate: 200, total_rx: 10_000, total_tx: 2_000 }],
        },
      ]);
      driver.peer(a.public_key)!.rx = 15_000;
      driver.peer(b.public_key)!.tx = 40_000;
      clock.advance(20_000);
      await wg.poll();
      assert.deepEqual(got[1].peers, [
        { peer_id: a.id, rx_rate: 250, tx_rate: 0, total_rx: 15_000, total_tx: 2_000 },
        { peer_id: b.id, rx_rate: 0, tx_rate: 2_000, total_rx: 0, total_tx: 40_000 },
      ]);
      assert.deepEqual([got[1].interval_s, got[1].rx_rate, got[1].tx_rate], [20, 250, 2000]);
      // both stop: one event with zeros, then silence
      clock.advance(10_000);
      await wg.poll();
      assert.deepEqual(
        got[2].peers.map((p) => [p.peer_id, p.rx_rate, p.tx_rate, p.total_rx, p.total_tx]),
        [
          [a.id, 0, 0, 15_000, 2_000],
          [b.id, 0, 0, 0, 40_000],
        ],
      );
      assert.deepEqual([got[2].rx_rate, got[2].tx_rate], [0, 0]);
      clock.advance(10_000);
      await wg.poll();
      clock.advance(10_000);
      await wg.poll();
      assert.equal(got.length, 3, 'nothing while all peers are idle');
      // a peer deleted while moving data gets its zero too
      driver.peer(b.public_key)!.tx = 50_000;
      clock.advance(10_000);
      await wg.poll();
      assert.deepEqual(
        got[3].peers.map((p) => [p.peer_id, p.tx_rate]),
        [[b.id, 1000]],
      );
      await peers.remove(b.id);
      clock.advance(10_000);
      await wg.poll();
      assert.deepEqual(
        got[4].peers.map((p) => [p.peer_id, p.tx_rate, p.total_tx]),
        [[b.id, 0, 0]],
      );
    } finally {
      off();
    }
  });

  test('wireguard_state: the interface going away, coming back, a full sync failing and recovering', async () => {
    const got: EventOf<'wireguard_state'>[] = [];
    const off = s.deps.events.on('wireguard_state', (e) => void got.push(e));
    try {
      await wg.poll();
      await wg.fullSync();
      assert.deepEqual(got, [], 'no event without a change');
      driver.ifaces.delete('ghtest0');
      await wg.poll();
      await wg.poll();
      assert.deepEqual(got, [{ type: 'wireguard_state', interface: 'ghtest0', running: false, mode: null, error: null, reason: 'interface missing' }]);
      await wg.fullSync();
      assert.deepEqual(got[1], { type: 'wireguard_state', interface: 'ghtest0', running: true, mode: 'userspace', error: null, reason: 'interface up' });
      const sync = driver.sync;
      driver.sync = async () => {
        throw new Error('wg syncconf: boom');
      };
      try {
        await assert.rejects(wg.fullSync(), /boom/);
        await assert.rejects(wg.fullSync(), /boom/);
      } finally {
        driver.sync = sync;
      }
      assert.equal(got.length, 3, 'a repeated failure is one event');
      assert.deepEqual(got[2], {
        type: 'wireguard_state',
        interface: 'ghtest0',
        running: true,
        mode: 'userspace',
        error: 'wg syncconf: boom',
        reason: 'sync failed',
      });
      await wg.fullSync();
      assert.deepEqual(got[3], { type: 'wireguard_state', interface: 'ghtest0', running: true, mode: 'userspace', error: null, reason: 'synced' });
    } finally {
      off();
    }
  });

  test('dashboard: online count, today traffic, running', async () => {
    const dash = new DashboardService(deps, wg);
    const p = await peers.create({ name: 'dash-1' });
    const fp = driver.peer(p.public_key)!;
    fp.latestHandshake = clock();
    fp.rx = 4000;
    fp.tx = 1000;
    await wg.poll();
    const st = await dash.stats();
    assert.ok(st.peers.online >= 1);
    assert.equal(st.wireguard.running, true);
    assert.ok(st.traffic.todayUpload >= 4000);
    assert.ok(st.traffic.todayDownload >= 1000);
  });
});

describe('expiry', () => {
  test('an expired peer leaves the tunnel, stays in the database, and the expiry is logged once', async () => {
    await wg.nudgesDone(); // the handshake nudges of an earlier test's fresh interface would show in driver.calls
    const p = await peers.create({ name: 'exp-1', expires_at: clock() + 60_000 });
    assert.ok(driver.peer(p.public_key));
    assert.equal(await wg.checkExpiry(), 0);
    clock.advance(61_000);
    driver.calls = [];
    assert.equal(await wg.checkExpiry(), 1);
    assert.deepEqual(driver.calls, [`remove:${p.public_key}`]);
    const v = await peers.get(p.id);
    assert.equal(v.expired, true);
    assert.equal(v.enabled, 1);
    assert.equal(await wg.checkExpiry(), 0, 'logged once');
    const logged = (await s.deps.activity.query({ event_type: 'peer_expired' })).entries.filter((e) => e.details?.peer_id === p.id);
    assert.equal(logged.length, 1);
    assert.equal(logged[0].severity, 'warning');
    // a full sync leaves it out too
    await wg.fullSync();
    assert.equal(driver.peer(p.public_key), undefined);
  });

  test('two expiry checks at once (two nodes that both believe they lead) announce an expiry once', async () => {
    const p = await peers.create({ name: 'exp-race', expires_at: clock() + 60_000 });
    clock.advance(61_000);
    const counts = await Promise.all([wg.checkExpiry(), wg.checkExpiry(), wg.checkExpiry()]);
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      1,
      `announced ${JSON.stringify(counts)}`,
    );
    const logged = (await s.deps.activity.query({ event_type: 'peer_expired' })).entries.filter((e) => e.details?.peer_id === p.id);
    assert.equal(logged.length, 1);
  });
});

describe('traffic rollup', () => {
  test('5m → 1h after 48 h, 1h → 1d after 30 d, 1d dropped after 400 d; sums preserved', async () => {
    const p = await peers.create({ name: 'roll-1' });
    const now = Date.UTC(2026, 5, 1, 12, 0, 0);
    const H = 3_600_000;
    const D = 24 * H;
    const sq = s.deps.db.sequelize;
    // three 5-minute samples in one hour 3 days ago, one 5-minute sample 1 hour ago
    const oldHour = Math.floor((now - 3 * D) / H) * H;
    for (const [t, rx] of [
      [oldHour, 1],
      [oldHour + 300_000, 2],
      [oldHour + 3_300_000, 4],
      [now - H, 8],
    ] as [number, number][])
      await addSamples(sq, [{ peerId: p.id, rx, tx: rx * 10 }], t);
    // two 1-hour buckets on one day 40 days ago and a 1-day bucket 500 days ago
    const oldDay = Math.floor((now - 40 * D) / D) * D;
    const PT = s.deps.db.models.PeerTraffic;
    await PT.create({ peer_id: p.id, resolution: '1h', bucket_start: oldDay + 2 * H, rx: 16, tx: 0 });
    await PT.create({ peer_id: p.id, resolution: '1h', bucket_start: oldDay + 5 * H, rx: 32, tx: 0 });
    await PT.create({ peer_id: p.id, resolution: '1d', bucket_start: now - 500 * D, rx: 64, tx: 0 });
    const r = await rollup(sq, now);
    assert.deepEqual(r, { folded5m: 3, folded1h: 2, dropped1d: 1 });
    const rows = asRows<'PeerTraffic'>(await PT.findAll({ where: { peer_id: p.id }, order: [['bucket_start', 'ASC']], raw: true })).map((x) => [
      x.resolution,
      Number(x.bucket_start),
      Number(x.rx),
      Number(x.tx),
    ]);
    assert.deepEqual(rows, [
      ['1d', oldDay, 48, 0],
      ['1h', oldHour, 7, 70],
      ['5m', Math.floor((now - H) / 300_000) * 300_000, 8, 80],
    ]);
    // idempotent
    assert.deepEqual(await rollup(sq, now), { folded5m: 0, folded1h: 0, dropped1d: 0 });
  });
});
