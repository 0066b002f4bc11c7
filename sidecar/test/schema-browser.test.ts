// Every sidecar/src/<folder>/schema.ts is pure: its import graph (values, as a bundler follows it)
// holds only sidecar and common source files and the packages of BROWSER_PACKAGES, never a Node
// module, Sequelize or Koa. The admin app imports these schemas as values to check a form with the
// server's own rules (sidecar/ui), so each one must build for a browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';

const src = path.resolve(import.meta.dirname, '..', 'src');

/** Packages a schema module may import: pure JavaScript that runs in browsers. */
const BROWSER_PACKAGES = ['zod', 'to-regex-range', 'cron-parser', 'ipaddr.js'];

/** The bare imports of a module's graph that are not allowed in a browser, each with the chain that reaches it. */
async function nodeImports(entry: string): Promise<string[]> {
  const refused: string[] = [];
  const importer = new Map<string, string>();
  await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'esm',
    logLevel: 'silent',
    plugins: [
      {
        name: 'browser-packages',
        setup(build) {
          build.onResolve({ filter: /.*/ }, (args) => {
            if (args.importer) importer.set(path.resolve(args.resolveDir, args.path), args.importer);
            if (args.path.startsWith('.') || args.path.startsWith('/') || args.path.startsWith('@gatehouse/common/')) return undefined;
            const pkg = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
            if (!BROWSER_PACKAGES.includes(pkg)) {
              const chain = [args.path];
              for (let at: string | undefined = args.importer; at; at = importer.get(at.replace(/\.ts$/, '.js')) ?? importer.get(at)) {
                chain.unshift(path.relative(src, at));
                if (chain.length > 12) break;
              }
              refused.push(chain.join(' > '));
            }
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });
  return refused;
}

const schemaModules = fs
  .readdirSync(src, { withFileTypes: true })
  .filter((d) => d.isDirectory() && fs.existsSync(path.join(src, d.name, 'schema.ts')))
  .map((d) => path.join(src, d.name, 'schema.ts'));

test('the schema modules are found', () => {
  assert.ok(schemaModules.length >= 20, `only ${schemaModules.length} schema.ts files under sidecar/src`);
});

for (const file of schemaModules) {
  test(`${path.relative(src, file)} imports nothing a browser lacks`, async () => {
    assert.deepEqual(await nodeImports(file), [], 'move the Node-only code out of the schema module (or its constants into it)');
  });
}

test('the check itself: a Node module or a server package is found, with its chain', async (t) => {
  const results = path.resolve(src, '..', '..', 'test-results');
  fs.mkdirSync(results, { recursive: true });
  const dir = fs.mkdtempSync(path.join(results, 'schema-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'inner.ts'), "import { Op } from 'sequelize';\nimport fs from 'node:fs';\nexport const x = [Op, fs];\n");
  fs.writeFileSync(
    path.join(dir, 'schema.ts'),
    "import { z } from 'zod';\nimport { x } from './inner.js';\nexport const s = z.string().refine(() => x.length > 0);\n",
  );
  const found = await nodeImports(path.join(dir, 'schema.ts'));
  assert.equal(found.length, 2, found.join('\n'));
  assert.match(found[0], /schema\.ts > .*inner\.ts > sequelize$/);
  assert.match(found[1], /inner\.ts > node:fs$/);
});
