// End to end: the floating address moved by real keepalived (Debian's package) between two nodes.
// Namespaces a and b (the nodes) and a visitor v sit on one bridge (in namespace lan); each node runs
// keepalived with the configuration renderKeepalivedConfig() renders (what `npm run cli --
// keepalived-config` prints) and an HTTP server answering with its name on every address. Checks:
// the address sits on a, the state reader says master on a and backup on b, the visitor reaches a;
// keepalived on a is killed (SIGKILL, parent and VRRP child) → the address comes up on b and the
// visitor reaches b (both times printed); the reader (the CLI `vrrp-state` inside each namespace)
// says master on b and unknown on a; keepalived on a started again stays backup and drops the
// address it had left behind, b keeps it (nopreempt: no second failover).
// Needs root, keepalived, ip; skipped otherwise.
//   node --import tsx --test --test-concurrency=1 test/e2e/cluster-vrrp.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readVrrpStatus, renderKeepalivedConfig, type VrrpStatus } from '../../sidecar/src/cluster/vrrp.js';
import { createNetwork, skipReason, type Network } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';

const reason = skipReason(['keepalived']);
const SIDECAR = path.resolve(import.meta.dirname, '..', '..', 'sidecar');
const VIP = '10.239.0.100';
const PORT = 8080;

interface Node {
  name: string;
  ns: string;
  iface: string;
  ip: string;
  dir: string;
  conf: string;
  stateFile: string;
  pidFile: string;
  vrrpPidFile: string;
}

/** The addresses on the node's interfaces, as `ip` inside its namespace lists them. */
async function nsAddresses(net: Network, ns: string): Promise<string[]> {
  const r = await net.exec(ns, 'ip', ['-j', 'addr', 'show'], { check: true });
  return (JSON.parse(r.stdout) as { addr_info: { local: string }[] }[]).flatMap((l) => l.addr_info.map((a) => a.local));
}

const holds = async (net: Network, n: Node) => (await nsAddresses(net, n.ns)).includes(VIP);

