// End to end, as root: the real sidecar with its WireGuard interface (wireguard-go)
// and Caddy, two peer hosts (network namespaces) whose configs from GET /peers/:id/config are up and
// ping the server's tunnel address. The backup is downloaded with a passphrase and that sidecar is
// stopped (its interface goes down). A fresh install on the same interface name, UDP port, subnet and
// proxy ports but a NEW data directory (so a new master key and an empty database) comes up: the
// peers' unchanged tunnels do not get through to it. The backup is restored into it in replace mode;
// then, without touching anything in the peers' namespaces, both peers ping the server again (they
// handshake on their own with the server key that came back), `wg show` on the server lists both with
// a handshake made after the restore, and GET /peers lists them with the same keys and addresses.
//   cd /work/main && node --import tsx --test test/e2e/backup-restore.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, apiToken, bearer, login } from '../../sidecar/test/lib/server.js';
import { startE2e, tunnelPeers } from '../lib/e2e-server.js';
import { skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import type { Peer } from '../../sidecar/test/lib/protocol.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']);
const PASS = 'e2e backup passphrase 42';

test(
  'backup, then replace restore into a fresh install: the old peers tunnel through with their unchanged configs',
  { skip: reason ?? false, timeout: 120_000 },
  async (t) => {
    const iface = `ghk${process.pid % 1000}`;
    const run = await startE2e(t, {
      prefix: 'bkrst',
      iface,
      vpnOctet: 205,
      peers: [
        { name: 'pa', octet: 206 },
        { name: 'pb', octet: 207 },
      ],
      proxyBind: 'serverIp',
    });
    const { network: net, serverIp, ns } = run;
    const peers = await tunnelPeers(run, ['bk-peer-a', 'bk-peer-b']);
    const pingOk = async (one: string) => (await net.ping(one, serverIp, { count: 1, timeoutS: 1 })).ok;
    const wgShow = async (...args: string[]) => (await net.exec(null, 'wg', ['show', iface, ...args], { check: true })).stdout.trim();

    // ---- what the first install has: its server key, the peers as listed, their configs
    const serverPub = await wgShow('public-key');
    const shape = (list: Peer[]) =>
      list
        .map((p) => ({ id: p.id, name: p.name, public_key: p.public_key, address: p.address, allowed_ips: p.allowed_ips, enabled: p.enabled }))
        .sort((x, y) => x.id - y.id);
    const listed = shape((await run.api('/peers')).data.peers);
    assert.deepEqual(listed.map((p) => p.public_key).sort(), peers.map((p) => p.public_key).sort());
    const configs = await Promise.all(peers.map(async (p) => (await run.api(`/peers/${p.id}/config`)).data as string));
    const masterKey1 = fs.readFileSync(path.join(run.s.dataDir, 'master.key'), 'utf8');

    // ---- the backup, then the first sidecar stops (its interface goes down)
    const dl = await run.s.req<unknown>('/api/v1/settings/backup', { headers: { ...bearer(await apiToken(run.s)), 'x-backup-passphrase': PASS } });
    assert.equal(dl.status, 200, typeof dl.data === 'string' ? dl.data.slice(0, 300) : JSON.stringify(dl.data).slice(0, 300));
    const doc = typeof dl.data === 'string' ? dl.data : JSON.stringify(dl.data);
    await run.s.close();
    await waitFor(async () => (await net.exec(null, 'ip', ['link', 'show', 'dev', iface])).code !== 0, 10_000, { what: 'the first interface gone' });

    // ---- a fresh install: same interface, port, subnet, proxy ports; new data directory and master key
    const s2 = await startTestServer(run.env, { startFeatures: true });
    t.after(() => s2.close());
    assert.notEqual(s2.dataDir, run.s.dataDir);
    assert.notEqual(fs.readFileSync(path.join(s2.dataDir, 'master.key'), 'utf8'), masterKey1, 'a new master key');
    const health = await s2.req('/health');
    assert.equal(health.status, 200, JSON.stringify(health.data));
    assert.equal(health.data.checks!.wireguard.ok, true);
    assert.equal(health.data.checks!.proxy.ok, true);
    assert.notEqual(await wgShow('public-key'), serverPub, 'the fresh install has its own server key');
    assert.equal(await wgShow('peers'), '', 'and no peers');
    // the peers' tunnels (unchanged, still up in their namespaces) do not get through to it
    for (const one of ns) {
      for (let i = 0; i < 3; i++) assert.equal(await pingOk(one), false, `no ping from ${one} before the restore`);
    }

    // ---- replace restore (a signed-in admin of the fresh install, as the UI does it)
    const { cookie, csrf } = await login(s2);
    const form = new FormData();
    form.set('passphrase', PASS);
    form.set('file', new Blob([doc], { type: 'application/json' }), 'backup.json');
    const restoredAt = Date.now();
    const r = await s2.req('/api/v1/settings/backup/restore?mode=replace', { method: 'POST', headers: { cookie, 'x-csrf-token': csrf }, body: form });
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.equal(r.data.dry_run, false);
    assert.deepEqual(r.data.applied, { proxy: null, wireguard: null });
    assert.equal(await wgShow('public-key'), serverPub, 'the server key came back from the backup');

    // ---- nothing touched in the namespaces: both peers get through again, on their own. A peer whose
    // data goes unanswered starts a new handshake 15 s (keepalive + rekey timeout) after its first
    // unanswered packet, and retries a failed one every 5 s: 20 s from the restore bounds both.
    const backMs = await Promise.all(
      ns.map(async (one) => {
        await waitFor(() => pingOk(one), Math.max(1000, 20_000 - (Date.now() - restoredAt)), { what: `ping from ${one} after the restore` });
        return Date.now() - restoredAt;
      }),
    );
    const handshakes = new Map(
      (await wgShow('latest-handshakes'))
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t') as [string, string]),
    );
    assert.deepEqual([...handshakes.keys()].sort(), peers.map((p) => p.public_key).sort(), 'wg show lists both peers');
    for (const p of peers) {
      const at = Number(handshakes.get(p.public_key)) * 1000;
      assert.ok(at >= Math.floor(restoredAt / 1000) * 1000 && at <= Date.now() + 1000, `${p.name}: a handshake after the restore (${at} vs ${restoredAt})`);
    }

    // ---- the API of the restored install (replace ended every sign-in: a new one)
    assert.equal((await s2.req('/api/v1/peers', { headers: { cookie, 'x-csrf-token': csrf } })).status, 401, 'the sign-in from before the restore is gone');
    const h2 = bearer(await apiToken(s2));
    assert.deepEqual(shape((await s2.req('/api/v1/peers', { headers: h2 })).data.peers), listed);
    for (const [i, p] of peers.entries())
      assert.equal((await s2.req(`/api/v1/peers/${p.id}/config`, { headers: h2 })).data, configs[i], `${p.name}: the same client config`);
    t.diagnostic(`tunnels back ${backMs.join(' ms, ')} ms after the restore`);
  },
);
