// `rdp list` and `rdp connect` against a REAL sidecar, with the REAL FreeRDP (xfreerdp on an Xvfb display):
// the route's credentials are stored as an envelope made for the server's RDP key (as the admin app
// does in the browser); the client gets them re-encrypted for its one-time key, writes the .rdp
// profile, starts xfreerdp with the user on the command line and the password on stdin only (checked
// in /proc while it runs) and stops it when the CLI is stopped; xfreerdp's own exit code becomes the
// CLI's; the session is recorded, and an admin's disconnect-all reaches the client through its next
// session heartbeat, which kills xfreerdp (exit code 3). The "RDP server" here is a TCP listener that accepts and stays silent (xfreerdp then waits
// in the connection sequence), or closes at once (xfreerdp gives up by itself). Authentication
// against a real xrdp is the e2e's (test/e2e/rdp-*.test.ts). A maintenance window refuses connect
// with its note.
//   cd client && npm test   (the xfreerdp part is skipped without xfreerdp and Xvfb)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { encryptCredentials } from '@gatehouse/common/rdp-credentials.js';
import { apiToken, bearer, startTestServer, type TestServer } from '../../sidecar/test/lib/server.js';
import { waitFor } from '../../test/lib/wait.js';
import { which } from '../src/rdp.js';
import { StateDir } from '../src/state.js';

const MAIN = path.join(import.meta.dirname, '..', 'src', 'main.ts');
const PASSWORD = `pw-${process.pid}-Zq9!x`;
const noFreeRdp = !which('xfreerdp') || !which('Xvfb') ? 'needs xfreerdp (freerdp2-x11) and Xvfb (xvfb)' : false;

