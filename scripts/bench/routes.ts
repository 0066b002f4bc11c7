// Benchmark: routes at scale through the real custom Caddy (bin/caddy). Run with scripts/bench/routes.sh.
//
// Setup (honest, documented): a throwaway sidecar runs as a child process with SQLite,
// GATEHOUSE_MANAGE_CADDY=true (it supervises bin/caddy, admin API on loopback) and
// GATEHOUSE_WG_MANAGE=false with GATEHOUSE_WG_SUBNET in 127.0.0.0/8: the one peer's address
// (127.78.x.2) is a loopback address, so Caddy dials exactly the address and port a route names and
// a trivial Go backend (routes-backend.go) answers there. No tunnel is in the path: this measures
// Gatehouse's write path and Caddy + our host-map module, which is what the targets are about.
// "Other" routes are inserted straight into the database (then one POST /caddy/reload), because
// creating 10,000 routes one by one is not what is measured; every measured route goes through
// POST /api/v1/routes.
//
// Prints, for 1,000, 10,000 and 100,000 routes loaded (BENCH_SIZES):
//   render    - the pure renderer on a snapshot (and snapshot read + render, as a full load does)
//   reload    - POST /caddy/reload (snapshot, render, hash, POST /load of the whole config): the
//               time of a FULL load, what start-up, a restart or a global setting cost
//   create    - POST /api/v1/routes latency (its transaction, the route's hosts rendered and sent
//               to Caddy as a host change, commit: it returns once the route is live), and
//               propagation = from POST returning to the first 200 through Caddy (polled every ms);
//               create→live p50 and p99 over BENCH_PROPAGATION_RUNS (30) creates
//   caddy     - the same config plus one host POSTed straight to Caddy's /load: what a full reload
//               of Caddy alone would cost per change
//   rss       - Caddy's resident memory
// At 10,000 routes (BENCH_FLEET_AT), 1,000 gateway companions (BENCH_FLEET) poll config/check and
// heartbeat at their real intervals (test/reliability/lib/load-companions.ts) while an admin
// creates gateway routes back to back for BENCH_FLEET_RUN_S (30) seconds (BENCH_FLEET_WRITERS admins at once,
// default 1): creates/s, p50, p99.
// and wrk (-t1 -c32, BENCH_DURATION 10s, 2 s warm-up) requests/s and p50/p99, in one run:
//   direct to the backend; a second Caddy (same binary) with a minimal hand-written config of one
//   reverse_proxy; Gatehouse's rendered config for one plain route with 0 / 1,000 / 10,000 other
//   routes loaded. The machine is shared, so every Gatehouse run is paired with a minimal-config run
//   right before it (BENCH_WRK_ROUNDS pairs, medians) and ratios are taken within the pair; the
//   10,000-route figure is also given normalized by the paired minimal runs.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../sidecar/src/db/index.js';
import { featureModels } from '../../sidecar/src/features.js';
import { blankRoute, routeToRow } from '../../sidecar/src/routes/model.js';
import { readSnapshot, proxySettings } from '../../sidecar/src/proxy/snapshot.js';
import { renderCaddyConfig } from '../../sidecar/src/proxy/render.js';
import { configHash } from '@gatehouse/common/canonical.js';
import { loadConfig } from '../../sidecar/src/config.js';
import { MasterKey } from '../../sidecar/src/util/crypto.js';
import { freePort } from '../../test/lib/ports.js';
import { CADDY, median, parseWrk, request, startBenchSidecar, stopAll, track } from './lib.js';
import { waitFor } from '../../test/lib/wait.js';
import { Companion, newFleetStats, parseGatewayEnv } from '../../test/reliability/lib/load-companions.js';
import type { PeerCreatedBody, RouteBody } from '../../sidecar/test/lib/protocol.js';
import type { CaddyConfig } from '../../sidecar/src/proxy/caddy-json.js';
import { hostMap } from '../../test/lib/json.js';

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
/** Route totals at which wrk also runs (the target route alone is always measured). */
const WRK_TOTALS = (process.env.BENCH_WRK_TOTALS ?? '10000,100000').split(',').map(Number);
const DURATION = process.env.BENCH_DURATION ?? '10s';
const CONNS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const RUNS = Number(process.env.BENCH_PROPAGATION_RUNS ?? 30);
const FLEET = Number(process.env.BENCH_FLEET ?? 1000);
const FLEET_AT = Number(process.env.BENCH_FLEET_AT ?? 10000);
const FLEET_RUN_S = Number(process.env.BENCH_FLEET_RUN_S ?? 30);
/** Admins creating routes at once during the fleet run (each one create after the other). */
const FLEET_WRITERS = Math.max(1, Number(process.env.BENCH_FLEET_WRITERS ?? 1));
const pctl = (xs: number[], p: number) => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length ? v[Math.min(v.length - 1, Math.ceil((p / 100) * v.length) - 1)] : NaN;
};

