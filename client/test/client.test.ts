// The client (its CLI, as processes) against a REAL sidecar on loopback: register (and again: the same
// peer), `up --no-tunnel` idling on config/check (304s), the config change after a peer edit seen and
// saved, heartbeats and the hostname stored by the server, status/services as JSON, the daemon
// running on through a stopped server and recovering when it is back on the same port, a foreign
// fingerprint refused, and `down`. The real tunnel is covered by test/tunnel.test.ts (as root) and
// the RDP e2e (test/e2e/rdp-*.test.ts).
//   cd client && npm test
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiToken, bearer, startTestServer, type TestServer } from '../../sidecar/test/lib/server.js';
import { freePort } from '../../test/lib/ports.js';
import { waitFor } from '../../test/lib/wait.js';
import { StateDir } from '../src/state.js';

const MAIN = path.join(import.meta.dirname, '..', 'src', 'main.ts');
const n = 100 + (process.pid % 100);
const SUBNET = `127.81.${n}.0/24`;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}
function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', MAIN, ...args], { env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('the client against a real sidecar', () => {
  let s: TestServer;
  let port: number;
  let dataDir: string;
  let admin: Record<string, string>;
  let token: string;
  let state: StateDir;
  let daemon: ChildProcess | null = null;
  let daemonLog = '';
  let peerId: number;
  const FP = `client-test-fp-${process.pid}`;
  const base = () => ['--state-dir', state.dir];

  const start = async () => {
    s = await startTestServer(
      {
        GATEHOUSE_DATA_DIR: dataDir,
        GATEHOUSE_PORT: String(port),
        GATEHOUSE_BIND: '127.0.0.1',
        GATEHOUSE_WG_SUBNET: SUBNET,
        GATEHOUSE_PUBLIC_HOST: 'vpn.example.test',
        GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
        GATEHOUSE_RATE_LIMIT_CLIENT: '100000',
      },
      { listen: true },
    );
  };

  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-client-srv-'));
    port = await freePort();
    await start();
    admin = bearer(await apiToken(s));
    token = await apiToken(s, ['client']);
    state = new StateDir(fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-client-state-')));
  });

  after(async () => {
    if (daemon && daemon.exitCode === null) daemon.kill('SIGKILL');
    await s?.close().catch(() => undefined);
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(state.dir, { recursive: true, force: true });
  });

  test('register: the machine gets a peer; the state is 0600; registering again gives the same peer', async () => {
    const r = await cli(['register', '--server', s.url, '--token', token, '--fingerprint', FP, '--hostname', 'Test_Laptop', '--json', ...base()]);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.ok, true);
    assert.equal(j.created, true);
    assert.equal(j.machine.hostname, 'test-laptop');
    peerId = j.peer.id;
    assert.ok(peerId > 0);
    assert.equal(fs.statSync(state.clientFile).mode & 0o777, 0o600);
    assert.equal(fs.statSync(state.dir).mode & 0o777, 0o700);
    const saved = state.requireClient();
    assert.equal(saved.token, token);
    assert.equal(saved.fingerprint, FP);
    // the token stays out of the output
    assert.ok(!r.stdout.includes(token));
    // again, from the same machine (the stored fingerprint is used): the same peer
    const again = await cli(['register', '--server', s.url, '--token', token, '--fingerprint', FP, '--json', ...base()]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).created, false);
    assert.equal(JSON.parse(again.stdout).peer.id, peerId);
  });

  test('another machine fingerprint is refused with the bound token', async () => {
    const r = await cli(['services', '--json', '--fingerprint', 'some-other-machine', ...base()]);
    assert.equal(r.code, 1);
    const j = JSON.parse(r.stdout);
    assert.equal(j.ok, false);
    assert.ok([401, 403].includes(j.status), r.stdout);
  });

  test('up: config fetched and saved, then 304s; heartbeats and the hostname reach the server', async () => {
    daemon = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        MAIN,
        'up',
        '--no-tunnel',
        '--poll-interval',
        '0.3',
        '--heartbeat-interval',
        '0.4',
        '--max-backoff',
        '1',
        '--hostname',
        'test-laptop',
        ...base(),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    daemon.stdout!.on('data', (d) => (daemonLog += d));
    daemon.stderr!.on('data', (d) => (daemonLog += d));
    const st = await waitFor(
      () => {
        const v = state.readStatus();
        return v && v.config_source === 'server' && v.checks.unchanged >= 2 && v.heartbeats >= 1 && v.last_hostname_report ? v : null;
      },
      30_000,
      'config, 304s, a heartbeat and the hostname report',
    );
    assert.equal(st.pid, daemon.pid);
    assert.equal(state.runningPid(), daemon.pid);
    assert.equal(st.checks.changed, 1, 'the first check (no hash held) fetched the config');
    const saved = state.readTunnel()!;
    assert.equal(saved.config_hash, st.config_hash);
    assert.match(String(saved.config.config), /\[Interface\][\s\S]*PrivateKey = [\s\S]*\[Peer\][\s\S]*Endpoint = vpn\.example\.test:/);
    assert.equal(fs.statSync(state.tunnelFile).mode & 0o777, 0o600, 'the private key is in there');
    // what the server stored
    const machines = await waitFor(
      async () => {
        const tokens = (await s.req('/api/v1/tokens', { headers: admin })).data.tokens as Array<{ id: number; name: string; scopes: string[] }>;
        const tid = tokens.find((t) => t.scopes.includes('client'))!.id;
        const m = (await s.req(`/api/v1/tokens/${tid}/machines`, { headers: admin })).data.machines;
        return m?.[0]?.last_seen_at && m[0].rx_bytes !== null && m[0].status ? m : null;
      },
      10_000,
      'the heartbeat and the device status stored',
    );
    assert.equal(machines.length, 1);
    assert.equal(machines[0].peer_id, peerId);
    assert.equal(machines[0].status!.client_version, JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '..', 'package.json'), 'utf8')).version);
    assert.deepEqual(machines[0].status!.tunnel, {
      up: false,
      interface: 'gatehouse-c0',
      endpoint: saved.config.config ? String(saved.config.config).match(/^Endpoint = (.*)$/m)![1] : '',
      mode: 'none',
    });
    assert.equal(typeof machines[0].status!.uptime_s, 'number');
    const peer = (await s.req(`/api/v1/peers/${peerId}`, { headers: admin })).data.peer;
    assert.equal(peer.hostname, 'test-laptop');
  });

  test('status and services as JSON while up', async () => {
    const r = await cli(['status', '--json', '--interface', 'ghcnone0', ...base()]);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.registered, true);
    assert.equal(j.daemon.running, true);
    assert.equal(j.daemon.pid, daemon!.pid);
    assert.equal(j.server.reachable, true);
    assert.equal(j.server.config_current, true);
    assert.equal(j.peer.id, peerId);
    assert.match(j.config.address[0], new RegExp(`^127\\.81\\.${n}\\.\\d+/32$`));
    const sv = await cli(['services', '--json', ...base()]);
    assert.equal(sv.code, 0, sv.stderr);
    assert.equal(JSON.parse(sv.stdout).ok, true);
    assert.ok(Array.isArray(JSON.parse(sv.stdout).services));
  });

  test('a peer edit changes the config: the daemon sees the change and saves the new config', async () => {
    const before = state.readStatus()!;
    const res = await s.req(`/api/v1/peers/${peerId}`, { method: 'PUT', json: { persistent_keepalive: 17 }, headers: admin });
    assert.equal(res.status, 200, JSON.stringify(res.data));
    const st = await waitFor(
      () => {
        const v = state.readStatus();
        return v && v.config_hash !== before.config_hash && v.checks.changed >= 2 ? v : null;
      },
      15_000,
      'the changed config',
    );
    const saved = state.readTunnel()!;
    assert.equal(saved.config_hash, st.config_hash);
    assert.match(String(saved.config.config), /PersistentKeepalive = 17/);
    // then 304s again
    const n0 = st.checks.unchanged;
    await waitFor(() => (state.readStatus()!.checks.unchanged > n0 + 1 ? true : null), 10_000, '304s after the change');
  });

  test('the server stops: the daemon keeps running on its config, and recovers when the server is back', async () => {
    const held = state.readStatus()!.config_hash;
    await s.close();
    const down = await waitFor(
      () => {
        const v = state.readStatus();
        return v && !v.server.reachable && v.server.last_error ? v : null;
      },
      15_000,
      'the daemon notices',
    );
    assert.match(down.server.last_error!, /unreachable/);
    await new Promise((r) => setTimeout(r, 2500)); // not a condition: proves the daemon keeps running
    assert.equal(daemon!.exitCode, null, 'still running');
    const v = state.readStatus()!;
    assert.equal(v.config_hash, held, 'the last config is kept');
    assert.equal(state.readTunnel()!.config_hash, held);
    assert.match(daemonLog, /server call failed: .*unreachable.*retrying with back-off/);
    const hb = v.heartbeats;
    await start();
    await waitFor(
      () => {
        const x = state.readStatus();
        return x && x.server.reachable && x.heartbeats > hb ? x : null;
      },
      20_000,
      'the daemon reaches the restarted server',
    );
    assert.equal(state.readStatus()!.config_hash, held, 'the same config (304)');
  });

  test('down stops the daemon through its pid file', async () => {
    const pid = daemon!.pid!;
    const r = await cli(['down', '--interface', 'ghcnone0', ...base()]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`stopped the daemon \\(pid ${pid}\\)`));
    await waitFor(() => (daemon!.exitCode !== null ? true : null), 5000, 'the daemon exits');
    assert.equal(daemon!.exitCode, 0);
    assert.equal(state.runningPid(), null);
    assert.equal(fs.existsSync(state.pidFile), false);
    assert.equal(state.readStatus()!.tunnel_up, false);
  });
});
