// Load: resident memory with 10,000 peers and 1,000 routes loaded: the sidecar
// under 250 MB, Caddy under 300 MB.
//
// The data and the sidecar come from the list benchmarks' helper (scripts/bench/list-data.ts
// startListBench: a throwaway sidecar as a child process on SQLite, 10,000 peers in 20 groups with
// tags and handshakes, 1,000 routes of which a tenth are L4, written in bulk into its database),
// here with the real custom Caddy supervised by the sidecar (GATEHOUSE_MANAGE_CADDY), and the sidecar
// run as it ships: compiled (dist/main.js), not from its sources through tsx, whose in-memory
// transpiling and source maps add tens of MB that no installation carries. WireGuard is
// not managed (the peers' subnet would be routed on this host's own namespace): the sidecar holds
// the peers in its database and its views, not in a live interface. After the data is written,
// POST /caddy/reload makes Caddy load the whole configuration (1,000 hosts, 100 L4 listeners); then
// the admin's usual reads (peer list pages, search, routes, dashboard, gateways, logs) run a few
// times, so the figures are those of a sidecar in use, not of one that has only started.
// Both RSS (now) and the peak (VmHWM) are recorded; the targets apply to RSS after that use.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { startListBench, type ListBench } from '../../scripts/bench/list-data.js';
import { managedCaddyEnv } from '../lib/caddy-env.js';
import { freePort } from '../lib/ports.js';
import { recordFigure } from './lib/figures.js';
import { loadAverage, memoryOf } from './lib/load-harness.js';
import type { CaddyStatusBody, PeerListBody } from '../../sidecar/test/lib/protocol.js';

const PEERS = 10_000;
const ROUTES = 1_000;
const SIDECAR_MB = 250;
const CADDY_MB = 300;
const NAME = `Memory, ${PEERS} peers + ${ROUTES} routes`;
const haveCaddy = fs.existsSync(new URL('../../bin/caddy', import.meta.url));

let b: ListBench | undefined;
let ports = { http: 0, https: 0, admin: 0 };
before(async () => {
  if (!haveCaddy) return;
  ports = { http: await freePort(), https: await freePort(), admin: await freePort() };
  b = await startListBench({ name: 'load-mem', peers: PEERS, routes: ROUTES, env: managedCaddyEnv(ports), compiled: true });
});
after(async () => {
  await b?.stop();
});

test(
  `${PEERS} peers and ${ROUTES} routes loaded: sidecar RSS < ${SIDECAR_MB} MB, Caddy RSS < ${CADDY_MB} MB`,
  { skip: !haveCaddy && 'bin/caddy not built (bash scripts/build-caddy.sh)', timeout: 180_000 },
  async () => {
    const reload = await fetch(`${b!.url}/api/v1/caddy/reload`, { method: 'POST', headers: { cookie: b!.cookie, 'x-csrf-token': b!.csrf } });
    assert.equal(reload.status, 200, await reload.text());
    const status = await b!.api<CaddyStatusBody>('/caddy/status');
    const caddyPid = Number(status.data.pid);
    assert.ok(caddyPid > 0, JSON.stringify(status.data));
    // Caddy holds the whole configuration: every enabled HTTP route's host in the host map (the L4 routes
    // of the data point at disabled peers, so they have no listener)
    const cfg = await (await fetch(`http://127.0.0.1:${ports.admin}/config/`, { headers: { origin: `http://127.0.0.1:${ports.admin}` } })).text();
    const idx = Array.from({ length: ROUTES }, (_, i) => i).filter((i) => i % 8 !== 0);
    const httpHosts = idx.filter((i) => i % 10 !== 0).map((i) => `svc-${i}.bench${i % 10}.example.com`);
    const missingHosts = httpHosts.filter((h) => !cfg.includes(`"${h}":{`));
    assert.deepEqual(missingHosts.slice(0, 10), [], `${missingHosts.length} of ${httpHosts.length} hosts are not in Caddy's configuration`);

    // the admin's usual reads, a few rounds
    const reads = [
      '/peers?limit=100',
      `/peers?limit=100&offset=${PEERS - 100}`,
      '/peers?q=peer-04&limit=100',
      '/peers?limit=100&sort=name',
      '/routes?limit=100',
      `/routes?limit=100&offset=${ROUTES - 100}`,
      '/dashboard/stats',
      '/gateways',
      '/logs/activity?limit=100',
      '/peer-groups',
    ];
    for (let round = 0; round < 5; round++) {
      for (const p of reads) {
        const r = await b!.api(p);
        assert.ok(r.status === 200 || (r.status === 404 && p === '/peer-groups'), `${p}: ${r.status} ${JSON.stringify(r.data).slice(0, 200)}`);
      }
    }
    // every peer read once, a page of 1,000 (the maximum) at a time
    for (let offset = 0; offset < PEERS; offset += 1000)
      assert.equal((await b!.api<PeerListBody>(`/peers?limit=1000&offset=${offset}`)).data.peers.length, 1000);
    await new Promise((r) => setTimeout(r, 2000)); // not a condition: the processes settle before their RSS is read

    const sidecar = memoryOf(b!.child.pid!);
    const caddy = memoryOf(caddyPid);
    recordFigure({
      test: NAME,
      figure: 'set-up',
      value: `bulk insert ${b!.setupS.toFixed(1)} s; Caddy config ${(cfg.length / 1024).toFixed(0)} KB with ${httpHosts.length} hosts; sidecar compiled (as it ships), SQLite, WireGuard not managed`,
    });
    recordFigure({
      test: NAME,
      figure: 'sidecar RSS',
      value: `${sidecar.rssMb.toFixed(0)} MB (peak ${sidecar.peakMb.toFixed(0)} MB)`,
      target: `< ${SIDECAR_MB} MB`,
      ok: sidecar.rssMb < SIDECAR_MB,
    });
    recordFigure({
      test: NAME,
      figure: 'Caddy RSS',
      value: `${caddy.rssMb.toFixed(0)} MB (peak ${caddy.peakMb.toFixed(0)} MB)`,
      target: `< ${CADDY_MB} MB`,
      ok: caddy.rssMb < CADDY_MB,
    });
    recordFigure({ test: NAME, figure: 'load average', value: `${loadAverage()} (${os.cpus().length} cores, shared)` });
    assert.ok(sidecar.rssMb < SIDECAR_MB, `sidecar RSS ${sidecar.rssMb.toFixed(0)} MB`);
    assert.ok(caddy.rssMb < CADDY_MB, `Caddy RSS ${caddy.rssMb.toFixed(0)} MB`);
  },
);