const f1 = (x: number) => x.toFixed(1);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  errors: string;
}

function wrk(url: string, host?: string): WrkResult {
  const hdr = host ? ['-H', `Host: ${host}`] : [];
  execFileSync('wrk', ['-t1', `-c${CONNS}`, '-d2s', ...hdr, url], { stdio: 'pipe' });
  const { rps, p50, p99, errors } = parseWrk(execFileSync('wrk', ['-t1', `-c${CONNS}`, `-d${DURATION}`, '--latency', ...hdr, url], { encoding: 'utf8' }));
  return { rps, p50, p99, errors };
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function main(): Promise<void> {
  const octet = 10 + (process.pid % 200);
  // the sidecar (which starts and supervises Caddy) and the backend binary, built from routes-backend.go
  // a /20 inside 127.0.0.0/8: room for the gateway fleet
  const { dir, env, ports: sc, caddyPid, backendBin, api } = await startBenchSidecar({ name: 'routes', subnet: `127.${octet}.16.0/20` });
  const ports = { ...sc, minimal: await freePort(), minimalAdmin: await freePort(), backend: await freePort() };
  try {
    const peer = (await api<PeerCreatedBody>('POST', '/peers', { name: 'bench-peer' })).data.peer;
    const peerAddr = String(peer.address).split('/')[0];
    track(spawn(backendBin, [`${peerAddr}:${ports.backend}`], { stdio: 'ignore' }));
    await waitFor(async () => (await request(ports.backend, 'GET', '/', { addr: peerAddr })).status === 200, 10_000, 'the backend');

    const target = await api('POST', '/routes', { domain: 'target.bench.test', peer_id: peer.id, target_port: ports.backend });
    if (target.status !== 201) throw new Error(`creating the target route: ${JSON.stringify(target.data)}`);
    const viaCaddy = (host: string) => request(ports.http, 'GET', '/', { host });
    if ((await viaCaddy('target.bench.test')).status !== 200) throw new Error('the target route does not answer through Caddy');

    // ---- a second Caddy with the minimal hand-written config (one reverse_proxy)
    const minimalCfg = path.join(dir, 'minimal.json');
    fs.writeFileSync(
      minimalCfg,
      JSON.stringify({
        admin: { listen: `127.0.0.1:${ports.minimalAdmin}` },
        apps: {
          http: {
            servers: {
              minimal: {
                listen: [`127.0.0.1:${ports.minimal}`],
                routes: [{ handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: `${peerAddr}:${ports.backend}` }] }] }],
              },
            },
          },
        },
      }),
    );
    track(
      spawn(CADDY, ['run', '--config', minimalCfg], {
        stdio: 'ignore',
        env: { ...process.env, XDG_DATA_HOME: path.join(dir, 'minimal-data'), XDG_CONFIG_HOME: path.join(dir, 'minimal-config') },
      }),
    );
    await waitFor(async () => (await request(ports.minimal, 'GET', '/')).status === 200, 10_000, 'the minimal Caddy');

    // ---- direct database access for the "other" routes (the sidecar's own SQLite file, WAL)
    // with the features' models: the snapshot reads RDP's linked routes too
    const db = await openDatabase({ dataDir: env.GATEHOUSE_DATA_DIR, models: featureModels });
    const benchConfig = loadConfig(env);
    // the sidecar's own master key: the cookie secrets rendered here are the ones the sidecar renders
    const settings = proxySettings(benchConfig, MasterKey.load(benchConfig.masterKeyFile));
    let others = 0;
    const addOthers = async (upTo: number) => {
      const now = Date.now();
      const rows = [];
      for (let i = others; i < upTo; i++)
        rows.push({ ...routeToRow({ ...blankRoute(now), domain: `o${i}.bench.test`, peer_id: peer.id, target_port: String(ports.backend) }) });
      for (let i = 0; i < rows.length; i += 1000) await db.models.Route.bulkCreate(rows.slice(i, i + 1000));
      others = upTo;
      const t0 = performance.now();
      const r = await api('POST', '/caddy/reload');
      if (r.status !== 200) throw new Error(`reload: ${JSON.stringify(r.data)}`);
      return performance.now() - t0;
    };

    const wrkRows: { label: string; r: WrkResult }[] = [];
    const runWrk = (label: string, url: string, host?: string) => {
      const r = wrk(url, host);
      wrkRows.push({ label, r });
      process.stderr.write(
        `  wrk ${label}: ${Math.round(r.rps)} req/s, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms${r.errors ? ` (${r.errors})` : ''}\n`,
      );
      return r;
    };
    const ghUrl = `http://127.0.0.1:${ports.http}/`;
    const minUrl = `http://127.0.0.1:${ports.minimal}/`;
    const ROUNDS = Number(process.env.BENCH_WRK_ROUNDS ?? 2);
    /** wrk pairs: the minimal config right before Gatehouse, ROUNDS times; medians of each side. */
    const paired = (label: string) => {
      const m: WrkResult[] = [];
      const g: WrkResult[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        m.push(runWrk(`minimal Caddy config (paired with ${label}, round ${i + 1})`, minUrl));
        g.push(runWrk(`Gatehouse, ${label} (round ${i + 1})`, ghUrl, 'target.bench.test'));
      }
      const med = (xs: WrkResult[]) => ({
        rps: median(xs.map((r) => r.rps)),
        p50: median(xs.map((r) => r.p50)),
        p99: median(xs.map((r) => r.p99)),
        errors: '',
      });
      return { label, minimal: med(m), gh: med(g) };
    };
    process.stderr.write('measuring (wrk runs are noisy on a shared machine: every Gatehouse run is paired with a minimal-config run right before it)\n');
    const direct = runWrk('direct to the backend', `http://${peerAddr}:${ports.backend}/`);
    const pairs: ReturnType<typeof paired>[] = [paired('1 route')];

    // ---- sizes
    const sizeRows: {
      n: number;
      render: number;
      snapRender: number;
      hash: number;
      reload: number;
      caddyLoad: number;
      post: number;
      prop: number;
      live: number;
      live99: number;
      rss: number;
      bytes: number;
    }[] = [];
    let fleetRow: {
      routes: number;
      gateways: number;
      creates: number;
      runS: number;
      p50: number;
      p99: number;
      errors: number;
      check50: number;
      check99: number;
      checks: number;
    } | null = null;
    const admin = (method: string, p: string, body?: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(
          { host: '127.0.0.1', port: ports.admin, method, path: p, headers: body ? { 'content-type': 'application/json' } : {} },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    /**
     * FLEET gateway peers (POST /peers, 8 at once) with one gateway route each (in bulk, then a full
     * load: not measured), their companions polling and heartbeating at their real intervals, and
     * an admin creating gateway routes back to back (one at a time, each returning once live).
     */
    const fleetPhase = async (routesBefore: number) => {
      process.stderr.write(`  fleet: ${FLEET} gateway peers...\n`);
      const envs = new Array<ReturnType<typeof parseGatewayEnv>>(FLEET);
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < FLEET) {
            const i = next++;
            const r = await api<PeerCreatedBody>('POST', '/peers', { name: `bench-gw-${i}`, is_gateway: true });
            if (r.status !== 201) throw new Error(`gateway peer: ${JSON.stringify(r.data)}`);
            envs[i] = parseGatewayEnv(r.data.gateway!.envContent);
          }
        }),
      );
      const now = Date.now();
      const rows = envs.map((e, i) =>
        routeToRow({
          ...blankRoute(now),
          domain: `gw${i}.fleet.bench.test`,
          target_kind: 'gateway',
          target_peer_id: e.peerId,
          target_lan_host: '192.168.1.10',
          target_lan_port: 8000 + (i % 1000),
        }),
      );
      for (let i = 0; i < rows.length; i += 500) await db.models.Route.bulkCreate(rows.slice(i, i + 500));
      await db.sequelize.query(`UPDATE peers SET hostname = 'gw-' || id, hostname_source = 'agent', hostname_updated_at = ${now} WHERE peer_type = 'gateway'`);
      await db.sequelize.query(
        `UPDATE gateways SET status = 'online', status_reason = 'heartbeat', status_changed_at = ${now}, last_seen_at = ${now}, healthy = 1, health_reason = 'ok'`,
      );
      others += FLEET;
      if ((await api('POST', '/caddy/reload')).status !== 200) throw new Error('reload after the fleet routes');
      const stats = newFleetStats();
      let measuring = false;
      const fleet = envs.map((e) => new Companion(e, stats, () => measuring));
      let i0 = 0;
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          while (i0 < fleet.length) await fleet[i0++].poll();
        }),
      );
      measuring = true;
      for (const c of fleet) c.start();
      // not a condition: the fleet settles into its schedule (random phases) before the admin starts
      await new Promise((r) => setTimeout(r, 5000));
      const lat: number[] = [];
      let errors = 0;
      const t0 = performance.now();
      let k = 0;
      // FLEET_WRITERS admins (scripts) create at once, each one route after the other
      const writer = async () => {
        while (performance.now() - t0 < FLEET_RUN_S * 1000) {
          const i = k++;
          const g = fleet[(i * 389) % fleet.length];
          const a0 = performance.now();
          const r = await api('POST', '/routes', {
            domain: `admin-${i}.fleet.bench.test`,
            target_kind: 'gateway',
            target_peer_id: g.env.peerId,
            target_lan_host: '192.168.1.20',
            target_lan_port: 9000 + (i % 1000),
          });
          lat.push(performance.now() - a0);
          if (r.status !== 201) errors++;
        }
      };
      await Promise.all(Array.from({ length: FLEET_WRITERS }, writer));
      const runS = (performance.now() - t0) / 1000;
      measuring = false;
      await Promise.all(fleet.map((c) => c.stop()));
      others += k - errors;
      const row = {
        routes: routesBefore + FLEET,
        gateways: FLEET,
        creates: k - errors,
        runS,
        p50: pctl(lat, 50),
        p99: pctl(lat, 99),
        errors: errors + stats.errors.length,
        check50: pctl(stats.latency.check, 50),
        check99: pctl(stats.latency.check, 99),
        checks: stats.latency.check.length,
      };
      process.stderr.write(
        `  fleet: ${row.creates} creates in ${runS.toFixed(1)} s at ${row.routes}+ routes with ${FLEET} gateways polling: ${(row.creates / runS).toFixed(1)}/s, p50 ${f1(row.p50)} ms, p99 ${f1(row.p99)} ms, errors ${row.errors}\n`,
      );
      return row;
    };
    const steps = [...new Set([...SIZES, ...WRK_TOTALS.filter((x) => x > 1)])].sort((a, b) => a - b);
    for (const n of steps) {
      // n routes loaded in all: the target plus n-1 others
      const reload = await addOthers(Math.max(others, n - 1));
      if (SIZES.includes(n)) {
        const snapT: number[] = [];
        const renderT: number[] = [];
        const hashT: number[] = [];
        let bytes = 0;
        let cfg: CaddyConfig | null = null;
        for (let i = 0; i < 5; i++) {
          const t0 = performance.now();
          const snap = await readSnapshot(db, settings, Date.now());
          const t1 = performance.now();
          cfg = renderCaddyConfig(snap);
          const t2 = performance.now();
          configHash(cfg);
          const t3 = performance.now();
          bytes = JSON.stringify(cfg).length;
          snapT.push(t2 - t0);
          renderT.push(t2 - t1);
          hashT.push(t3 - t2);
        }
        // Caddy alone: POST /load of this config plus one host, straight to the admin API (then
        // the sidecar's own configuration is put back with POST /caddy/reload).
        const loadT: number[] = [];
        for (let i = 0; i < 3; i++) {
          const hosts = hostMap(cfg);
          const extra = `direct${i}.bench.test`;
          hosts[extra] = hosts['target.bench.test'];
          const body = JSON.stringify(cfg);
          delete hosts[extra];
          const t0 = performance.now();
          const st = await admin('POST', '/load', body);
          loadT.push(performance.now() - t0);
          if (st !== 200) throw new Error(`direct /load: HTTP ${st}`);
        }
        await api('POST', '/caddy/reload');
        const posts: number[] = [];
        const props: number[] = [];
        for (let i = 0; i < RUNS; i++) {
          const host = `p${n}-${i}.bench.test`;
          const t0 = performance.now();
          const c = await api<RouteBody>('POST', '/routes', { domain: host, peer_id: peer.id, target_port: ports.backend });
          const t1 = performance.now();
          if (c.status !== 201) throw new Error(`create: ${JSON.stringify(c.data)}`);
          for (;;) {
            if ((await viaCaddy(host)).status === 200) break;
            if (performance.now() - t1 > 10_000) throw new Error(`${host} never answered`);
            await new Promise((r) => setTimeout(r, 1));
          }
          const t2 = performance.now();
          posts.push(t1 - t0);
          props.push(t2 - t1);
          await api('DELETE', `/routes/${c.data.route.id}`);
        }
        const lives = posts.map((p, i) => p + props[i]);
        const row = {
          n,
          render: median(renderT),
          snapRender: median(snapT),
          hash: median(hashT),
          reload,
          caddyLoad: median(loadT),
          post: median(posts),
          prop: median(props),
          live: median(lives),
          live99: pctl(lives, 99),
          rss: rssMb(caddyPid),
          bytes,
        };
        sizeRows.push(row);
        process.stderr.write(
          `  ${n} routes: render ${f1(row.render)} ms, full load (POST /caddy/reload) ${f1(row.reload)} ms, Caddy /load alone ${f1(row.caddyLoad)} ms, POST /routes ${f1(row.post)} ms, create→live p50 ${f1(row.live)} / p99 ${f1(row.live99)} ms, Caddy RSS ${f1(row.rss)} MB\n`,
        );
      }
      if (n === FLEET_AT && FLEET > 0) fleetRow = await fleetPhase(n);
      if (WRK_TOTALS.includes(n)) pairs.push(paired(`1 route + ${others} others`));
    }
    await db.close();

    // ---- report
    const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
    console.log('');
    console.log(
      `bench routes: ${os.cpus().length} cores (${cpu}), load average at the end ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}, Caddy ${execFileSync(CADDY, ['version'], { encoding: 'utf8' }).split(' ')[0].trim()}, SQLite, loopback`,
    );
    console.log(`  peer address ${peerAddr} is on loopback (GATEHOUSE_WG_SUBNET in 127/8, no tunnel): Caddy + host map + write path only`);
    console.log('');
    console.log(
      '  routes | render (pure) | snapshot+render | canonical hash | config  | full load (POST /caddy/reload) | Caddy /load alone | POST /routes | propagation* | create→live p50 | p99 | Caddy RSS',
    );
    for (const r of sizeRows) {
      console.log(
        `  ${String(r.n).padStart(6)} | ${f1(r.render).padStart(10)} ms | ${f1(r.snapRender).padStart(12)} ms | ${f1(r.hash).padStart(11)} ms | ${(r.bytes / 1e6).toFixed(2).padStart(5)} MB | ${f1(r.reload).padStart(27)} ms | ${f1(r.caddyLoad).padStart(14)} ms | ${f1(r.post).padStart(9)} ms | ${f1(r.prop).padStart(9)} ms | ${f1(r.live).padStart(12)} ms | ${f1(r.live99).padStart(6)} ms | ${f1(r.rss).padStart(6)} MB`,
      );
    }
    console.log('  * propagation: from POST /api/v1/routes returning to the first 200 through Caddy (the write returns once Caddy runs it);');
    console.log(`    create→live: from sending the POST to that 200, p50 and p99 of ${RUNS} creates (each deleted again). Caddy /load alone: the same config`);
    console.log("    plus one host posted straight to Caddy's admin API (median of 3): what each write would cost if it reloaded Caddy.");
    for (const r of sizeRows) {
      console.log(
        `    target at ${r.n}: create→live p50 < 50 ms and p99 < 100 ms → ${f1(r.live)} / ${f1(r.live99)} ms: ${r.live < 50 && r.live99 < 100 ? 'met' : 'MISSED'}`,
      );
    }
    if (fleetRow) {
      const rate = fleetRow.creates / fleetRow.runS;
      console.log('');
      console.log(
        `  route creates at ${fleetRow.routes} routes while ${fleetRow.gateways} gateway companions poll (${fleetRow.checks} config/checks, p50 ${f1(fleetRow.check50)} / p99 ${f1(fleetRow.check99)} ms):`,
      );
      console.log(
        `    ${fleetRow.creates} creates in ${fleetRow.runS.toFixed(1)} s, ${FLEET_WRITERS === 1 ? 'one at a time' : `${FLEET_WRITERS} writers at once`}: ${rate.toFixed(1)}/s, p50 ${f1(fleetRow.p50)} ms, p99 ${f1(fleetRow.p99)} ms, errors ${fleetRow.errors}`,
      );
      console.log(`    target: ≥ 20/s with p99 < 200 ms: ${rate >= 20 && fleetRow.p99 < 200 ? 'met' : 'MISSED'}`);
    }
    console.log('');
    console.log(
      `  wrk -t1 -c${CONNS} -d${DURATION} (2 s warm-up each), medians of ${ROUNDS}      req/s     p50       p99     vs the minimal run paired with it`,
    );
    const line = (label: string, r: { rps: number; p50: number; p99: number }, extra = '') =>
      console.log(
        `  ${label.padEnd(52)} ${String(Math.round(r.rps)).padStart(7)}  ${r.p50.toFixed(2).padStart(6)} ms  ${r.p99.toFixed(2).padStart(6)} ms  ${extra}`,
      );
    const allMinimal = median(pairs.map((p) => p.minimal.rps));
    line('direct to the backend', direct, `(minimal/direct = ${pct(allMinimal / direct.rps)}, not ours to beat)`);
    const base = pairs[0];
    const rel0 = base.gh.rps / base.minimal.rps;
    for (const p of pairs) {
      line(`minimal Caddy config (paired with ${p.label})`, p.minimal, '100%');
      const rel = p.gh.rps / p.minimal.rps;
      const own = p === base ? '' : `; vs own 1-route: ${pct(p.gh.rps / base.gh.rps)} raw, ${pct(rel / rel0)} normalized by the paired minimal runs`;
      line(`Gatehouse, ${p.label}`, p.gh, `${pct(rel)} req/s, p50 ${p.gh.p50 >= p.minimal.p50 ? '+' : ''}${pct(p.gh.p50 / p.minimal.p50 - 1)}${own}`);
    }
    console.log('');
    const checks: [string, boolean][] = [
      ['Gatehouse 1 route ≥ 95% of the minimal config req/s', rel0 >= 0.95],
      ['Gatehouse 1 route p50 within 10% of the minimal config', base.gh.p50 <= base.minimal.p50 * 1.1],
      ...pairs.slice(1).map((p): [string, boolean] => [`${p.label} ≥ 90% of own 1-route req/s (normalized)`, p.gh.rps / p.minimal.rps / rel0 >= 0.9]),
    ];
    for (const [what, ok] of checks) console.log(`  target: ${what}: ${ok ? 'met' : 'MISSED'}`);
    for (const row of wrkRows) if (row.r.errors) console.log(`  note: ${row.label}: ${row.r.errors}`);
  } finally {
    stopAll();
    await new Promise((r) => setTimeout(r, 1500));
    if (!process.env.BENCH_KEEP) fs.rmSync(dir, { recursive: true, force: true });
    else console.log(`kept ${dir}`);
  }
}

main().catch((err) => {
  console.error(`bench routes failed: ${err?.stack ?? err}`);
  process.exitCode = 1;
});
