// The Caddy supervisor on its own: clear errors when it cannot start, and (with bin/caddy) the
// Caddy left behind by a crashed sidecar is found by its pidfile and command line and replaced; in a
// cluster (with TEST_DATABASE_URL) Caddy's certificate storage is PostgreSQL, its URL in Caddy's
// environment, and the route views read the certificates from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CaddySupervisor, caddyPaths, processAlive } from '../src/proxy/supervisor.js';
import { CaddyAdminClient } from '../src/proxy/admin-client.js';
import { createLogger } from '../src/util/logger.js';
import { systemClock } from '../src/util/clock.js';
import { freePort } from '../../test/lib/ports.js';
import { CADDY } from '../../test/lib/caddy-env.js';
import { waitFor } from '../../test/lib/wait.js';
import tls from 'node:tls';
import { QueryTypes, Sequelize } from 'sequelize';
import { CertificateStore, readStoredCertificates } from '../src/proxy/certificates.js';
import { blankRoute } from '../src/routes/model.js';
import { renderCaddyConfig } from '../src/proxy/render.js';
import { CADDY_STORAGE_DSN_ENV, CADDY_STORAGE_TABLE } from '../src/proxy/fragments/storage.js';
import { goldenPeers, goldenSettings } from './lib/render-fixtures.js';
import { freshPgDatabase } from './lib/server.js';

const log = createLogger('error', true);

function tmp(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-supervisor-'));
}

