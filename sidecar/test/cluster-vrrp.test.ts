// The floating address (src/cluster/vrrp.ts, docs/guides/cluster.md#the-floating-address-keepalived):
// keepalived.conf rendered by a pure function (golden file), the CLI that prints it, the VRRP state
// read back from the notify state file, the local interfaces and keepalived's pid file, and the
// shared WireGuard server key (same private key and listen port on every node of one database).
// keepalived itself moving the address between two namespaces: test/e2e/cluster-vrrp.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assertGolden } from './lib/golden.js';
import { freshPgDatabase, startTestServer, type TestServer } from './lib/server.js';
import { waitFor } from '../../test/lib/wait.js';
import { LEADER_RETRY_MS } from '../src/cluster/config.js';
import { checkKeepalivedOptions, readVrrpStatus, renderKeepalivedConfig, vrrpRoleFrom, type KeepalivedOptions } from '../src/cluster/vrrp.js';
import { VrrpWatcher } from '../src/cluster/vrrp-watch.js';
import { loadConfig } from '../src/config.js';
import { createAppContext } from '../src/app-context.js';
import { featureModels } from '../src/features.js';
import { createLogger } from '../src/util/logger.js';
import { MasterKey } from '../src/util/crypto.js';

const SIDECAR = path.resolve(import.meta.dirname, '..');
const GOLDEN = path.join(import.meta.dirname, 'golden', 'cluster');

const nodeA: KeepalivedOptions = {
  nodeName: 'edge-a',
  iface: 'eth0',
  routerId: 51,
  priority: 150,
  address: '203.0.113.10/24',
  peers: ['198.51.100.2', '198.51.100.3'],
  stateFile: '/var/lib/gatehouse/vrrp.state',
};

test('keepalived.conf: instance, router id, priority, address, unicast peers, notify into the state file (golden)', () => {
  const text = renderKeepalivedConfig(nodeA);
  assertGolden(path.join(GOLDEN, 'keepalived-edge-a.conf'), text);
  assert.equal(renderKeepalivedConfig(nodeA), text, 'pure: same options, same text');
  // the other node: only the priority and the peers differ
  const b = renderKeepalivedConfig({ ...nodeA, nodeName: 'edge-b', priority: 100, peers: ['198.51.100.1'] });
  assertGolden(path.join(GOLDEN, 'keepalived-edge-b.conf'), b);
  const multicast = renderKeepalivedConfig({ ...nodeA, peers: [], advertIntS: 0.5 });
  assert.doesNotMatch(multicast, /unicast_peer/, 'no peers: multicast');
  assert.match(multicast, /^ {2}advert_int 0\.5$/m);
});

test('keepalived options keepalived would reject are refused, naming the option', () => {
  const bad: [Partial<KeepalivedOptions>, RegExp][] = [
    [{ iface: 'eth 0' }, /^interface/],
    [{ iface: 'a-name-longer-than-15' }, /^interface/],
    [{ routerId: 0 }, /^virtual router id/],
    [{ routerId: 256 }, /^virtual router id/],
    [{ priority: 255 }, /^priority/],
    [{ priority: 1.5 }, /^priority/],
    [{ address: '203.0.113.10' }, /^address/],
    [{ address: '203.0.113.10/33' }, /^address/],
    [{ address: 'vip.example.com/24' }, /^address/],
    [{ peers: ['not-an-ip'] }, /^peers/],
    [{ peers: ['2001:db8::2'] }, /^peers: .*family/],
    [{ peers: ['203.0.113.10'] }, /^peers: .*floating address itself/],
    [{ stateFile: 'relative/vrrp.state' }, /^state file/],
    [{ stateFile: "/tmp/x'; rm -rf /; '" }, /^state file/],
    [{ stateFile: '/tmp/with space' }, /^state file/],
    [{ advertIntS: 0 }, /^advert interval/],
  ];
  for (const [change, err] of bad) {
    assert.throws(() => checkKeepalivedOptions({ ...nodeA, ...change }), { message: err }, JSON.stringify(change));
    assert.throws(() => renderKeepalivedConfig({ ...nodeA, ...change }), { message: err });
  }
  assert.doesNotThrow(() => checkKeepalivedOptions({ ...nodeA, address: '2001:db8::10/64', peers: ['2001:db8::2'] }));
});

