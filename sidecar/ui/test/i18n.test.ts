// Every string in both languages: each dictionary has the same keys in en and de (no empty ones);
// every t('ns.key') in the source names a key that exists; no visible text sits in the markup
// outside the dictionaries (JSX text and the text attributes people see or hear).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import type { Dict } from '../src/i18n/define.js';
import { AREAS, MESSAGES } from '@gatehouse/common/messages/index.js';

const src = fileURLToPath(new URL('../src/', import.meta.url));
function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}
const files = walk(src);
const dictFiles = files.filter((f) => /(^|\/)(i18n\/common|i18n)\.ts$/.test(f) && !f.endsWith('i18n/index.ts') && !f.endsWith('i18n/define.ts'));

async function loadDicts(): Promise<Dict[]> {
  return Promise.all(dictFiles.map(async (f) => (await import(pathToFileURL(f).href)).default as Dict));
}

test('every dictionary has the same keys in English and German, none empty, namespaces unique', async () => {
  const dicts = await loadDicts();
  assert.ok(dicts.length >= 3, 'dictionaries found');
  const seen = new Set<string>();
  for (const [i, d] of dicts.entries()) {
    const where = relative(src, dictFiles[i]);
    assert.ok(!seen.has(d.ns), `namespace ${d.ns} used twice (${where})`);
    seen.add(d.ns);
    assert.deepEqual(Object.keys(d.de).sort(), Object.keys(d.en).sort(), `${where}: keys differ between en and de`);
    for (const lang of ['en', 'de'] as const) for (const [k, v] of Object.entries(d[lang])) assert.ok(v.trim(), `${where}: ${lang}.${k} is empty`);
    // Placeholders match: {name} in one language is {name} in the other.
    for (const k of Object.keys(d.en)) {
      const ph = (s: string) =>
        [...s.matchAll(/\{(\w+)\}/g)]
          .map((m) => m[1])
          .sort()
          .join(',');
      assert.equal(ph(d.de[k]), ph(d.en[k]), `${where}: placeholders of ${k} differ`);
    }
  }
});

test("every code of the server's message catalogue has its English and German wording, and German has no other", async () => {
  // the German wordings (src/i18n/messages/) import nothing of Vite, so the test loads them directly
  const { DE } = (await import(pathToFileURL(join(src, 'i18n/messages/index.ts')).href)) as { DE: Record<string, unknown> };
  const codes = Object.keys(MESSAGES);
  assert.ok(codes.length >= 250, `the catalogue has ${codes.length} codes`);
  // a code lives in exactly one area (a second one would silently replace the first in MESSAGES)
  const seen = new Map<string, string>();
  for (const [area, catalogue] of Object.entries(AREAS)) {
    for (const code of Object.keys(catalogue)) {
      assert.ok(!seen.has(code), `code ${code} is in ${seen.get(code)} and ${area}`);
      seen.set(code, area);
    }
  }
  const missing = {
    en: codes.filter((c) => typeof (MESSAGES as Record<string, unknown>)[c] !== 'function'),
    de: codes.filter((c) => typeof DE[c] !== 'function'),
  };
  assert.deepEqual(missing, { en: [], de: [] }, 'codes without a wording');
  assert.deepEqual(
    Object.keys(DE).filter((c) => !Object.hasOwn(MESSAGES, c)),
    [],
    'German wordings of codes the server does not have',
  );
});

test("every t('key') in the source exists", async () => {
  const keys = new Set((await loadDicts()).flatMap((d) => Object.keys(d.en).map((k) => `${d.ns}.${k}`)));
  const missing: string[] = [];
  for (const f of files.filter((x) => /\.tsx?$/.test(x))) {
    const text = readFileSync(f, 'utf8')
      .replace(/^\s*\/\/.*$/gm, '')
      .replace(/\/\*[\s\S]*?\*\//g, '');
    for (const m of text.matchAll(/\bt\(\s*'([\w.]+)'/g)) if (!keys.has(m[1])) missing.push(`${relative(src, f)}: ${m[1]}`);
    // Screen titles are keys too.
    for (const m of text.matchAll(/\btitle: '([\w]+\.[\w.]+)'/g)) if (!keys.has(m[1])) missing.push(`${relative(src, f)}: ${m[1]}`);
  }
  assert.deepEqual(missing, []);
});

test('no visible text outside the dictionaries in the markup', () => {
  // Words a person reads in the markup: JSX text, and the attributes shown or read out, found with
  // the TypeScript parser (not a regex) so generics and arrows are never mistaken for text.
  const shown = new Set(['aria-label', 'title', 'placeholder', 'alt', 'label']);
  const allowed = new Set(['Gatehouse', 'English', 'Deutsch', 'WireGuard', 'Caddy', 'QR']);
  const found: string[] = [];
  for (const f of files.filter((x) => x.endsWith('.tsx'))) {
    const sf = ts.createSourceFile(f, readFileSync(f, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
    const visit = (n: ts.Node): void => {
      if (ts.isJsxText(n)) {
        const v = n.text.trim();
        if (/\p{L}/u.test(v) && !allowed.has(v)) found.push(`${relative(src, f)}: "${v}"`);
      } else if (ts.isJsxAttribute(n) && n.initializer && ts.isStringLiteral(n.initializer) && shown.has(n.name.getText(sf))) {
        const v = n.initializer.text;
        if (/\p{L}/u.test(v) && !allowed.has(v)) found.push(`${relative(src, f)}: ${n.name.getText(sf)}="${v}"`);
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  assert.deepEqual(found, []);
});
