// SIGTERM: the running service stops accepting, finishes the request in flight, and exits 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '../../test/lib/wait.js';

/** Starts the service (main.ts) on a fresh data directory and a random port, its output collected. */
function startService(logLevel: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-shutdown-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve(import.meta.dirname, '..', 'src', 'main.ts')], {
    env: {
      ...process.env,
      GATEHOUSE_DATA_DIR: dir,
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_ADMIN_PASSWORD: 'shutdown-pass-1',
      GATEHOUSE_MANAGE_CADDY: 'false',
      GATEHOUSE_WG_MANAGE: 'false',
      GATEHOUSE_LOG_LEVEL: logLevel,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { dir, port, child, output: () => out, exited };
}

test('SIGTERM finishes a request in flight, then exits 0', { skip: process.env.TEST_DATABASE_URL ? 'SQLite only' : false }, async () => {
  const { dir, port, child, output, exited } = startService('warn');
  try {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health`)).ok, 10_000, { intervalMs: 100, what: 'the service' });
    // Start a login whose body arrives only after SIGTERM.
    const body = JSON.stringify({ username: 'admin', password: 'shutdown-pass-1' });
    const sock = net.connect(port, '127.0.0.1');
    await new Promise((r) => sock.once('connect', r));
    let response = '';
    sock.on('data', (d) => (response += d));
    const closed = new Promise((r) => sock.once('close', r));
    sock.write(
      `POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
    );
    await new Promise((r) => setTimeout(r, 200)); // not a condition: the service reads the request's head (nothing shows it from outside)
    child.kill('SIGTERM');
    // New connections are refused while the old request is still open.
    await waitFor(
      () =>
        fetch(`http://127.0.0.1:${port}/health`).then(
          () => false,
          () => true,
        ),
      5000,
      { intervalMs: 50, what: 'the listener closed after SIGTERM' },
    );
    await assert.rejects(fetch(`http://127.0.0.1:${port}/health`));
    sock.write(body);
    await closed;
    assert.match(response, /^HTTP\/1\.1 200/, response);
    assert.match(response, /"csrfToken"/);
    assert.equal(await exited, 0, output());
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test(
  'SIGTERM while the features are still starting (the API already answers) still closes gracefully and exits 0',
  { skip: process.env.TEST_DATABASE_URL ? 'SQLite only' : false },
  async () => {
    const { dir, port, child, output, exited } = startService('info');
    try {
      // The signal goes out the moment the listener accepts a connection, before startServer() returns.
      await waitFor(
        () =>
          new Promise<boolean>((resolve) => {
            const s = net.connect(port, '127.0.0.1');
            s.once('connect', () => (s.destroy(), resolve(true)));
            s.once('error', () => resolve(false));
          }),
        10_000,
        { intervalMs: 5, what: 'the listener to accept a connection' },
      );
      child.kill('SIGTERM');
      assert.equal(await exited, 0, output());
      assert.match(output(), /SIGTERM: shutting down/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'SIGTERM with a live event stream open (GET /api/v1/events): the stream ends and the service exits 0 at once, not after the 10 s grace',
  { skip: process.env.TEST_DATABASE_URL ? 'SQLite only' : false },
  async () => {
    const { dir, port, child, output, exited } = startService('warn');
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health`)).ok, 10_000, { intervalMs: 100, what: 'the service' });
      const login = await fetch(`http://127.0.0.1:${port}/login`, {
        method: 'POST',
        headers: { accept: 'application/json', 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: 'shutdown-pass-1' }),
      });
      assert.equal(login.status, 200);
      const cookie = login.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ');
      const stream = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http.get(`http://127.0.0.1:${port}/api/v1/events`, { headers: { cookie, accept: 'text/event-stream' } }, resolve).on('error', reject),
      );
      assert.equal(stream.statusCode, 200);
      let text = '';
      stream.setEncoding('utf8');
      stream.on('data', (d) => (text += d));
      const ended = new Promise((r) => stream.once('close', r));
      await waitFor(() => text.includes('event: ready'), 1000, { intervalMs: 20, what: 'the ready event' });
      assert.match(text, /event: ready/);
      const t0 = Date.now();
      child.kill('SIGTERM');
      assert.equal(await exited, 0, output());
      await ended;
      assert.ok(Date.now() - t0 < 5000, `exit took ${Date.now() - t0} ms`);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