test('the role from state, address and process: master and backup only when all three agree', () => {
  const cases: [string | null, boolean | null, boolean | null, string, RegExp][] = [
    ['MASTER\n', true, true, 'master', /^MASTER$/],
    ['MASTER', null, null, 'master', /^MASTER$/],
    ['BACKUP\n', false, true, 'backup', /^BACKUP$/],
    ['backup', null, true, 'backup', /^BACKUP$/],
    ['MASTER\n', true, false, 'unknown', /not running/], // a killed keepalived leaves its address and MASTER behind
    ['BACKUP\n', false, false, 'unknown', /not running/],
    [null, false, true, 'unknown', /not written/],
    ['', false, true, 'unknown', /not written/],
    ['MASTER\n', false, true, 'unknown', /not on a local interface/],
    ['BACKUP\n', true, true, 'unknown', /is on a local interface/],
    ['FAULT\n', false, true, 'unknown', /FAULT/],
    ['STOP\n', false, true, 'unknown', /STOP/],
    ['GARBAGE\n', false, true, 'unknown', /unrecognised/],
  ];
  for (const [stateText, addressHeld, running, role, reason] of cases) {
    const r = vrrpRoleFrom({ stateText, addressHeld, running });
    assert.equal(r.vrrp, role, JSON.stringify({ stateText, addressHeld, running }));
    assert.match(r.reason, reason);
    assert.equal(r.address_held, addressHeld);
    assert.equal(r.keepalived_running, running);
  }
});

