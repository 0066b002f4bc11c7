// The one golden-file check of the test suite. `UPDATE_GOLDEN=1` (exactly) rewrites the file with
// the actual text; otherwise a missing file or any difference fails, with a line diff of the two
// (`-` golden, `+` actual). Review the diff of a rewrite before committing it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

/** The golden files directory of the sidecar tests (sidecar/test/golden/<kind>). */
export const goldenDir = (kind: string) => path.join(import.meta.dirname, '..', 'golden', kind);

export const updatingGolden = () => process.env.UPDATE_GOLDEN === '1';

/** Checks `actual` against the golden file `file` (absolute path), or rewrites it under UPDATE_GOLDEN=1. */
export function assertGolden(file: string, actual: string): void {
  if (updatingGolden()) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, actual);
    return;
  }
  if (!fs.existsSync(file)) assert.fail(`golden file ${file} is missing (UPDATE_GOLDEN=1 writes it)`);
  const expected = fs.readFileSync(file, 'utf8');
  if (actual === expected) return;
  assert.fail(`golden file ${path.basename(file)} differs (- golden, + actual; UPDATE_GOLDEN=1 rewrites it):\n${lineDiff(expected, actual)}`);
}

/** A line diff (longest common subsequence) with two lines of context around each change, at most `max` lines. */
export function lineDiff(a: string, b: string, max = 80): string {
  const x = a.split('\n');
  const y = b.split('\n');
  // lcs[i][j]: length of the longest common subsequence of x[i..] and y[j..].
  const lcs = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1));
  for (let i = x.length - 1; i >= 0; i--)
    for (let j = y.length - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const ops: { op: ' ' | '-' | '+'; line: string; n: number }[] = [];
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) ops.push({ op: ' ', line: x[i++], n: j++ });
    else if (i < x.length && (j === y.length || lcs[i + 1][j] >= lcs[i][j + 1])) ops.push({ op: '-', line: x[i++], n: j });
    else ops.push({ op: '+', line: y[j], n: j++ });
  }
  const near = (k: number) => ops.slice(Math.max(0, k - 2), k + 3).some((o) => o.op !== ' ');
  const out: string[] = [];
  let skipped = false;
  for (let k = 0; k < ops.length; k++) {
    if (!near(k)) {
      skipped = true;
      continue;
    }
    if (skipped || out.length === 0) out.push(`@@ line ${ops[k].n + 1} @@`);
    skipped = false;
    out.push(`${ops[k].op} ${ops[k].line}`);
    if (out.length >= max) {
      out.push('… (diff truncated)');
      break;
    }
  }
  return out.join('\n');
}
