// Faults, nothing lost: the sidecar killed with SIGKILL during a stream of concurrent
// writes. The real service (sidecar/src/main.ts, its own process) manages Caddy and the WireGuard
// interface (wireguard-go); one real peer in a network namespace has its tunnel up and a backend
// behind it. Before the kill: a route's circuit breaker is open (the backend answered 500) and the
// peer's traffic totals are stored. Six loops then write through the API at once (peers, routes,
// the lockout setting) and the sidecar is killed with SIGKILL in the middle of them (Caddy and
// wireguard-go outlive it). After a restart on the same data directory:
// - every write that was acknowledged is present; nothing half-written is (integrity_check,
//   foreign_key_check; every peer whole: key, unique address in the subnet; every route's peer
//   exists); a write that got no answer is either wholly there or absent; refused ones are absent;
//   the lockout setting holds the last acknowledged value or one that was in flight;
// - Caddy and WireGuard are reconciled with the database: Caddy's live configuration (admin API)
//   serves exactly the enabled routes' hosts, `wg show` holds exactly the active peers;
// - the circuit breaker is still open (state in the database and through Caddy) and the traffic
//   totals are kept (no lower than before the kill).
//   bash scripts/test-reliability.sh test/reliability/faults-sidecar-kill.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createNetwork, skipReason, type Network } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { CADDY, e2eServerEnv } from '../lib/e2e-server.js';
import { recordFigure } from './lib/figures.js';
import { caddyHosts, processToken, send, SidecarProcess, sqliteRows, wgPeers, type Write } from './lib/faults-harness.js';

const reason =
  skipReason(['wireguard-go', 'wg', 'ping', 'sqlite3']) ??
  (fs.existsSync(CADDY) ? null : `no ${CADDY}`) ??
  (process.env.TEST_DATABASE_URL ? 'SQLite (the data directory holds the database)' : null);
const CASE = 'sidecar SIGKILL during writes';
const ADMIN = { username: 'admin', password: 'faults-kill-pass-1' };