/** An Xvfb of this test on a free display (xvfb-run's own exit code can hide the CLI's: it fails when its cleanup races another Xvfb). */
async function startXvfb(): Promise<{ display: string; stop: () => void }> {
  const p = spawn('Xvfb', ['-displayfd', '1', '-nolisten', 'tcp', '-screen', '0', '1024x768x24'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const n = await new Promise<string>((resolve, reject) => {
    let b = '';
    p.stdout.on('data', (d) => {
      b += d;
      if (b.includes('\n')) resolve(b.trim());
    });
    p.once('exit', () => reject(new Error('Xvfb exited')));
  });
  return { display: `:${n}`, stop: () => p.kill('SIGTERM') };
}

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

describe('rdp list and rdp connect', () => {
  let s: TestServer;
  let admin: Record<string, string>;
  let state: StateDir;
  let home: string;
  let xvfb: { display: string; stop: () => void } | null = null;
  let rdpServer: net.Server;
  let mode: 'hold' | 'close' = 'hold';
  const held: net.Socket[] = [];
  let accepted = 0;
  let routeId: number;
  const base = () => ['--state-dir', state.dir];

  before(async () => {
    s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_CLIENT: '100000' });
    admin = bearer(await apiToken(s));
    const token = await apiToken(s, ['client']);
    state = new StateDir(fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-client-rdp-')));
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-client-home-'));
    if (!noFreeRdp) xvfb = await startXvfb();
    rdpServer = net.createServer((sock) => {
      accepted++;
      if (mode === 'close') return sock.destroy();
      held.push(sock);
      sock.on('error', () => undefined);
    });
    await new Promise<void>((r) => rdpServer.listen(0, '127.0.0.1', () => r()));
    const port = (rdpServer.address() as net.AddressInfo).port;
    const created = await s.req('/api/v1/rdp', {
      method: 'POST',
      json: { name: 'desk', access_mode: 'external', target_host: '127.0.0.1', target_port: port, network_level_auth: false },
      headers: admin,
    });
    assert.equal(created.status, 201, JSON.stringify(created.data));
    routeId = created.data.route.id;
    const pub = (await s.req('/api/v1/rdp/pubkey', { headers: admin })).data;
    const envelope = await encryptCredentials(pub.public_key, { username: 'alice', password: PASSWORD, domain: '' });
    const put = await s.req(`/api/v1/rdp/${routeId}/credentials`, { method: 'PUT', json: { credentials: envelope }, headers: admin });
    assert.equal(put.status, 200, JSON.stringify(put.data));
    const reg = await cli(['register', '--server', s.url, '--token', token, '--fingerprint', `rdp-test-${process.pid}`, '--hostname', 'rdp-laptop', ...base()]);
    assert.equal(reg.code, 0, reg.stderr);
  });

  after(async () => {
    xvfb?.stop();
    for (const h of held) h.destroy();
    rdpServer?.close();
    await s?.close();
    fs.rmSync(state.dir, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  });

  test('rdp list shows the route with its stored credentials', async () => {
    const r = await cli(['rdp', 'list', '--json', ...base()]);
    assert.equal(r.code, 0, r.stderr);
    const route = JSON.parse(r.stdout).routes.find((x: { id: number }) => x.id === routeId);
    assert.ok(route, r.stdout);
    assert.equal(route.has_credentials, true);
    assert.equal(route.access_mode, 'external');
    const human = await cli(['rdp', 'list', ...base()]);
    assert.match(human.stdout, new RegExp(`^${routeId}\\s+desk\\s+external\\s+stored\\s+ready`, 'm'));
  });

  test('rdp status: the target checked now is reachable (the test listener accepts)', async () => {
    mode = 'close';
    const r = await cli(['rdp', 'status', String(routeId), '--refresh', '--json', ...base()]);
    assert.equal(r.code, 0, r.stderr);
    const st = JSON.parse(r.stdout).status;
    assert.equal(st.rdp_route_id, routeId);
    assert.equal(st.reachable, true, r.stdout);
    const human = await cli(['rdp', 'status', String(routeId), ...base()]);
    assert.match(human.stdout, /^desk: reachable/);
    mode = 'hold';
  });

  test('rdp connect --no-launch: the profile is written (0600, no password) and the credentials open with the one-time key', async () => {
    const out = path.join(state.dir, 'desk.rdp');
    const r = await cli(['rdp', 'connect', String(routeId), '--no-launch', '--json', '--out', out, ...base()]);
    assert.equal(r.code, 0, r.stderr);
    const j = JSON.parse(r.stdout);
    assert.equal(j.ok, true);
    assert.equal(j.has_credentials, true);
    assert.equal(j.launched, false);
    assert.equal(j.profile, out);
    assert.equal(j.address.port, (rdpServer.address() as net.AddressInfo).port);
    const text = fs.readFileSync(out, 'utf8');
    assert.match(text, /full address:s:127\.0\.0\.1:\d+/);
    assert.ok(!text.includes(PASSWORD));
    assert.ok(!r.stdout.includes(PASSWORD) && !r.stderr.includes(PASSWORD));
    assert.equal(fs.statSync(out).mode & 0o777, 0o600);
  });

  /** The xfreerdp started for the route's profile. */
  const xfreerdpPid = () =>
    waitFor(
      () => {
        const ps = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
        const line = ps.split('\n').find((l) => /\bxfreerdp\b/.test(l) && l.includes(state.rdpFile(routeId)));
        return line ? Number(line.trim().split(/\s+/)[0]) : null;
      },
      15_000,
      'the xfreerdp process',
    );

  test('rdp connect with xfreerdp: the password reaches it on stdin only; stopping the CLI stops xfreerdp', { skip: noFreeRdp, timeout: 90_000 }, async () => {
    mode = 'hold';
    const before = accepted;
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, 'rdp', 'connect', String(routeId), '--json', ...base(), '--', '/cert:ignore', '/sec:tls'], {
      env: { ...process.env, HOME: home, DISPLAY: xvfb?.display },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    await waitFor(() => accepted > before, 30_000, "xfreerdp connects to the route's address");
    const pid = await xfreerdpPid();
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
    assert.equal(cmdline[1], state.rdpFile(routeId), 'the profile first');
    assert.ok(cmdline.includes('/u:alice'), cmdline.join(' '));
    assert.ok(cmdline.includes('/from-stdin:force'));
    assert.ok(cmdline.includes('/sec:tls') && cmdline.includes('/cert:ignore'), 'the extra arguments after --');
    assert.ok(!cmdline.join(' ').includes(PASSWORD), 'no password on the command line');
    assert.ok(!environ.includes(PASSWORD), 'no password in the environment');
    // SIGTERM to the CLI (the parent of xfreerdp) stops xfreerdp and the CLI reports it
    const cliPid = Number(
      fs
        .readFileSync(`/proc/${pid}/stat`, 'utf8')
        .replace(/^.*\) /, '')
        .split(' ')[1],
    );
    assert.match(fs.readFileSync(`/proc/${cliPid}/cmdline`, 'utf8'), /main\.ts\0rdp\0connect/);
    process.kill(cliPid, 'SIGTERM');
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000))]);
    assert.notEqual(code, 'timeout', stderr.slice(-2000));
    const j = JSON.parse(stdout);
    assert.equal(j.launched, true);
    assert.equal(j.exit_code, null, 'xfreerdp ended by our signal');
    assert.equal(fs.existsSync(`/proc/${pid}`), false, 'xfreerdp is gone');
    assert.ok(!stdout.includes(PASSWORD) && !stderr.includes(PASSWORD));
  });

  test("rdp connect with xfreerdp that gives up by itself: its exit code is the CLI's", { skip: noFreeRdp, timeout: 90_000 }, async () => {
    mode = 'close';
    const r = await new Promise<Run>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', MAIN, 'rdp', 'connect', String(routeId), '--json', ...base(), '--', '/cert:ignore', '/sec:tls'],
        { env: { ...process.env, HOME: home, DISPLAY: xvfb?.display }, timeout: 60_000 },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    const j = JSON.parse(r.stdout);
    assert.equal(j.launched, true);
    assert.ok(typeof j.exit_code === 'number' && j.exit_code !== 0, `xfreerdp failed: ${j.exit_code}`);
    assert.equal(r.code, j.exit_code);
    assert.equal(j.disconnected, null);
    assert.match(r.stderr, /xfreerdp exited \(code \d+\)/);
  });

  test(
    "rdp connect records its session; an admin's disconnect-all drops the connection at the next session heartbeat",
    { skip: noFreeRdp, timeout: 90_000 },
    async () => {
      mode = 'hold';
      const before = accepted;
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', MAIN, 'rdp', 'connect', String(routeId), '--json', '--session-heartbeat', '1', ...base(), '--', '/cert:ignore', '/sec:tls'],
        { env: { ...process.env, HOME: home, DISPLAY: xvfb?.display }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      await waitFor(() => accepted > before, 60_000, 'xfreerdp connects').catch((err) => {
        throw new Error(`${(err as Error).message}; CLI output: ${stdout} ${stderr.slice(-3000)}`);
      });
      const pid = await xfreerdpPid();
      const active = await waitFor(
        async () => {
          const h = (await s.req(`/api/v1/rdp/${routeId}/history`, { headers: admin })).data;
          return h.sessions?.find((x: { status: string }) => x.status === 'active');
        },
        10_000,
        'the active session',
      );
      const dc = await s.req(`/api/v1/rdp/${routeId}/sessions/disconnect-all`, { method: 'POST', headers: admin });
      assert.equal(dc.status, 200, JSON.stringify(dc.data));
      assert.ok(dc.data.session_ids.includes(active.id));
      const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000))]);
      assert.equal(code, 3, `exit code; stderr: ${stderr.slice(-2000)}`);
      const j = JSON.parse(stdout);
      assert.equal(j.session_id, active.id);
      assert.equal(j.disconnected.reason, 'disconnected');
      assert.match(stderr, /the server ended this session/);
      assert.equal(fs.existsSync(`/proc/${pid}`), false, 'xfreerdp is gone');
    },
  );

  test('a maintenance window refuses connect with its note', async () => {
    const now = Date.now();
    const m = await s.req(`/api/v1/rdp/${routeId}/maintenance`, {
      method: 'PUT',
      json: { windows: [{ from: new Date(now - 3600_000).toISOString(), to: new Date(now + 3600_000).toISOString(), note: 'patch day' }] },
      headers: admin,
    });
    assert.equal(m.status, 200, JSON.stringify(m.data));
    const r = await cli(['rdp', 'connect', String(routeId), '--no-launch', '--json', ...base()]);
    assert.equal(r.code, 1);
    const j = JSON.parse(r.stdout);
    assert.equal(j.ok, false);
    assert.equal(j.status, 423);
    assert.match(r.stderr, /patch day|maintenance/);
    const list = await cli(['rdp', 'list', ...base()]);
    assert.match(list.stdout, /maintenance until .*patch day/);
  });
});
