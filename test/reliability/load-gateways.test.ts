// Load: 1,000 gateway companions polling config/check and heartbeating at their real interval while
// an admin creates routes.
//
// The sidecar runs as a child process with the real custom Caddy (scripts/bench/lib.ts
// startBenchSidecar; WireGuard not managed, the peer subnet inside 127.0.0.0/8). 1,000 gateway peers
// are created through POST /api/v1/peers (is_gateway: true), which returns each one's tokens and
// gateway.env; each gets one HTTP gateway route (written in bulk into the database, then one POST
// /caddy/reload: creating them is not what is measured). The companions (lib/load-companions.ts)
// are HTTP clients in this process, each using its own gateway.env: the server URL on the server's
// tunnel address (the sidecar's gateway API listener), its own tunnel address as the source of its
// keep-alive connection, its token, and the poll and heartbeat intervals the server wrote there
// (10 s and 15 s by default; status every 60 s). After every companion fetched its configuration,
// they run for RUN_S seconds at a random phase while an admin creates a gateway route every
// ADMIN_EVERY_MS through POST /api/v1/routes (each on another gateway, which then sees a 200 on its
// next check and fetches the new configuration). The admin stops ADMIN_QUIET_S before the end, so
// every gateway polls once more afterwards.
// Asserts: no error of any kind, every created route reached its gateway's configuration; records
// p50/p99 of config/check, heartbeat and the admin's route creates, and the achieved rates.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { openDatabase } from '../../sidecar/src/db/index.js';
import { featureModels } from '../../sidecar/src/features.js';
import { blankRoute, routeToRow } from '../../sidecar/src/routes/model.js';
import { startBenchSidecar, stopAll, type BenchSidecar } from '../../scripts/bench/lib.js';
import { recordFigure } from './lib/figures.js';
import { Companion, newFleetStats, parseGatewayEnv, type CompanionEnv } from './lib/load-companions.js';
import { cpuSeconds, fmtMs, loadAverage, memoryOf, percentile } from './lib/load-harness.js';
import type { GatewayListBody, PeerCreatedBody, RouteBody } from '../../sidecar/test/lib/protocol.js';

const GATEWAYS = Number(process.env.LOAD_GATEWAYS ?? 1000);
const RUN_S = Number(process.env.LOAD_GATEWAYS_RUN_S ?? 40);
const ADMIN_EVERY_MS = 1000;
const ADMIN_QUIET_S = 12;
const NAME = `${GATEWAYS} gateway companions + admin route creates`;
const haveCaddy = fs.existsSync(new URL('../../bin/caddy', import.meta.url));

let sc: BenchSidecar | undefined;
after(async () => {
  stopAll();
  if (sc) {
    if (sc.sidecar.exitCode === null && sc.sidecar.signalCode === null) await new Promise((r) => sc!.sidecar.once('exit', r));
    if (process.env.LOAD_KEEP_LOG) fs.copyFileSync(`${sc.dir}/sidecar.log`, process.env.LOAD_KEEP_LOG);
    fs.rmSync(sc.dir, { recursive: true, force: true });
  }
});

