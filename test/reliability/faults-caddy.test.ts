// Faults, nothing lost: Caddy killed with SIGKILL under traffic.
// The sidecar manages Caddy (its supervisor) and WireGuard (wireguard-go); one real peer in a
// network namespace runs the backend behind its tunnel, and 12 routes proxy to it. Eight request
// loops visit the routes through Caddy while Caddy is killed with SIGKILL. Targets:
// - the supervisor restarts it and the whole configuration is served again within 2 s of the kill
//   (every route answering 200, and Caddy's live configuration holding every route's host);
// - requests in the gap fail fast instead of hanging (the longest request that overlapped the gap
//   is stated; target under 1 s).
//   bash scripts/test-reliability.sh test/reliability/faults-caddy.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { CADDY, startE2e, tunnelPeers } from '../lib/e2e-server.js';
import { recordFigure } from './lib/figures.js';
import { caddyHosts, send, Traffic } from './lib/faults-harness.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}`);
const CASE = 'Caddy SIGKILL under traffic';
const ROUTES = 12;

test(
  'Caddy killed with SIGKILL under traffic: restarted, every route served again within 2 s, requests in the gap fail fast',
  { skip: reason ?? false, timeout: 120_000 },
  async (t) => {
    const run = await startE2e(t, {
      prefix: 'fcad',
      iface: `ghfc${process.pid % 1000}`,
      vpnOctet: 213,
      peers: [{ name: 'pa', octet: 212 }],
      proxyBind: '127.0.0.1',
    });
    const { api, network, ns, ports } = run;
    const [peer] = await tunnelPeers(run, ['faults-caddy']);
    await network.startHttpServer(ns[0], peer.address.split('/')[0], 8080, { name: 'app' });
    const domains: string[] = [];
    for (let i = 0; i < ROUTES; i++) {
      const r = await api('/routes', 'POST', { peer_id: peer.id, target_port: 8080, domain: `r${i}.faults.test` });
      assert.equal(r.status, 201, JSON.stringify(r.data));
      domains.push(r.data.route.domain);
    }
    const visit = (d: string, timeoutMs = 10_000) => send('127.0.0.1', ports.http, d, '/', { timeoutMs });
    for (const d of domains) assert.equal((await visit(d)).status, 200, `${d} answers before the kill`);

    const traffic = new Traffic(
      domains.map((d) => ({ name: d, go: () => visit(d) })),
      8,
    );
    await new Promise((r) => setTimeout(r, 500)); // not a condition: traffic runs a while before the kill
    const before = (await api('/caddy/status')).data;
    assert.equal(before.running, true);
    const killedAt = Date.now();
    process.kill(before.pid!, 'SIGKILL');

    // the first moment after the kill at which one sweep over every route answers 200
    let servedAt = 0;
    await waitFor(
      async () => {
        const sweep = await Promise.all(domains.map((d) => visit(d, 2000)));
        if (sweep.every((r) => r.status === 200)) servedAt = Math.min(...sweep.map((r) => r.start));
        return servedAt > 0;
      },
      20_000,
      { intervalMs: 20, what: 'every route answering again' },
    );
    // ...and the last moment a request of the loops failed: the gap
    await new Promise((r) => setTimeout(r, 500)); // not a condition: traffic runs a while after the recovery
    await traffic.stop();
    const after = (await api('/caddy/status')).data;
    const served = servedAt - killedAt;
    const inGap = traffic.between(killedAt);
    const failed = inGap.filter((r) => r.status !== 200);
    const lastFail = failed.length ? Math.max(...failed.map((r) => r.end)) : killedAt;
    const gapRequests = inGap.filter((r) => r.start <= lastFail);
    const longest = Math.max(...gapRequests.map((r) => r.ms));
    const hosts = await caddyHosts(ports.admin);
    const missing = domains.filter((d) => !hosts.has(d));
    const errors = [...new Set(failed.map((r) => r.error ?? String(r.status)))].join(', ');
    t.diagnostic(
      `killed pid ${before.pid}, new pid ${after.pid}; every route served ${served} ms after the kill; ${failed.length} of ${inGap.length} requests failed (${errors}); the last failure ended ${lastFail - killedAt} ms after the kill; longest request in the gap ${longest.toFixed(0)} ms`,
    );

    recordFigure({ test: CASE, figure: 'whole configuration served again after the kill', value: `${served} ms`, target: '< 2000 ms', ok: served < 2000 });
    recordFigure({ test: CASE, figure: 'longest request in the gap', value: `${longest.toFixed(0)} ms`, target: '< 1000 ms', ok: longest < 1000 });
    recordFigure({ test: CASE, figure: 'requests failed in the gap', value: `${failed.length} of ${gapRequests.length} (${errors || 'none'})` });
    recordFigure({
      test: CASE,
      figure: 'routes missing after the restart',
      value: `${missing.length} of ${domains.length}`,
      target: '0',
      ok: missing.length === 0,
    });

    assert.ok(after.running && after.pid !== before.pid, 'the supervisor started a new Caddy');
    assert.deepEqual(missing, [], "every route is in Caddy's live configuration");
    assert.ok(served < 2000, `every route served again ${served} ms after the kill (target < 2 s)`);
    assert.ok(longest < 1000, `requests in the gap fail fast: the longest took ${longest.toFixed(0)} ms`);
    assert.ok(
      failed.every((r) => r.status !== null || r.error !== 'timeout'),
      'no request in the gap timed out',
    );
  },
);
