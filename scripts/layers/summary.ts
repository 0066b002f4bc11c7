// npm run -s layers: a picture of sidecar/src's structure from dependency-cruiser's graph.
//   node --import tsx scripts/layers/summary.ts          the summary
//   node --import tsx scripts/layers/summary.ts --list   also every value import against the layers and across features
// Prints: modules and imports (value / type-only), file circles, value imports against the layer order
// (scripts/layers/layers.cjs), value imports between two feature folders, and the folder-level import
// loops (strongly connected folders) counting value imports only, and counting type-only imports too.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { ORDER, folderOf, layerOf } = require('./layers.cjs') as {
  ORDER: string[];
  layerOf: (f: string) => string | null;
  folderOf: (f: string) => string | null;
};

const root = path.resolve(import.meta.dirname, '../..');
const sidecar = path.join(root, 'sidecar');
const bin = path.join(root, 'node_modules/.bin/depcruise');
const out = execFileSync(
  bin,
  ['src', '--no-config', '--ts-config', 'tsconfig.json', '--ts-pre-compilation-deps', '--do-not-follow', 'node_modules', '--output-type', 'json'],
  {
    cwd: sidecar,
    maxBuffer: 256 * 1024 * 1024,
    encoding: 'utf8',
  },
);
interface Dep {
  resolved: string;
  dependencyTypes: string[];
  circular?: boolean;
}
interface Mod {
  source: string;
  dependencies: Dep[];
}
const modules = (JSON.parse(out) as { modules: Mod[] }).modules.filter((m) => m.source.startsWith('src/'));
const list = process.argv.includes('--list');

const edges: { from: string; to: string; typeOnly: boolean }[] = [];
for (const m of modules) {
  for (const d of m.dependencies) {
    if (!d.dependencyTypes.includes('local')) continue;
    if (!d.resolved.startsWith('src/') && !d.resolved.includes('common/src/')) continue;
    edges.push({ from: m.source, to: d.resolved, typeOnly: d.dependencyTypes.includes('type-only') || d.dependencyTypes.includes('type-import') });
  }
}
const value = edges.filter((e) => !e.typeOnly);
const rank = (f: string) => ORDER.indexOf(layerOf(f) ?? 'core');
const against = value.filter((e) => rank(e.to) > rank(e.from));
const crossFeature = value.filter((e) => layerOf(e.from) === 'features' && layerOf(e.to) === 'features' && folderOf(e.from) !== folderOf(e.to));

/** Strongly connected components (Tarjan) of the folder graph, only those with more than one folder. */
function loops(es: typeof edges): string[][] {
  const g = new Map<string, Set<string>>();
  for (const e of es) {
    const a = folderOf(e.from);
    const b = folderOf(e.to);
    if (!a || !b || a === b) continue;
    if (!g.has(a)) g.set(a, new Set());
    if (!g.has(b)) g.set(b, new Set());
    g.get(a)!.add(b);
  }
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1) out.push(c.sort());
    }
  };
  for (const v of [...g.keys()].sort()) if (!idx.has(v)) visit(v);
  return out.sort((a, b) => b.length - a.length);
}

/** File circles among value imports (what madge --circular reports, without type-only imports). */
function fileCircles(): number {
  const g = new Map<string, string[]>();
  for (const e of value) g.set(e.from, [...(g.get(e.from) ?? []), e.to]);
  let n = 0;
  const state = new Map<string, 1 | 2>();
  const visit = (v: string) => {
    state.set(v, 1);
    for (const w of g.get(v) ?? []) {
      if (state.get(w) === 1) n++;
      else if (!state.has(w)) visit(w);
    }
    state.set(v, 2);
  };
  for (const v of g.keys()) if (!state.has(v)) visit(v);
  return n;
}

const folders = new Set(modules.map((m) => folderOf(m.source)).filter(Boolean));
const pairs = (es: typeof edges) => {
  const c = new Map<string, number>();
  for (const e of es) {
    const k = `${folderOf(e.from)} -> ${folderOf(e.to)}`;
    c.set(k, (c.get(k) ?? 0) + 1);
  }
  return [...c].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
};
const print = (s: string) => process.stdout.write(`${s}\n`);
print(
  `sidecar/src: ${modules.length} modules in ${folders.size} folders (root modules counted as "(root core)" and "(root)"), ${edges.length} local imports (${value.length} value, ${edges.length - value.length} type-only)`,
);
print(`file circles (value imports): ${fileCircles()}`);
const byLayer = new Map<string, number>();
for (const e of against) byLayer.set(`${layerOf(e.from)} -> ${layerOf(e.to)}`, (byLayer.get(`${layerOf(e.from)} -> ${layerOf(e.to)}`) ?? 0) + 1);
print(
  `value imports against the layer order (${ORDER.join(' < ')}): ${against.length}${against.length ? ` (${[...byLayer].map(([k, v]) => `${k}: ${v}`).join(', ')})` : ''}`,
);
const featurePairs = pairs(crossFeature);
print(`value imports from one feature folder into another: ${crossFeature.length}, between ${featurePairs.length} folder pairs`);
for (const [label, es] of [
  ['value imports', value],
  ['value and type-only imports', edges],
] as const) {
  const l = loops(es);
  print(`folder loops (${label}): ${l.length}${l.length ? `; the largest holds ${l[0].length} of ${folders.size} folders` : ''}`);
  for (const c of l) print(`  ${c.join(' ')}`);
}
if (list) {
  print('\nvalue imports against the layer order:');
  for (const e of against) print(`  ${e.from} -> ${e.to}`);
  print('\nvalue imports between feature folders (folder pairs):');
  for (const [k, v] of featurePairs) print(`  ${k}: ${v}`);
}
