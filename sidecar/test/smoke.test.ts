import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer } from './lib/server.js';
import { at } from '../../test/lib/json.js';

test('server starts, token works on /api alias', async () => {
  const s = await startTestServer();
  try {
    const t = await apiToken(s);
    const r = await s.req('/api/users', { headers: bearer(t) });
    assert.equal(r.status, 200);
    assert.equal(at(r.data, 'users', 0, 'username'), 'admin');
  } finally {
    await s.close();
  }
});
