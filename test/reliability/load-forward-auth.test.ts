// Load: forward auth at a fixed 500 requests/s for 60 s through the real custom Caddy with a valid
// route-auth session. The sidecar runs as a child process and supervises Caddy
// itself (scripts/bench/lib.ts startBenchSidecar: SQLite, GATEHOUSE_MANAGE_CADDY with bin/caddy,
// WireGuard not managed, the peer subnet inside 127.0.0.0/8 so the peer's tunnel address is a
// loopback address where the trivial Go backend listens). The route is protected with route auth
// (email_password) through the API; the visitor signs in through Caddy's login form like a browser.
// Then Debian's `hey` sends 50 workers × 10 requests/s (hey -q paces each worker with a ticker; wrk
// cannot hold a rate) for 60 s, redirects not followed: every request is a forward_auth
// subrequest to GET /route-auth/verify plus the proxied request to the backend.
// Asserts: no error, every answer 200, the achieved rate within 1 % of 500/s; records p50/p90/p99.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { request, startBenchSidecar, stopAll, track, type BenchSidecar } from '../../scripts/bench/lib.js';
import { waitFor } from '../lib/wait.js';
import { freePort } from '../lib/ports.js';
import { recordFigure } from './lib/figures.js';
import { cpuSeconds, fmtMs, hey, loadAverage, memoryOf, signInThroughCaddy } from './lib/load-harness.js';
import type { PeerCreatedBody, RouteBody } from '../../sidecar/test/lib/protocol.js';

const RATE = 500;
const WORKERS = 50;
const SECONDS = Number(process.env.LOAD_FWD_SECONDS ?? 60);
const NAME = 'Forward auth, 500 req/s for 60 s';
const haveCaddy = fs.existsSync(new URL('../../bin/caddy', import.meta.url));

let sc: BenchSidecar | undefined;
after(async () => {
  stopAll();
  if (sc) {
    const exited = sc.sidecar.exitCode !== null || sc.sidecar.signalCode !== null;
    if (!exited) await new Promise((r) => sc!.sidecar.once('exit', r));
    fs.rmSync(sc.dir, { recursive: true, force: true });
  }
});

let host = '';
let cookie = '';
before(async () => {
  if (!haveCaddy) return;
  sc = await startBenchSidecar({ name: 'load-fwd', subnet: `127.79.${10 + (process.pid % 200)}.0/24`, env: { GATEHOUSE_LOG_LEVEL: 'error' } });
  const peer = (await sc.api<PeerCreatedBody>('POST', '/peers', { name: 'load-backend' })).data.peer;
  const addr = String(peer.address).split('/')[0];
  const backendPort = await freePort('tcp', addr);
  track(spawn(sc.backendBin, [`${addr}:${backendPort}`], { stdio: 'ignore' }));
  await waitFor(async () => (await request(backendPort, 'GET', '/', { addr })).status === 200, 10_000, 'the backend');
  host = 'protected.load.test';
  const route = await sc.api<RouteBody>('POST', '/routes', { domain: host, peer_id: peer.id, target_port: backendPort });
  assert.equal(route.status, 201, JSON.stringify(route.data));
  const auth = await sc.api('POST', `/routes/${route.data.route.id}/auth`, {
    method: 'email_password',
    email: 'visitor@example.test',
    password: 'load test password',
    session_max_age: 86_400_000,
  });
  assert.equal(auth.status, 200, JSON.stringify(auth.data));
  await waitFor(async () => (await request(sc!.ports.http, 'GET', '/', { host })).status === 302, 10_000, 'the protected route to ask for a session');
  cookie = await signInThroughCaddy(sc.ports.http, host, 'visitor@example.test', 'load test password');
  assert.match(cookie, /^gh_ra_\d+=\S+$/);
});

