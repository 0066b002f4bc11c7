// npm run docs: rewrites every generated part of the reference pages (reference.ts) from the code.
//   node --import tsx scripts/docs/generate.ts           write the parts that changed
//   node --import tsx scripts/docs/generate.ts --check   only report them (exit 1 when any drifted)
import fs from 'node:fs';
import path from 'node:path';
import { PARTS, ROOT, driftedParts, withBlock } from './reference.js';

const check = process.argv.includes('--check');
const drifted = driftedParts();
if (check) {
  for (const d of drifted) process.stdout.write(`${d.part.file}: the generated part "${d.part.name}" differs from ${d.part.sources.join(', ')}\n`);
  if (drifted.length) process.stdout.write('run `npm run docs` and commit the result\n');
  process.exit(drifted.length ? 1 : 0);
}
for (const file of new Set(PARTS.map((p) => p.file))) {
  const abs = path.join(ROOT, file);
  const before = fs.readFileSync(abs, 'utf8');
  let text = before;
  for (const p of PARTS.filter((x) => x.file === file)) text = withBlock(text, p);
  if (text !== before) {
    fs.writeFileSync(abs, text);
    process.stdout.write(`wrote ${file}\n`);
  }
}
if (!drifted.length) process.stdout.write('the generated reference parts are up to date\n');