test(
  'keepalived moves the floating address to the other node when its holder dies; the state reader follows',
  { skip: reason ?? false, timeout: 60_000 },
  async (t) => {
    const net = await createNetwork({ prefix: 'vrrp' });
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-e2e-vrrp-'));
    t.after(async () => {
      await net.cleanup();
      fs.rmSync(tmp, { recursive: true, force: true });
    });
    const lan = await net.addNamespace('lan');
    await net.exec(lan, 'ip', ['link', 'add', 'br0', 'type', 'bridge'], { check: true });
    await net.exec(lan, 'ip', ['link', 'set', 'br0', 'up'], { check: true });
    const attach = async (name: string, ip: string) => {
      const ns = await net.addNamespace(name);
      // the lan side's address (the harness gives both ends one) goes: that end is a bridge port
      const l = await net.link(ns, lan, `${ip}/24`, `10.239.${1 + ip.split('.').map(Number)[3]!}.1/30`);
      await net.exec(lan, 'ip', ['addr', 'flush', 'dev', l.ifB], { check: true });
      await net.exec(lan, 'ip', ['link', 'set', l.ifB, 'master', 'br0'], { check: true });
      return { ns, iface: l.ifA };
    };
    const nodes: Node[] = [];
    for (const [name, ip] of [
      ['a', '10.239.0.1'],
      ['b', '10.239.0.2'],
    ] as const) {
      const { ns, iface } = await attach(name, ip);
      const dir = path.join(tmp, name);
      fs.mkdirSync(dir);
      nodes.push({
        name,
        ns,
        iface, // the namespaces' interface names differ (gtn<id>v<n>a)
        ip,
        dir,
        conf: path.join(dir, 'keepalived.conf'),
        stateFile: path.join(dir, 'vrrp.state'),
        pidFile: path.join(dir, 'keepalived.pid'),
        vrrpPidFile: path.join(dir, 'vrrp.pid'),
      });
    }
    const [a, b] = nodes as [Node, Node];
    const visitor = (await attach('v', '10.239.0.9')).ns;
    for (const n of nodes) {
      const conf = renderKeepalivedConfig({
        nodeName: n.name,
        iface: n.iface,
        routerId: 51,
        priority: n === a ? 150 : 100,
        address: `${VIP}/24`,
        peers: nodes.filter((o) => o !== n).map((o) => o.ip),
        stateFile: n.stateFile,
      });
      fs.writeFileSync(n.conf, conf);
      await net.startHttpServer(n.ns, '0.0.0.0', PORT, { name: n.name });
    }
    const logs = new Map<string, string>();
    const startKeepalived = (n: Node) => {
      const p = net.spawn(n.ns, 'keepalived', ['-n', '-l', '-D', '-P', '-f', n.conf, '-p', n.pidFile, '-r', n.vrrpPidFile]);
      const out = (d: Buffer) => logs.set(n.name, (logs.get(n.name) ?? '') + d.toString());
      p.stdout!.on('data', out);
      p.stderr!.on('data', out);
      return p;
    };
    const status = async (n: Node): Promise<VrrpStatus> => {
      const addrs = await nsAddresses(net, n.ns);
      return readVrrpStatus({ stateFile: n.stateFile, address: `${VIP}/24`, pidFile: n.pidFile }, () => addrs);
    };
    const servedBy = async () => JSON.parse((await net.httpGet(visitor, `http://${VIP}:${PORT}/`, { timeoutMs: 1000 })).body).server as string;
    const why = () => [...logs].map(([n, l]) => `--- keepalived ${n}:\n${l.slice(-1500)}`).join('\n');

    // a first (the higher priority), then b, which finds a master and stays backup
    startKeepalived(a);
    await waitFor(async () => (await status(a)).vrrp === 'master', 15_000, 'a master').catch((e) => assert.fail(`${e.message}\n${why()}`));
    startKeepalived(b);
    await waitFor(async () => (await status(b)).vrrp === 'backup', 10_000, 'b backup').catch((e) => assert.fail(`${e.message}\n${why()}`));
    assert.equal(await holds(net, a), true);
    assert.equal(await holds(net, b), false);
    assert.equal((await status(a)).vrrp, 'master');
    assert.equal(await servedBy(), 'a', 'the visitor reaches the holder');

    // the failure: keepalived on a dies outright (parent and its VRRP child)
    const pids = [a.pidFile, a.vrrpPidFile].map((f) => Number(fs.readFileSync(f, 'utf8').trim()));
    const t0 = Date.now();
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    await waitFor(() => holds(net, b), 15_000, { intervalMs: 20, what: 'the address on b' }).catch((e) => assert.fail(`${e.message}\n${why()}`));
    const moved = Date.now() - t0;
    await waitFor(async () => (await servedBy()) === 'b', 15_000, { intervalMs: 20, what: 'the visitor served by b' });
    const served = Date.now() - t0;
    t.diagnostic(`failover: floating address on b ${moved} ms after SIGKILL of a's keepalived; visitor served by b after ${served} ms`);
    assert.ok(moved < 10_000, `the address moved within 10 s (${moved} ms)`);
    // a killed keepalived leaves its address behind: a's state is unknown, not master
    assert.equal(await holds(net, a), true, 'the address left behind on a');
    await waitFor(async () => (await status(b)).vrrp === 'master', 5000, 'b master');
    // the reader as the operator runs it: the CLI inside each node's namespace (a's pid file names a dead process)
    const cli = (n: Node) =>
      spawnSync('ip', ['netns', 'exec', n.ns, process.execPath, '--import', 'tsx', 'src/cli.ts', 'vrrp-state'], {
        cwd: SIDECAR,
        env: { ...process.env, GATEHOUSE_DATA_DIR: n.dir, GATEHOUSE_VRRP_ADDRESS: `${VIP}/24`, GATEHOUSE_VRRP_PID_FILE: n.pidFile },
        encoding: 'utf8',
        timeout: 30_000,
      });
    const [ra, rb] = [cli(a), cli(b)];
    assert.equal(rb.status, 0, rb.stderr);
    assert.deepEqual(JSON.parse(rb.stdout), { vrrp: 'master', keepalived_state: 'MASTER', address_held: true, keepalived_running: true, reason: 'MASTER' });
    assert.equal(ra.status, 0, ra.stderr);
    assert.deepEqual(JSON.parse(ra.stdout), {
      vrrp: 'unknown',
      keepalived_state: 'MASTER',
      address_held: true,
      keepalived_running: false,
      reason: 'keepalived is not running',
    });

    // return: keepalived on a again → backup, the left-behind address removed; b keeps it (no second failover)
    startKeepalived(a);
    await waitFor(async () => (await status(a)).vrrp === 'backup', 10_000, 'a backup again').catch((e) => assert.fail(`${e.message}\n${why()}`));
    assert.equal(await holds(net, a), false, 'a dropped the address it had left behind');
    assert.equal(await holds(net, b), true);
    assert.equal((await status(b)).vrrp, 'master', 'b stays master');
    assert.equal(await servedBy(), 'b');
    assert.equal((logs.get('b')!.match(/Entering MASTER STATE/g) ?? []).length, 1, 'b became master once');
  },
);