test(
  `forward auth through Caddy at a fixed ${RATE} requests/s for ${SECONDS} s with a valid session: no error, every answer 200, the rate held; p99 stated`,
  { skip: !haveCaddy && 'bin/caddy not built (bash scripts/build-caddy.sh)', timeout: 150_000 },
  async () => {
    const url = `http://127.0.0.1:${sc!.ports.http}/some/page?x=1`;
    // the session works and the route is really protected (no cookie → 302 to the login page)
    assert.equal((await request(sc!.ports.http, 'GET', '/some/page', { host, headers: { cookie } })).status, 200);
    assert.equal((await request(sc!.ports.http, 'GET', '/some/page', { host })).status, 302);

    const loadBefore = loadAverage();
    const cpu0 = { sidecar: cpuSeconds(sc!.sidecar.pid!), caddy: cpuSeconds(sc!.caddyPid) };
    const r = await hey(url, { workers: WORKERS, perWorker: RATE / WORKERS, seconds: SECONDS, host, headers: { Cookie: cookie } });
    const loadAfter = loadAverage();
    const cpu = { sidecar: cpuSeconds(sc!.sidecar.pid!) - cpu0.sidecar, caddy: cpuSeconds(sc!.caddyPid) - cpu0.caddy };
    const errors = Object.values(r.errors).reduce((a, b) => a + b, 0);
    const non200 = r.total - (r.statuses['200'] ?? 0) - errors;
    const sidecarMem = memoryOf(sc!.sidecar.pid!);
    const caddyMem = memoryOf(sc!.caddyPid);

    recordFigure({
      test: NAME,
      figure: 'generator',
      value: `hey -c ${WORKERS} -q ${RATE / WORKERS} -z ${SECONDS}s (fixed rate, keep-alive, redirects not followed), one signed-in visitor`,
    });
    recordFigure({
      test: NAME,
      figure: 'achieved rate',
      value: `${r.rps.toFixed(1)} req/s (${r.total} requests in ${r.seconds.toFixed(1)} s)`,
      target: `≥ ${RATE * 0.99} req/s`,
      ok: r.rps >= RATE * 0.99,
    });
    recordFigure({ test: NAME, figure: 'errors (socket errors, timeouts, non-200)', value: String(errors + non200), target: '0', ok: errors + non200 === 0 });
    recordFigure({ test: NAME, figure: 'latency p50 / p90', value: `${fmtMs(r.p50)} / ${fmtMs(r.p90)}` });
    recordFigure({ test: NAME, figure: 'latency p99', value: fmtMs(r.p99) });
    recordFigure({ test: NAME, figure: 'latency max', value: fmtMs(r.slowest) });
    recordFigure({ test: NAME, figure: 'RSS after the run: sidecar / Caddy', value: `${sidecarMem.rssMb.toFixed(0)} MB / ${caddyMem.rssMb.toFixed(0)} MB` });
    recordFigure({
      test: NAME,
      figure: 'CPU used during the run: sidecar / Caddy',
      value: `${((cpu.sidecar / r.seconds) * 100).toFixed(0)} % / ${((cpu.caddy / r.seconds) * 100).toFixed(0)} % of one core`,
    });
    recordFigure({ test: NAME, figure: 'load average before / after', value: `${loadBefore} / ${loadAfter} (${os.cpus().length} cores, shared)` });

    assert.deepEqual(r.errors, {}, `errors:\n${r.raw}`);
    assert.deepEqual(Object.keys(r.statuses), ['200'], `statuses:\n${r.raw}`);
    assert.ok(
      r.total >= RATE * SECONDS * 0.99,
      `only ${r.total} requests were sent, expected ${RATE * SECONDS}: the generator did not hold the rate (load average ${loadAfter})\n${r.raw}`,
    );
    assert.ok(r.rps >= RATE * 0.99, `achieved ${r.rps} req/s, expected ${RATE} (load average ${loadAfter})`);
    assert.ok(Number.isFinite(r.p99), `no p99 in hey's output:\n${r.raw}`);
  },
);