test('a missing binary is a clear error naming the build script', async () => {
  const dir = tmp();
  try {
    const sup = new CaddySupervisor({
      bin: path.join(dir, 'no-caddy'),
      adminAddress: `127.0.0.1:${await freePort()}`,
      dataDir: dir,
      log,
      clock: systemClock,
      onReady: async () => undefined,
    });
    await assert.rejects(sup.start(), /Caddy binary not found.*scripts\/build-caddy\.sh.*npm run build.*GATEHOUSE_CADDY_BIN/);
    assert.equal(sup.status().running, false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the admin API must be on loopback', async () => {
  const dir = tmp();
  try {
    for (const bad of ['0.0.0.0:2019', '192.0.2.2:2019', '[::]:2019', 'example.com:2019']) {
      const sup = new CaddySupervisor({ bin: process.execPath, adminAddress: bad, dataDir: dir, log, clock: systemClock, onReady: async () => undefined });
      await assert.rejects(sup.start(), /is not a loopback address/, bad);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test(
  'an admin address that something else already answers on is refused (never push our config to a foreign Caddy)',
  { skip: fs.existsSync(CADDY) ? false : 'no bin/caddy' },
  async () => {
    const dir = tmp();
    const other = http.createServer((_q, r) => r.end('{}'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
    try {
      const addr = `127.0.0.1:${(other.address() as net.AddressInfo).port}`;
      let pushed = 0;
      const sup = new CaddySupervisor({ bin: CADDY, adminAddress: addr, dataDir: dir, log, clock: systemClock, onReady: async () => void pushed++ });
      await assert.rejects(sup.start(), /already answers on GATEHOUSE_CADDY_ADMIN/);
      assert.equal(pushed, 0);
    } finally {
      other.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'the Caddy of a crashed sidecar is stopped by its pidfile and replaced; stop() ends ours by PID',
  { skip: fs.existsSync(CADDY) ? false : 'no bin/caddy', timeout: 60_000 },
  async () => {
    const dir = tmp();
    const addr = `127.0.0.1:${await freePort()}`;
    // A first "sidecar" (a node process running a supervisor) starts Caddy and is then SIGKILLed:
    // its Caddy keeps running, orphaned, holding the admin port.
    const script = `
    import { CaddySupervisor } from ${JSON.stringify(path.resolve(import.meta.dirname, '../src/proxy/supervisor.ts'))};
    import { createLogger } from ${JSON.stringify(path.resolve(import.meta.dirname, '../src/util/logger.ts'))};
    const sup = new CaddySupervisor({ bin: ${JSON.stringify(CADDY)}, adminAddress: ${JSON.stringify(addr)}, dataDir: ${JSON.stringify(dir)}, log: createLogger('error', true), clock: Date.now, onReady: async () => {} });
    await sup.start();
    console.log('READY ' + sup.status().pid);
    setInterval(() => {}, 1000);
  `;
    const file = path.join(dir, 'first.mts');
    fs.writeFileSync(file, script);
    const first = spawn(process.execPath, ['--import', 'tsx', file], { stdio: ['ignore', 'pipe', 'inherit'], cwd: path.resolve(import.meta.dirname, '..') });
    let second: CaddySupervisor | undefined;
    try {
      const oldPid = await new Promise<number>((resolve, reject) => {
        let out = '';
        first.stdout!.on('data', (d) => {
          out += d;
          const m = /READY (\d+)/.exec(out);
          if (m) resolve(Number(m[1]));
        });
        first.once('exit', (code) => reject(new Error(`first supervisor exited (${code}): ${out}`)));
      });
      process.kill(first.pid!, 'SIGKILL');
      await new Promise((r) => first.once('exit', r));
      assert.ok(processAlive(oldPid), 'the orphaned Caddy still runs');
      assert.ok(await new CaddyAdminClient(addr).ping());

      let ready = 0;
      second = new CaddySupervisor({ bin: CADDY, adminAddress: addr, dataDir: dir, log, clock: systemClock, onReady: async () => void ready++ });
      await second.start();
      const newPid = second.status().pid!;
      assert.notEqual(newPid, oldPid);
      assert.equal(processAlive(oldPid), false, 'the orphaned Caddy was stopped');
      assert.equal(ready, 1);
      assert.equal(fs.readFileSync(caddyPaths(dir).pidfile, 'utf8').trim(), String(newPid));
      await second.stop();
      assert.equal(second.status().running, false);
      assert.equal(processAlive(newPid), false);
      assert.equal(fs.existsSync(caddyPaths(dir).pidfile), false);
      assert.equal(await new CaddyAdminClient(addr).ping(500), false);
    } finally {
      if (first.exitCode === null && first.signalCode === null) first.kill('SIGKILL');
      await second?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'onState (the caddy_state event): started, exited when Caddy dies, restarted, stopped',
  { skip: fs.existsSync(CADDY) ? false : 'no bin/caddy', timeout: 60_000 },
  async () => {
    const dir = tmp();
    const states: { running: boolean; pid: number | null; reason: string }[] = [];
    let ready = 0;
    const sup = new CaddySupervisor({
      bin: CADDY,
      adminAddress: `127.0.0.1:${await freePort()}`,
      dataDir: dir,
      log,
      clock: systemClock,
      minBackoffMs: 50,
      onReady: async () => void ready++,
      onState: (st) => void states.push(st),
    });
    try {
      await sup.start();
      const pid = sup.status().pid!;
      assert.deepEqual(states, [{ running: true, pid, reason: 'started' }]);
      process.kill(pid, 'SIGKILL');
      await waitFor(() => states.length >= 3, 10_000, 'the exited and restarted states');
      assert.deepEqual(states.slice(1, 2), [{ running: false, pid: null, reason: 'exited (signal SIGKILL)' }]);
      const newPid = sup.status().pid!;
      assert.notEqual(newPid, pid);
      assert.deepEqual(states.slice(2), [{ running: true, pid: newPid, reason: 'restarted' }]);
      assert.equal(ready, 2);
      await sup.stop();
      assert.deepEqual(states.slice(3), [{ running: false, pid: null, reason: 'stopped' }]);
    } finally {
      await sup.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'in a cluster Caddy gets the storage URL in its environment only; its CA and the certificates it obtains are in PostgreSQL, where the route views read them',
  {
    skip: !fs.existsSync(CADDY) ? 'no bin/caddy' : !process.env.TEST_DATABASE_URL ? 'TEST_DATABASE_URL is not set' : false,
    timeout: 60_000,
  },
  async () => {
    const dir = tmp();
    const dsn = await freshPgDatabase(process.env.TEST_DATABASE_URL!);
    const addr = `127.0.0.1:${await freePort()}`;
    const httpsPort = await freePort();
    const client = new CaddyAdminClient(addr);
    const host = 'shared.example.com';
    const cfg = renderCaddyConfig({
      settings: { ...goldenSettings, adminListen: addr, httpPort: await freePort(), httpsPort, bind: '127.0.0.1', sharedCertificates: true },
      routes: [{ ...blankRoute(Date.UTC(2026, 0, 1)), id: 1, domain: host, https_enabled: true, peer_id: 1, target_port: '8080' }],
      peers: goldenPeers(),
    });
    const sup = new CaddySupervisor({
      bin: CADDY,
      adminAddress: addr,
      dataDir: dir,
      log,
      clock: systemClock,
      storageDsn: dsn,
      onReady: () => client.load(cfg),
    });
    const db = new Sequelize(dsn, { logging: false });
    try {
      assert.deepEqual(await readStoredCertificates({ sequelize: db }), [], 'no storage table before Caddy starts');
      await sup.start();
      const running = (await client.getConfig()) as { storage?: unknown };
      assert.deepEqual(running.storage, { module: 'gatehouse_postgres', dsn: `{env.${CADDY_STORAGE_DSN_ENV}}` });
      assert.ok(!JSON.stringify(running).includes(new URL(dsn).password), 'the password is not in the configuration');
      // a handshake for the route's name: Caddy obtains its certificate (internal CA, on demand)
      await new Promise<void>((resolve, reject) => {
        const sock = tls.connect({ host: '127.0.0.1', port: httpsPort, servername: host, rejectUnauthorized: false }, () => {
          sock.end();
          resolve();
        });
        sock.once('error', reject);
      });
      const stored = await readStoredCertificates({ sequelize: db });
      assert.deepEqual(
        stored.map((c) => `${c.issuerDir}/${c.dir}`),
        [`local/${host}`],
      );
      const keys = (await db.query(`SELECT key FROM ${CADDY_STORAGE_TABLE}`, { type: QueryTypes.SELECT })) as { key: string }[];
      assert.ok(
        keys.some((r) => r.key === 'pki/authorities/local/root.crt'),
        'the internal CA is in the storage',
      );
      assert.equal(fs.existsSync(path.join(caddyPaths(dir).xdgData, 'caddy', 'certificates')), false, 'no certificate on disk');
      const store = new CertificateStore({
        storageDir: path.join(dir, 'unused'),
        clock: systemClock,
        tls: () => 'internal',
        stored: () => readStoredCertificates({ sequelize: db }),
      });
      const state = await store.stateOf(host);
      assert.equal(state.state, 'valid');
      assert.equal(state.internal, true);
    } finally {
      await db.close();
      await sup.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
