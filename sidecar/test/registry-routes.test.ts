// The routes the registry serves, in the order Koa's router tries them: (method, path, auth, scope)
// of every endpoint against a golden file. A change to how endpoints are registered (features,
// folders, the specificity sort) must leave this list as it is; a new or changed endpoint updates it
// (UPDATE_GOLDEN=1, then review the diff).
import { after, before, test } from 'node:test';
import { fullPath, scopeForPath } from '../src/http/registry.js';
import { assertGolden, goldenDir } from './lib/golden.js';
import { startTestServer, type TestServer } from './lib/server.js';
import path from 'node:path';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => s.close());

test('the registry serves the same routes, in the same order', () => {
  const lines = s.endpoints.map((e) => {
    const scope = e.scope !== undefined ? e.scope : scopeForPath(e.path);
    return `${e.method} ${fullPath(e)} ${e.auth} ${scope === null ? '-' : scope}`;
  });
  assertGolden(path.join(goldenDir('registry'), 'routes.txt'), `${lines.join('\n')}\n`);
});
