// The documentation against the code: every generated part of docs/reference (environment variables,
// events, metrics, error kinds; scripts/docs/reference.ts) must be what `npm run docs` writes from the
// code now, and every relative link of README.md and docs/ must resolve (a file, and a heading for a
// #fragment).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PARTS, ROOT, committedBlock } from '../../scripts/docs/reference.js';
import { anchorOf, checkLinks, headingsOf } from '../../scripts/docs/links.js';

for (const part of PARTS) {
  test(`${part.file}: the generated part "${part.name}" matches ${part.sources.join(', ')}`, () => {
    const text = fs.readFileSync(path.join(ROOT, part.file), 'utf8');
    const committed = committedBlock(text, part);
    assert.notEqual(committed, null, `${part.file} has no markers for "${part.name}"`);
    assert.equal(committed, part.render(), `${part.file} drifted from the code: run \`npm run docs\` and commit the result`);
  });
}

test('every relative link of README.md and docs/ resolves', () => {
  const problems = checkLinks(ROOT).map((p) => `${p.file}:${p.line}: ${p.target}: ${p.problem}`);
  assert.deepEqual(problems, []);
});

test('the link check itself: anchors as GitHub makes them, and broken links found', () => {
  assert.equal(anchorOf('RDP on the desktop client API (`/client/rdp*`)'), 'rdp-on-the-desktop-client-api-clientrdp');
  assert.equal(anchorOf('Internal DNS data (feature `internal_dns`, community edition)'), 'internal-dns-data-feature-internal_dns-community-edition');
  assert.deepEqual(
    headingsOf('# A\n## B\n```\n# not a heading\n```\n## B').map((h) => h.anchor),
    ['a', 'b', 'b-1'],
  );
  fs.mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, 'test-results', 'links-'));
  try {
    fs.writeFileSync(
      path.join(dir, 'a.md'),
      '# Title\n\n## Part one\n\n[ok](b.md#target) [ok](#part-one) [bad](missing.md) [bad](b.md#nowhere) [web](https://example.com/x) `[code](missing.md)`\n',
    );
    fs.writeFileSync(path.join(dir, 'b.md'), '# Target\n');
    const rel = path.relative(ROOT, dir);
    const found = checkLinks(ROOT, [`${rel}/a.md`]).map((p) => `${p.target}: ${p.problem}`);
    assert.deepEqual(found, ['missing.md: no such file', `b.md#nowhere: no heading #nowhere in ${rel}/b.md`]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
