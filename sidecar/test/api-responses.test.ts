// The tests' answer types against the registry: api-responses.generated.ts must name, for every served
// endpoint, the response schema it declares now (lib/api-responses.ts renders it from the served
// endpoints; UPDATE_GOLDEN=1 rewrites the file after an intended change).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startTestServer, type TestServer } from './lib/server.js';
import { GENERATED_FILE, renderApiResponses } from './lib/api-responses.js';
import { fullPath } from '../src/http/registry.js';

/** The lines of one method's part of the generated interface. */
const sectionOf = (text: string, method: string) => text.slice(text.indexOf(`  ${method}: {`), text.indexOf('  };', text.indexOf(`  ${method}: {`)));

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => s.close());

test("api-responses.generated.ts names every served endpoint's response schema", async () => {
  const text = await renderApiResponses(s.endpoints);
  if (process.env.UPDATE_GOLDEN) fs.writeFileSync(GENERATED_FILE, text);
  assert.equal(
    fs.readFileSync(GENERATED_FILE, 'utf8'),
    text,
    'the registry changed: run UPDATE_GOLDEN=1 bash scripts/test-sidecar.sh test/api-responses.test.ts',
  );
  // an endpoint that declares a JSON answer is named by its schema: one declared inline fails here (export it from its feature's schema.ts)
  const inline = s.endpoints
    .filter((e) => e.response && sectionOf(text, e.method).includes(`'${fullPath(e)}': unknown;`))
    .map((e) => `${e.method} ${fullPath(e)}`);
  assert.deepEqual(inline.sort(), []);
});
