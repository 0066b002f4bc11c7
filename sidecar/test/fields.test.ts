// The reusable request-field schemas of http/fields.ts: text without control characters, bounded dates.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { dateInput, dateQuery, text } from '../src/http/fields.js';
import { isoOrNull, MAX_DATE_MS, parseDateString } from '../src/util/dates.js';

const ok = (s: z.ZodType, v: unknown) => {
  const r = s.safeParse(v);
  assert.ok(r.success, `${JSON.stringify(v)}: ${JSON.stringify(r.error?.issues)}`);
  return r.data;
};
const bad = (s: z.ZodType, v: unknown) => assert.equal(s.safeParse(v).success, false, JSON.stringify(v));

test('text: control characters are refused before trimming, so a trailing line feed is an error, not trimmed away', () => {
  const t = text({ min: 1, max: 8 });
  assert.equal(ok(t, '  web  '), 'web');
  for (const v of ['web\n', '\tweb', 'a\u0000b', 'a\u007f', 'a\u0085', 'x\u001b[31m']) bad(t, v);
  bad(t, '   ');
});

test('text: multi-line keeps tab and line breaks but still refuses NUL and escapes', () => {
  const t = text({ max: 100, multiline: true, trim: false });
  assert.equal(ok(t, 'line 1\r\nline 2\tend'), 'line 1\r\nline 2\tend');
  for (const v of ['a\u0000', 'a\u0007', 'a\u000b', 'a\u001b']) bad(t, v);
});

test('text: length counts code points; unpaired surrogates are refused', () => {
  const t = text({ max: 3 });
  assert.equal(ok(t, '😀😀😀'), '😀😀😀');
  bad(t, 'abcd');
  bad(t, 'a\ud800');
  bad(t, '\udc00a');
  assert.equal((z.toJSONSchema(t, { io: 'input' }) as { maxLength?: number }).maxLength, 3);
});

test('dates: plain dates and zone-less date-times are UTC; impossible dates and out-of-range values are refused', () => {
  assert.equal(parseDateString('2030-01-01'), Date.UTC(2030, 0, 1));
  assert.equal(parseDateString('2030-01-01T00:00:00'), Date.UTC(2030, 0, 1));
  assert.equal(parseDateString('2030-01-01 08:30'), Date.UTC(2030, 0, 1, 8, 30));
  assert.equal(parseDateString('2030-01-01T10:00:00.5+02:00'), Date.UTC(2030, 0, 1, 8, 0, 0, 500));
  assert.equal(parseDateString('2028-02-29'), Date.UTC(2028, 1, 29));
  for (const v of ['2030-02-29', '2030-04-31', '2030-00-10', '2030-01-01T24:00', '2030-01-01T10:60', 'tomorrow', '2030-1-1'])
    assert.equal(parseDateString(v), null, v);
  assert.equal(ok(dateInput, '9999-12-31T23:59:59.999Z'), MAX_DATE_MS);
  for (const v of [MAX_DATE_MS + 1, 9007199254740991, -1, 1.5, '4102444800000', [4102444800000], true, null, '+010000-01-01T00:00:00Z']) bad(dateInput, v);
  assert.equal(ok(dateQuery, '4102444800000'), 4102444800000);
  assert.equal(ok(dateQuery, '2030-01-01'), Date.UTC(2030, 0, 1));
  bad(dateQuery, '9007199254740991');
});

test('isoOrNull renders what a Date can hold and null for anything else, never throwing', () => {
  assert.equal(isoOrNull(0), '1970-01-01T00:00:00.000Z');
  assert.equal(isoOrNull('1893456000000'), '2030-01-01T00:00:00.000Z');
  assert.equal(isoOrNull(null), null);
  assert.equal(isoOrNull(9007199254740991), null);
  assert.equal(isoOrNull('garbage'), null);
});
