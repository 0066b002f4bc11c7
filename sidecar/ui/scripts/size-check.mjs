// Prints the JavaScript the browser loads before the first screen (the entry script and the chunks
// index.html preloads), gzipped, and fails above the budget (200 KB). Screens load later.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';

const dist = new URL('../dist/', import.meta.url).pathname;
const BUDGET = Number(process.env.UI_JS_BUDGET_KB ?? 200) * 1024;
const html = readFileSync(join(dist, 'index.html'), 'utf8');
const files = [...html.matchAll(/<(?:script[^>]*\ssrc|link[^>]*rel="modulepreload"[^>]*\shref)="([^"]+\.js)"/g)].map((m) => m[1]);
let raw = 0;
let gz = 0;
for (const f of new Set(files)) {
  const buf = readFileSync(join(dist, f.replace(/^\//, '')));
  raw += buf.length;
  gz += gzipSync(buf, { level: 9 }).length;
}
const css = [...html.matchAll(/<link[^>]*rel="stylesheet"[^>]*href="([^"]+)"/g)].map((m) => readFileSync(join(dist, m[1].replace(/^\//, ''))));
const cssGz = css.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0);
const kb = (n) => (n / 1024).toFixed(1);
console.log(`ui: initial JavaScript ${kb(gz)} KB gzipped (${kb(raw)} KB raw, ${files.length} file(s)); CSS ${kb(cssGz)} KB gzipped; budget ${kb(BUDGET)} KB`);
if (!files.length) {
  console.error('ui: no entry script found in dist/index.html');
  process.exit(1);
}
if (gz > BUDGET) {
  console.error(`ui: initial JavaScript over budget by ${kb(gz - BUDGET)} KB`);
  process.exit(1);
}
