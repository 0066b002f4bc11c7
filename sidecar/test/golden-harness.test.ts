// The golden-file check itself (test/lib/golden.ts): a difference fails with a line diff, a missing
// file fails, and only UPDATE_GOLDEN=1 rewrites.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assertGolden, lineDiff } from './lib/golden.js';

function withEnv(value: string | undefined, f: () => void): void {
  const before = process.env.UPDATE_GOLDEN;
  if (value === undefined) delete process.env.UPDATE_GOLDEN;
  else process.env.UPDATE_GOLDEN = value;
  try {
    f();
  } finally {
    if (before === undefined) delete process.env.UPDATE_GOLDEN;
    else process.env.UPDATE_GOLDEN = before;
  }
}

test('a difference fails with a line diff; equal text passes; a missing file fails; only UPDATE_GOLDEN=1 rewrites', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-golden-'));
  try {
    const file = path.join(dir, 'sub', 'a.txt');
    withEnv(undefined, () => assert.throws(() => assertGolden(file, 'x\n'), /a\.txt is missing/));
    withEnv('1', () => assertGolden(file, 'one\ntwo\nthree\n'));
    assert.equal(fs.readFileSync(file, 'utf8'), 'one\ntwo\nthree\n');
    withEnv(undefined, () => assertGolden(file, 'one\ntwo\nthree\n'));
    withEnv(undefined, () =>
      assert.throws(
        () => assertGolden(file, 'one\nTWO\nthree\n'),
        (e: Error) => e.message.includes('- two\n+ TWO') && e.message.includes('  one'),
      ),
    );
    // Any other value does not rewrite: the mismatch still fails and the file is unchanged.
    withEnv('true', () => assert.throws(() => assertGolden(file, 'changed\n'), /differs/));
    assert.equal(fs.readFileSync(file, 'utf8'), 'one\ntwo\nthree\n');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('lineDiff shows only the changed lines with two lines of context', () => {
  const a = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n');
  const b = a.replace('l10', 'L10').replace('l15\n', '');
  assert.equal(lineDiff(a, b), ['@@ line 9 @@', '  l8', '  l9', '- l10', '+ L10', '  l11', '  l12', '  l13', '  l14', '- l15', '  l16', '  l17'].join('\n'));
});
