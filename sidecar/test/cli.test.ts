import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { startTestServer } from './lib/server.js';

const run = promisify(execFile);

test('npm run cli -- unlock-account lifts a lockout', { skip: process.env.TEST_DATABASE_URL ? 'uses the SQLite file of the test server' : false }, async () => {
  const s = await startTestServer();
  try {
    const login = (password: string) => s.req('/login', { method: 'POST', json: { username: 'admin', password }, headers: { accept: 'application/json' } });
    for (let i = 0; i < 5; i++) await login('wrong');
    assert.equal((await login('admin-password-1')).status, 423);
    const cli = path.resolve(import.meta.dirname, '..', 'src', 'cli.ts');
    const env = { ...process.env, GATEHOUSE_DATA_DIR: s.dataDir };
    const r = await run(process.execPath, ['--import', 'tsx', cli, 'unlock-account', 'admin'], { env });
    assert.match(r.stdout, /unlocked admin/);
    assert.equal((await login('admin-password-1')).status, 200);
    const usage = await run(process.execPath, ['--import', 'tsx', cli], { env }).catch((e) => e);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /usage/);
  } finally {
    await s.close();
  }
});
