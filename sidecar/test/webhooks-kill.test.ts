// Webhook deliveries queued in the database survive a kill -9: the real service (main.ts) queues
// deliveries while the receiver is down, is killed with SIGKILL, and started again on the same data
// directory; once the receiver is up it gets every delivery exactly once, each signature valid.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startReceiver } from './lib/webhook-receiver.js';
import { waitFor } from '../../test/lib/wait.js';

const SECRET = 'kill-test-secret-0123456789';
const PASSWORD = 'kill-test-pass-1';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function startService(dir: string, port: number): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve(import.meta.dirname, '..', 'src', 'main.ts')], {
    env: {
      ...process.env,
      GATEHOUSE_DATA_DIR: dir,
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_ADMIN_PASSWORD: PASSWORD,
      GATEHOUSE_MANAGE_CADDY: 'false',
      GATEHOUSE_WG_MANAGE: 'false',
      GATEHOUSE_LOG_LEVEL: 'warn',
      GATEHOUSE_RATE_LIMIT_LOGIN: '100000',
      GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'true',
      GATEHOUSE_WEBHOOK_RETRY_BASE: '1',
      GATEHOUSE_WEBHOOK_TIMEOUT: '2',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

test(
  'deliveries queued while the receiver is down survive a kill -9 and arrive exactly once after the restart',
  { skip: process.env.TEST_DATABASE_URL ? 'SQLite only' : false, timeout: 120_000 },
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-webhook-kill-'));
    const port = await freePort();
    const rxPort = await freePort(); // nothing listens there yet: the receiver is down
    const base = `http://127.0.0.1:${port}`;
    let svc = startService(dir, port);
    let rx: Awaited<ReturnType<typeof startReceiver>> | undefined;
    try {
      await waitFor(async () => (await fetch(`${base}/health`)).ok, 30_000, { intervalMs: 100, what: 'the service' });
      const login = await fetch(`${base}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ username: 'admin', password: PASSWORD }),
      });
      assert.equal(login.status, 200);
      const cookie = login.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const csrf = (await login.json()).csrfToken;
      const tok = await fetch(`${base}/api/v1/tokens`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'kill', scopes: ['webhooks'] }),
      });
      const h = { authorization: `Bearer ${(await tok.json()).token}`, 'content-type': 'application/json' };
      const created = await fetch(`${base}/api/v1/webhooks`, {
        method: 'POST',
        headers: h,
        body: JSON.stringify({
          name: 'kill',
          url: `http://127.0.0.1:${rxPort}/hook`,
          events: ['login_failed'],
          enabled: true,
          secret: SECRET,
          retry_count: 10,
        }),
      });
      assert.equal(created.status, 201);
      const id = (await created.json()).webhook.id;

      const N = 6;
      for (let i = 0; i < N; i++) {
        const r = await fetch(`${base}/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ username: `intruder${i}`, password: 'wrong' }),
        });
        assert.equal(r.status, 401);
      }
      // every delivery queued and tried at least once (connection refused)
      const log = () => fetch(`${base}/api/v1/webhooks/${id}/deliveries`, { headers: h }).then((r) => r.json());
      const queued = await waitFor(
        async () => {
          const l = await log();
          return l.total === N && l.deliveries.every((d: { status: string; attempts: number }) => d.status === 'pending' && d.attempts >= 1) && l;
        },
        30_000,
        { intervalMs: 100, what: 'the deliveries to be tried' },
      );
      assert.match(queued.deliveries[0].last_error, /ECONNREFUSED/);
      const uids = new Set<string>(queued.deliveries.map((d: { uid: string }) => d.uid));

      svc.child.kill('SIGKILL');
      assert.equal(await svc.exited, null);

      rx = await startReceiver(SECRET, { port: rxPort });
      svc = startService(dir, port);
      await waitFor(async () => (await fetch(`${base}/health`)).ok, 30_000, { intervalMs: 100, what: 'the restarted service' });
      await waitFor(
        async () => {
          const l = await log();
          return l.deliveries.every((d: { status: string }) => d.status === 'delivered') && l;
        },
        30_000,
        { intervalMs: 100, what: 'every delivery' },
      );
      await new Promise((r) => setTimeout(r, 3_000)); // not a condition: proves nothing is sent twice
      assert.equal(rx.got.length, N, `received ${rx.got.length}: ${rx.got.map((g) => g.delivery).join(', ')}`);
      assert.deepEqual(new Set(rx.got.map((g) => g.delivery)), uids, 'each queued delivery once');
      for (const g of rx.got) {
        assert.ok(g.signatureValid, `signature of ${g.delivery}`);
        assert.equal(g.event, 'login_failed');
      }
      assert.deepEqual(new Set(rx.got.map((g) => g.json!.data.username)), new Set(Array.from({ length: N }, (_, i) => `intruder${i}`)));
      svc.child.kill('SIGTERM');
      assert.equal(await svc.exited, 0, svc.output());
    } finally {
      if (svc.child.exitCode === null) svc.child.kill('SIGKILL');
      await rx?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