/** Runs fn over the items with at most `n` at once. */
async function pool<T, R>(items: T[], n: number, fn: (x: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

let envs: CompanionEnv[] = [];
let setupS = 0;
before(async () => {
  if (!haveCaddy) return;
  // a /20 inside 127.0.0.0/8 (room for 1,000 gateways), the second octet varied per run
  sc = await startBenchSidecar({
    name: 'load-gw',
    subnet: `127.${100 + (process.pid % 100)}.16.0/20`,
    env: { GATEHOUSE_LOG_LEVEL: 'error', ...(process.env.LOAD_PROFILE_DIR ? { NODE_OPTIONS: `--import=${process.env.LOAD_PROFILE_PRELOAD}` } : {}) },
  });
  const t0 = performance.now();
  envs = await pool(
    Array.from({ length: GATEWAYS }, (_, i) => i),
    8,
    async (i) => {
      const r = await sc!.api<PeerCreatedBody>('POST', '/peers', { name: `load-gw-${i}`, is_gateway: true });
      assert.equal(r.status, 201, JSON.stringify(r.data));
      return parseGatewayEnv(r.data.gateway!.envContent);
    },
  );
  const db = await openDatabase({ dataDir: sc.env.GATEHOUSE_DATA_DIR, models: featureModels });
  const now = Date.now();
  const rows = envs.map((e, i) =>
    routeToRow({
      ...blankRoute(now),
      domain: `gw${i}.load.test`,
      target_kind: 'gateway',
      target_peer_id: e.peerId,
      target_lan_host: '192.168.1.10',
      target_lan_port: 8000 + (i % 1000),
    }),
  );
  for (let i = 0; i < rows.length; i += 500) await db.models.Route.bulkCreate(rows.slice(i, i + 500));
  // a fleet that has run before (the steady state, e.g. after a restart of the server): each gateway
  // online with its hostname already reported (gw-<peer id>, what its heartbeats say), so the first
  // heartbeats are not each a first contact (a hostname write, a DNS refresh, a transition)
  await db.sequelize.query(`UPDATE peers SET hostname = 'gw-' || id, hostname_source = 'agent', hostname_updated_at = ${now} WHERE peer_type = 'gateway'`);
  await db.sequelize.query(
    `UPDATE gateways SET status = 'online', status_reason = 'heartbeat', status_changed_at = ${now}, last_seen_at = ${now}, healthy = 1, health_reason = 'ok'`,
  );
  await db.close();
  const reload = await sc.api('POST', '/caddy/reload');
  assert.equal(reload.status, 200, JSON.stringify(reload.data));
  setupS = (performance.now() - t0) / 1000;
});

test(
  `${GATEWAYS} companions poll config/check and heartbeat at their real intervals while an admin creates routes: no error, p99 of both stated`,
  { skip: !haveCaddy && 'bin/caddy not built (bash scripts/build-caddy.sh)', timeout: 240_000 },
  async () => {
    assert.ok(
      envs.every((e) => e.serverUrl === envs[0].serverUrl),
      'one server URL for every gateway',
    );
    assert.notEqual(new URL(envs[0].serverUrl).hostname, '127.0.0.1', 'the companions talk to the tunnel listener, not the admin listener');
    let measuring = false;
    const stats = newFleetStats();
    const fleet = envs.map((e) => new Companion(e, stats, () => measuring));

    // start-up (not measured): every companion fetches its configuration (check without a hash → 200
    // → GET /config), then sends a first heartbeat. The measured part is the fleet running after that.
    const s0 = performance.now();
    await pool(fleet, 50, (c) => c.poll());
    const startS = (performance.now() - s0) / 1000;
    const h0 = performance.now();
    await pool(fleet, 50, (c) => c.heartbeat());
    const firstHbS = (performance.now() - h0) / 1000;
    assert.deepEqual(stats.errors.slice(0, 20), [], 'start-up errors');
    assert.ok(
      fleet.every((c) => c.hash && c.routes.length === 1),
      'every companion has its one route',
    );
    const online = await sc!.api<GatewayListBody>('GET', '/gateways');
    assert.equal(online.data.gateways.filter((g) => g.status === 'online').length, GATEWAYS, 'every gateway is online after a heartbeat');

    // the steady state, with the admin creating routes
    const loadBefore = loadAverage();
    if (process.env.LOAD_PROFILE_DIR) process.kill(sc!.sidecar.pid!, 'SIGUSR2');
    const cpu0 = { sidecar: cpuSeconds(sc!.sidecar.pid!), caddy: cpuSeconds(sc!.caddyPid), self: process.cpuUsage() };
    measuring = true;
    for (const c of fleet) c.start();
    const t0 = performance.now();
    const admin: number[] = [];
    const created: { id: number; gateway: number; domain: string }[] = [];
    const adminErrors: string[] = [];
    let n = 0;
    while (performance.now() - t0 < (RUN_S - ADMIN_QUIET_S) * 1000) {
      const next = performance.now() + ADMIN_EVERY_MS;
      const g = fleet[(n * 389) % fleet.length];
      const domain = `admin-${n}.load.test`;
      const a0 = performance.now();
      const r = await sc!.api<RouteBody>('POST', '/routes', {
        domain,
        target_kind: 'gateway',
        target_peer_id: g.env.peerId,
        target_lan_host: '192.168.1.20',
        target_lan_port: 9000 + n,
      });
      admin.push(performance.now() - a0);
      if (r.status === 201) created.push({ id: Number(r.data.route.id), gateway: g.env.peerId, domain });
      else adminErrors.push(`${r.status} ${JSON.stringify(r.data).slice(0, 200)}`);
      n++;
      await new Promise((res) => setTimeout(res, Math.max(0, next - performance.now()))); // not a condition: the admin's pace
    }
    await new Promise((res) => setTimeout(res, Math.max(0, RUN_S * 1000 - (performance.now() - t0)))); // not a condition: the rest of the measured run
    measuring = false;
    if (process.env.LOAD_PROFILE_DIR) process.kill(sc!.sidecar.pid!, 'SIGUSR2');
    const runS = (performance.now() - t0) / 1000;
    const selfCpu = process.cpuUsage(cpu0.self);
    const cpu = {
      sidecar: cpuSeconds(sc!.sidecar.pid!) - cpu0.sidecar,
      caddy: cpuSeconds(sc!.caddyPid) - cpu0.caddy,
      self: (selfCpu.user + selfCpu.system) / 1e6,
    };
    await Promise.all(fleet.map((c) => c.stop()));
    const loadAfter = loadAverage();
    const sidecarMem = memoryOf(sc!.sidecar.pid!);

    const l = stats.latency;
    const rate = (xs: number[]) => `${(xs.length / runS).toFixed(1)}/s`;
    const missing = created.filter((c) => !fleet.find((f) => f.env.peerId === c.gateway)!.routes.some((r) => r.id === c.id));
    const errors = [...stats.errors, ...adminErrors];
    recordFigure({
      test: NAME,
      figure: 'set-up',
      value: `${GATEWAYS} gateway peers via POST /peers (8 at once) + ${GATEWAYS} gateway routes in bulk: ${setupS.toFixed(1)} s; first config fetch of all (50 at once): ${startS.toFixed(1)} s; first heartbeat of all (50 at once): ${firstHbS.toFixed(1)} s`,
    });
    recordFigure({
      test: NAME,
      figure: 'intervals (from gateway.env)',
      value: `poll ${envs[0].pollMs / 1000} s, heartbeat ${envs[0].heartbeatMs / 1000} s, status 60 s; run ${runS.toFixed(0)} s`,
    });
    recordFigure({
      test: NAME,
      figure: 'config/check: count, rate',
      value: `${l.check.length} (${rate(l.check)}; ${stats.checks['304'] ?? 0} × 304, ${stats.checks['200'] ?? 0} × 200)`,
    });
    recordFigure({ test: NAME, figure: 'config/check p50 / p99', value: `${fmtMs(percentile(l.check, 50))} / ${fmtMs(percentile(l.check, 99))}` });
    recordFigure({
      test: NAME,
      figure: 'heartbeat: count, rate',
      value: `${l.heartbeat.length} (${rate(l.heartbeat)}; ${stats.kicked} answered config_changed)`,
    });
    recordFigure({ test: NAME, figure: 'heartbeat p50 / p99', value: `${fmtMs(percentile(l.heartbeat, 50))} / ${fmtMs(percentile(l.heartbeat, 99))}` });
    recordFigure({
      test: NAME,
      figure: 'GET /config after a change p50 / p99',
      value: `${fmtMs(percentile(l.config, 50))} / ${fmtMs(percentile(l.config, 99))} (${l.config.length})`,
    });
    recordFigure({
      test: NAME,
      figure: 'status p50 / p99',
      value: `${fmtMs(percentile(l.status, 50))} / ${fmtMs(percentile(l.status, 99))} (${l.status.length})`,
    });
    recordFigure({
      test: NAME,
      figure: 'admin POST /routes p50 / p99',
      value: `${fmtMs(percentile(admin, 50))} / ${fmtMs(percentile(admin, 99))} (${admin.length} creates, ${GATEWAYS + admin.length} routes, each a host change in Caddy)`,
    });
    recordFigure({
      test: NAME,
      figure: 'created routes seen by their gateway',
      value: `${created.length - missing.length} of ${created.length}`,
      target: 'all',
      ok: missing.length === 0 && created.length > 0,
    });
    recordFigure({ test: NAME, figure: 'errors', value: String(errors.length), target: '0', ok: errors.length === 0 });
    recordFigure({ test: NAME, figure: 'sidecar RSS after the run', value: `${sidecarMem.rssMb.toFixed(0)} MB (peak ${sidecarMem.peakMb.toFixed(0)} MB)` });
    recordFigure({
      test: NAME,
      figure: 'CPU used during the run: sidecar / Caddy / the companions (this process)',
      value: `${((cpu.sidecar / runS) * 100).toFixed(0)} % / ${((cpu.caddy / runS) * 100).toFixed(0)} % / ${((cpu.self / runS) * 100).toFixed(0)} % of one core`,
    });
    recordFigure({ test: NAME, figure: 'load average before / after', value: `${loadBefore} / ${loadAfter} (${os.cpus().length} cores, shared)` });

    assert.deepEqual(errors.slice(0, 20), [], `${errors.length} errors`);
    // The admin creates one route a second at most, each returning once it is live. A create is a host
    // change in Caddy (proxy/apply.ts), not a reload of the 1,000+ routes, so it takes milliseconds
    // (stated above) and the admin keeps its pace: at most one second per create over the admin's
    // window (one less for the window's edge).
    assert.ok(created.length >= Math.floor((RUN_S - ADMIN_QUIET_S) / 1) - 1, `only ${created.length} routes created in ${RUN_S - ADMIN_QUIET_S} s`);
    assert.deepEqual(missing, [], "every created route is in its gateway's configuration");
    // the fleet kept its schedule: about one check per poll interval and one heartbeat per heartbeat interval per gateway
    const expect = (intervalMs: number) => (0.9 * GATEWAYS * (RUN_S * 1000)) / intervalMs;
    assert.ok(l.check.length >= expect(envs[0].pollMs), `${l.check.length} checks, expected about ${expect(envs[0].pollMs) / 0.9}`);
    assert.ok(l.heartbeat.length >= expect(envs[0].heartbeatMs), `${l.heartbeat.length} heartbeats, expected about ${expect(envs[0].heartbeatMs) / 0.9}`);
  },
);