test(
  'sidecar killed with SIGKILL during concurrent writes: acknowledged writes kept, nothing half-written, Caddy and WireGuard reconciled, breaker and traffic totals kept',
  { skip: reason ?? false, timeout: 240_000 },
  async (t) => {
    const n = (process.pid % 200) + 20;
    const network: Network = await createNetwork({ prefix: 'fkill' });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-faults-kill-'));
    const iface = `ghfk${process.pid % 1000}`;
    const nsA = await network.addNamespace('pa');
    const link = await network.link(null, nsA, `10.218.${n}.1/24`, `10.218.${n}.2/24`);
    const base = await e2eServerEnv({ iface, subnet: `10.219.${n}`, publicHost: link.addrA, proxyBind: '127.0.0.1' });
    const sp = new SidecarProcess({
      ...base.env,
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_ADMIN_USER: ADMIN.username,
      GATEHOUSE_ADMIN_PASSWORD: ADMIN.password,
      GATEHOUSE_WG_POLL_INTERVAL: '1',
    });
    t.after(async () => {
      await sp.stop().catch(() => undefined); // stops Caddy and takes the interface down
      await network.cleanup();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const { ports, serverIp } = base;
    const db = path.join(dataDir, 'gatehouse.db');
    await sp.start();
    await sp.ready();
    const h = { authorization: `Bearer ${await processToken(sp, ADMIN)}` };
    const api = <P extends string, M extends string = 'GET'>(p: P, method?: M, json?: unknown, timeoutMs?: number) =>
      sp.req<`/api/v1${P}`, M>(`/api/v1${p}`, { method, json, headers: h, timeoutMs });

    // ---- a real tunnel with a backend, a route whose breaker is open, traffic totals stored
    const peer = (await api('/peers', 'POST', { name: 'kill-tunnel' })).data.peer;
    await network.bringUpPeer(nsA, network.ifName('a'), (await api(`/peers/${peer.id}/config`)).data as string);
    await waitFor(async () => (await network.ping(nsA, serverIp, { count: 1, timeoutS: 1 })).ok, 20_000, { what: 'the tunnel' });
    const ipA = peer.address.split('/')[0];
    const app = await network.startHttpServer(nsA, ipA, 8080, { name: 'app' });
    const ctl = (body: unknown) => send(app.host, app.port, `${app.host}:${app.port}`, '/__ctl', { method: 'POST', json: body });
    const cb = await api('/routes', 'POST', {
      peer_id: peer.id,
      target_port: 8080,
      domain: 'cb.kill.test',
      circuit_breaker_enabled: true,
      circuit_breaker_threshold: 2,
      circuit_breaker_timeout: 600,
    });
    assert.equal(cb.status, 201, JSON.stringify(cb.data));
    const visit = (d: string) => send('127.0.0.1', ports.http, d, '/', { timeoutMs: 5000 });
    assert.equal((await ctl({ status: 500 })).status, 200);
    for (let i = 0; i < 2; i++) assert.equal((await visit('cb.kill.test')).status, 500);
    assert.equal((await visit('cb.kill.test')).status, 503, 'the breaker is open');
    await waitFor(async () => (await api(`/routes/${cb.data.route.id}`)).data.route.cb_opened_at !== null, 10_000, { what: 'the open breaker stored' });
    const cbBefore = (await api(`/routes/${cb.data.route.id}`)).data.route;
    await ctl({ status: null });
    await network.ping(nsA, serverIp, { count: 20, intervalS: 0.01, timeoutS: 1 });
    await waitFor(async () => (await api(`/peers/${peer.id}`)).data.peer.total_rx > 2000, 10_000, { what: 'the traffic totals stored' });
    await new Promise((r) => setTimeout(r, 1500)); // not a condition: one more traffic poll, so the totals read are settled
    const totalsBefore = (await api(`/peers/${peer.id}`)).data.peer;

    // ---- six concurrent write loops, SIGKILL in the middle
    const writes: Write[] = [];
    let running = true;
    let seq = 0;
    const write = async (w: Omit<Write, 'outcome' | 'start'>, p: string, method: string, json: unknown) => {
      const rec: Write = { ...w, outcome: 'no answer', start: Date.now() };
      writes.push(rec);
      try {
        const r = await api(p, method, json, 20_000);
        rec.status = r.status;
        rec.outcome = r.status < 300 ? 'acked' : 'refused';
        rec.end = Date.now();
      } catch {
        running = false; // the sidecar is gone: stop this loop
      }
    };
    const loops = [0, 1, 2, 3, 4, 5].map(async (l) => {
      while (running) {
        const k = seq++;
        if (l < 2) await write({ kind: 'peer', key: `kill-${k}` }, '/peers', 'POST', { name: `kill-${k}` });
        else if (l < 4)
          await write({ kind: 'route', key: `k${k}.kill.test` }, '/routes', 'POST', { peer_id: peer.id, target_port: 8080, domain: `k${k}.kill.test` });
        else await write({ kind: 'setting', key: 'lockout', value: 3 + (k % 50) }, '/settings/security', 'PUT', { lockout: { max_attempts: 3 + (k % 50) } });
      }
    });
    await waitFor(() => writes.filter((w) => w.outcome === 'acked').length >= 30, 60_000, { what: '30 acknowledged writes' });
    sp.kill('SIGKILL');
    await sp.exited;
    await Promise.all(loops);
    const acked = writes.filter((w) => w.outcome === 'acked');
    const open = writes.filter((w) => w.outcome === 'no answer');
    const refused = writes.filter((w) => w.outcome === 'refused');
    t.diagnostic(
      `killed after ${writes.length} writes: ${acked.length} acknowledged, ${refused.length} refused (${[...new Set(refused.map((w) => w.status))].join(',')}), ${open.length} without an answer`,
    );

    const t0 = Date.now();
    await sp.start();
    await sp.ready();
    const readyAt = Date.now();
    const restart = readyAt - t0;

    // ---- the database: whole, every acknowledged write there
    const integrity = sqliteRows<{ integrity_check: string }>(db, 'PRAGMA integrity_check')[0].integrity_check;
    const fk = sqliteRows(db, 'PRAGMA foreign_key_check');
    const peers = sqliteRows<{ id: number; name: string; public_key: string; address: string; enabled: number; expires_at: number | null }>(
      db,
      'SELECT id, name, public_key, address, enabled, expires_at FROM peers',
    );
    const routes = sqliteRows<{ id: number; domain: string; peer_id: number; enabled: number }>(db, 'SELECT id, domain, peer_id, enabled FROM routes');
    const lockout = Number(sqliteRows<{ value: string }>(db, "SELECT value FROM settings WHERE key = 'security.lockout.max_attempts'")[0]?.value);
    const has = (w: Write) => (w.kind === 'peer' ? peers.some((p) => p.name === w.key) : w.kind === 'route' ? routes.some((r) => r.domain === w.key) : true);
    const lost = acked.filter((w) => !has(w));
    const ghost = refused.filter((w) => w.kind !== 'setting' && has(w));
    const written = new Set([...writes.map((w) => w.key), 'kill-tunnel', 'cb.kill.test']);
    const strangers = [...peers.map((p) => p.name), ...routes.map((r) => r.domain)].filter((k) => !written.has(k));
    const addresses = peers.map((p) => p.address);
    const halfPeers = peers.filter((p) => !/^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/.test(p.public_key) || !p.address?.startsWith(`10.219.${n}.`));
    const orphanRoutes = routes.filter((r) => !peers.some((p) => p.id === r.peer_id));
    const lastAcked = acked
      .filter((w) => w.kind === 'setting')
      .sort((a, b) => a.end! - b.end!)
      .at(-1);
    const settingOk = [
      lastAcked?.value,
      ...open.filter((w) => w.kind === 'setting').map((w) => w.value),
      ...writes.filter((w) => w.kind === 'setting' && w.start > (lastAcked?.start ?? 0)).map((w) => w.value),
    ].includes(lockout);
    t.diagnostic(
      `after the restart (${restart} ms): integrity ${integrity}; ${peers.length} peers, ${routes.length} routes; lockout ${lockout} (last acknowledged ${lastAcked?.value}); lost ${lost.length}, refused yet present ${ghost.length}, unknown rows ${strangers.length}, half-written peers ${halfPeers.length}, routes without peer ${orphanRoutes.length}`,
    );

    // ---- Caddy and WireGuard reconciled with the database
    const wantHosts = new Set(routes.filter((r) => r.enabled).map((r) => r.domain));
    const wantKeys = new Set(peers.filter((p) => p.enabled && (p.expires_at === null || p.expires_at > Date.now())).map((p) => p.public_key));
    let caddyOk = false;
    let wgOk = false;
    const reconciledIn = await waitFor(
      async () => {
        const hosts = await caddyHosts(ports.admin);
        caddyOk = hosts.size === wantHosts.size && [...wantHosts].every((d) => hosts.has(d));
        const keys = wgPeers(iface);
        wgOk = keys !== null && keys.size === wantKeys.size && [...wantKeys].every((k) => keys.has(k));
        return caddyOk && wgOk ? Date.now() - readyAt : 0;
      },
      10_000,
      { what: 'Caddy and WireGuard holding what the database holds' },
    ).catch(() => NaN);

    // ---- breaker and traffic totals kept
    const cbAfter = (await api(`/routes/${cb.data.route.id}`)).data.route;
    const throughCaddy = await visit('cb.kill.test');
    const totalsAfter = (await api(`/peers/${peer.id}`)).data.peer;
    t.diagnostic(
      `breaker before ${JSON.stringify([cbBefore.cb_failure_count, cbBefore.cb_opened_at])}, after ${JSON.stringify([cbAfter.cb_failure_count, cbAfter.cb_opened_at])}, through Caddy ${throughCaddy.status}; totals before ${totalsBefore.total_rx}/${totalsBefore.total_tx}, after ${totalsAfter.total_rx}/${totalsAfter.total_tx}`,
    );

    recordFigure({ test: CASE, figure: 'writes at the kill', value: `${acked.length} acknowledged, ${open.length} without answer, ${refused.length} refused` });
    recordFigure({ test: CASE, figure: 'acknowledged writes lost', value: `${lost.length} of ${acked.length}`, target: '0', ok: lost.length === 0 });
    recordFigure({
      test: CASE,
      figure: 'half-written or unknown rows',
      value: String(halfPeers.length + orphanRoutes.length + strangers.length + ghost.length + fk.length),
      target: '0',
      ok: halfPeers.length + orphanRoutes.length + strangers.length + ghost.length + fk.length === 0,
    });
    recordFigure({ test: CASE, figure: 'integrity_check after the restart', value: integrity, target: 'ok', ok: integrity === 'ok' });
    recordFigure({
      test: CASE,
      figure: 'Caddy and WireGuard reconciled after the restart',
      value: `${reconciledIn} ms after ready (process start to ready ${restart} ms; ${wantHosts.size} routes, ${wantKeys.size} peers)`,
      target: 'reconciled',
      ok: caddyOk && wgOk,
    });
    recordFigure({
      test: CASE,
      figure: 'breaker state and traffic totals kept',
      value: `breaker ${cbAfter.cb_opened_at === cbBefore.cb_opened_at && throughCaddy.status === 503 ? 'open' : 'LOST'}, totals ${totalsAfter.total_rx >= totalsBefore.total_rx && totalsAfter.total_tx >= totalsBefore.total_tx ? 'kept' : 'LOST'}`,
      target: 'kept',
      ok: cbAfter.cb_opened_at === cbBefore.cb_opened_at && throughCaddy.status === 503 && totalsAfter.total_rx >= totalsBefore.total_rx,
    });

    assert.equal(integrity, 'ok');
    assert.deepEqual(fk, [], 'no dangling reference');
    assert.deepEqual(
      lost.map((w) => w.key),
      [],
      'every acknowledged write is present',
    );
    assert.deepEqual(
      ghost.map((w) => w.key),
      [],
      'no refused write is present',
    );
    assert.deepEqual(strangers, [], 'no row nobody wrote');
    assert.deepEqual(
      halfPeers.map((p) => p.name),
      [],
      'every peer whole',
    );
    assert.equal(new Set(addresses).size, addresses.length, 'peer addresses unique');
    assert.deepEqual(
      orphanRoutes.map((r) => r.domain),
      [],
      "every route's peer exists",
    );
    assert.ok(settingOk, `the lockout setting (${lockout}) is the last acknowledged value (${lastAcked?.value}) or one in flight`);
    assert.ok(caddyOk, "Caddy's live configuration serves exactly the database's routes");
    assert.ok(wgOk, 'the interface holds exactly the active peers');
    assert.equal(cbAfter.cb_opened_at, cbBefore.cb_opened_at, 'breaker state kept');
    assert.equal(cbAfter.cb_failure_count, cbBefore.cb_failure_count);
    assert.equal(throughCaddy.status, 503, 'the breaker is still open in Caddy');
    assert.ok(totalsAfter.total_rx >= totalsBefore.total_rx && totalsAfter.total_tx >= totalsBefore.total_tx, 'traffic totals kept');
  },
);