test('readVrrpStatus reads the state file, this machine’s interfaces and the pid file', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-vrrp-'));
  try {
    const stateFile = path.join(dir, 'vrrp.state');
    const pidFile = path.join(dir, 'keepalived.pid');
    fs.writeFileSync(pidFile, `${process.pid}\n`);
    // 127.0.0.1 is on lo here; 192.0.2.77 (TEST-NET-1) is on no interface
    assert.equal(readVrrpStatus({ stateFile, address: '127.0.0.1/8', pidFile }).vrrp, 'unknown', 'no state file yet');
    fs.writeFileSync(stateFile, 'MASTER\n');
    assert.equal(readVrrpStatus({ stateFile, address: '127.0.0.1/8', pidFile }).vrrp, 'master');
    assert.deepEqual(readVrrpStatus({ stateFile, address: '192.0.2.77/24', pidFile }), {
      vrrp: 'unknown',
      keepalived_state: 'MASTER',
      address_held: false,
      keepalived_running: true,
      reason: 'MASTER, but the floating address is not on a local interface',
    });
    fs.writeFileSync(stateFile, 'BACKUP\n');
    assert.equal(readVrrpStatus({ stateFile, address: '192.0.2.77/24', pidFile }).vrrp, 'backup');
    assert.equal(readVrrpStatus({ stateFile, address: '192.0.2.77/24' }).keepalived_running, null, 'no pid file configured: not checked');
    // a pid file whose process has exited
    const child = spawn(process.execPath, ['-e', '']);
    await new Promise((r) => child.once('exit', r));
    fs.writeFileSync(pidFile, `${child.pid}\n`);
    assert.equal(readVrrpStatus({ stateFile, address: '192.0.2.77/24', pidFile }).vrrp, 'unknown', 'keepalived gone');
    fs.rmSync(pidFile);
    assert.equal(readVrrpStatus({ stateFile, address: '192.0.2.77/24', pidFile }).keepalived_running, false, 'no pid file: not running');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the VRRP watcher reports each change of role, takes the tunnels over on becoming master, carries only as master', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-vrrp-watch-'));
  try {
    const stateFile = path.join(dir, 'vrrp.state');
    const pidFile = path.join(dir, 'keepalived.pid');
    fs.writeFileSync(pidFile, `${process.pid}\n`);
    const calls: string[] = [];
    const hooks = {
      report: async (role: string) => void calls.push(`report ${role}`),
      takeOver: async () => void calls.push('takeOver'),
    };
    // 127.0.0.1 is on lo here: the state file decides between master and a contradiction
    const w = new VrrpWatcher({ stateFile, address: '127.0.0.1/8', pidFile }, hooks);
    assert.equal(w.carrier, false, 'not before the first look');
    assert.equal((await w.tick()).vrrp, 'unknown');
    assert.deepEqual(calls, ['report unknown']);
    assert.equal(w.carrier, false, 'unknown does not carry');
    fs.writeFileSync(stateFile, 'MASTER\n');
    await w.tick();
    await w.tick(); // no change: nothing reported
    assert.deepEqual(calls, ['report unknown', 'report master', 'takeOver']);
    assert.equal(w.carrier, true);
    fs.writeFileSync(stateFile, 'BACKUP\n'); // BACKUP with the address here: unknown
    await w.tick();
    fs.rmSync(pidFile); // keepalived gone
    await w.tick();
    assert.deepEqual(calls, ['report unknown', 'report master', 'takeOver', 'report unknown']);
    assert.equal(w.carrier, false);
    const backup = new VrrpWatcher({ stateFile, address: '192.0.2.77/24' }, hooks);
    calls.length = 0;
    assert.equal((await backup.tick()).vrrp, 'backup');
    assert.deepEqual(calls, ['report backup']);
    assert.equal(backup.carrier, false, 'a backup does not carry');
    assert.equal(new VrrpWatcher({ stateFile }, hooks).carrier, true, 'no floating address: one node, it carries');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('npm run cli -- keepalived-config prints the node’s keepalived.conf from GATEHOUSE_VRRP_*; vrrp-state its state', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-vrrp-cli-'));
  try {
    const env = {
      ...process.env,
      GATEHOUSE_DATA_DIR: dir,
      GATEHOUSE_NODE_NAME: 'edge-a',
      GATEHOUSE_VRRP_ADDRESS: '203.0.113.10/24',
      GATEHOUSE_VRRP_INTERFACE: 'eth0',
      GATEHOUSE_VRRP_PRIORITY: '150',
      GATEHOUSE_VRRP_PEERS: '198.51.100.2, 198.51.100.3',
      GATEHOUSE_VRRP_STATE_FILE: '/var/lib/gatehouse/vrrp.state',
      GATEHOUSE_VRRP_PID_FILE: 'none',
    };
    const cli = (args: string[], extra: Record<string, string | undefined> = {}) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: SIDECAR, env: { ...env, ...extra }, encoding: 'utf8', timeout: 60_000 });
    const r = cli(['keepalived-config']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, renderKeepalivedConfig(nodeA), "the renderer's text for these options (GATEHOUSE_NODE_NAME in the header)");
    const missing = cli(['keepalived-config'], { GATEHOUSE_VRRP_INTERFACE: undefined });
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /GATEHOUSE_VRRP_INTERFACE/);
    assert.equal(missing.stdout, '');
    fs.writeFileSync(path.join(dir, 'vrrp.state'), 'BACKUP\n');
    const st = cli(['vrrp-state'], { GATEHOUSE_VRRP_STATE_FILE: undefined });
    assert.equal(st.status, 0, st.stderr);
    assert.deepEqual(JSON.parse(st.stdout), { vrrp: 'backup', keepalived_state: 'BACKUP', address_held: false, keepalived_running: null, reason: 'BACKUP' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test(
  'shared server key: two nodes on one PostgreSQL database with the same master key hold the same WireGuard private key and listen port',
  { skip: process.env.TEST_DATABASE_URL ? false : 'nodes share a database on PostgreSQL only (TEST_DATABASE_URL; the PostgreSQL run of the suite)' },
  async () => {
    const databaseUrl = await freshPgDatabase(process.env.TEST_DATABASE_URL!);
    const dirs = ['a', 'b', 'c'].map((n) => fs.mkdtempSync(path.join(os.tmpdir(), `gh-vrrp-node-${n}-`)));
    const node = (dataDir: string) =>
      createAppContext(
        loadConfig({
          GATEHOUSE_DATA_DIR: dataDir,
          DATABASE_URL: databaseUrl,
          GATEHOUSE_WG_PORT: '51999',
          GATEHOUSE_MANAGE_CADDY: 'false',
          GATEHOUSE_WG_MANAGE: 'false',
        }),
        { models: featureModels, log: createLogger('error', true) },
      );
    try {
      const a = await node(dirs[0]!);
      const keyA = await a.wireguard.serverKeys();
      const specA = (await a.wireguard.desiredSpec()).spec;
      await a.db.close();
      // node B: its own data directory, the master key copied from A (docs: the key file goes to every node)
      fs.copyFileSync(path.join(dirs[0]!, 'master.key'), path.join(dirs[1]!, 'master.key'));
      const b = await node(dirs[1]!);
      const keyB = await b.wireguard.serverKeys();
      const specB = (await b.wireguard.desiredSpec()).spec;
      await b.db.close();
      assert.equal(keyB.publicKey, keyA.publicKey, 'B reads the key A made: one server public key for the peers');
      assert.equal(specB.privateKey, specA.privateKey, 'the same private key on both interfaces');
      assert.equal(specB.listenPort, 51999);
      assert.equal(specA.listenPort, specB.listenPort);
      // node C without A's master key refuses to start, rather than making a key of its own (and so
      // does one with another key file); neither leaves a key file behind or changes the database
      await assert.rejects(node(dirs[2]!), /master key: .*master\.key does not exist, but the database holds secrets sealed under a master key/);
      assert.equal(fs.existsSync(path.join(dirs[2]!, 'master.key')), false);
      fs.writeFileSync(path.join(dirs[2]!, 'master.key'), MasterKey.generate().fileText());
      await assert.rejects(node(dirs[2]!), /master key: .*master\.key does not open the data in the database/);
    } finally {
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    }
  },
);

test(
  'with a floating address the address holder leads: a leader that becomes VRRP backup steps down and the master takes the lead; a backup does not try',
  { skip: process.env.TEST_DATABASE_URL ? false : 'nodes share a database on PostgreSQL only (TEST_DATABASE_URL; the PostgreSQL run of the suite)' },
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-vrrp-lead-'));
    const servers: TestServer[] = [];
    try {
      const pidFile = path.join(dir, 'keepalived.pid');
      fs.writeFileSync(pidFile, `${process.pid}\n`); // "keepalived" runs: this process
      const state = { a: path.join(dir, 'a.state'), b: path.join(dir, 'b.state') };
      // a's floating address is on no interface here (192.0.2.77, TEST-NET-1), b's is (127.0.0.1): a
      // can be backup, b master
      const env = (name: 'a' | 'b', address: string, databaseUrl?: string) => ({
        GATEHOUSE_CLUSTER: 'true',
        GATEHOUSE_NODE_NAME: `edge-${name}`,
        GATEHOUSE_VRRP_ADDRESS: address,
        GATEHOUSE_VRRP_STATE_FILE: state[name],
        GATEHOUSE_VRRP_PID_FILE: pidFile,
        GATEHOUSE_MASTER_KEY_FILE: path.join(dir, 'master.key'),
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      });
      // a starts first with no state file yet (unknown): it leads
      const a = await startTestServer(env('a', '192.0.2.77/24'), { startFeatures: true });
      servers.push(a);
      assert.equal(a.deps.cluster.isLeader(), true, 'an unknown VRRP role may lead (keepalived not up yet)');
      fs.writeFileSync(state.b, 'MASTER\n');
      const b = await startTestServer(env('b', '127.0.0.1/8', a.databaseUrl), { startFeatures: true });
      servers.push(b);
      assert.equal(b.deps.cluster.isLeader(), false, 'the lock is held by edge-a');
      // a becomes backup: it gives the lead up, and the master takes it at its next try
      fs.writeFileSync(state.a, 'BACKUP\n');
      await waitFor(() => !a.deps.cluster.isLeader() && b.deps.cluster.isLeader(), 10_000, {
        what: 'edge-b (master) leads, edge-a (backup) not',
        intervalMs: 100,
      });
      // and a backup does not take it back (three of its tries)
      await new Promise((r) => setTimeout(r, 3 * LEADER_RETRY_MS)); // not a condition: proving a try that must not happen
      assert.equal(a.deps.cluster.isLeader(), false);
      assert.equal(b.deps.cluster.isLeader(), true);
    } finally {
      for (const s of servers.reverse()) await s.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
