// The fuzzer's generators: fast-check arbitraries built from the JSON schemas of the OpenAPI
// document (valid values), and mutations of them (values the schema refuses or the server may).
// Only what the document's schemas use is covered (zod's toJSONSchema output): type, properties,
// required, additionalProperties, items, prefixItems, min/maxItems, min/maxLength, pattern, format,
// minimum, maximum, exclusiveMinimum/Maximum, enum, const, anyOf/oneOf, default.
import fc from 'fast-check';
import type { Schema } from '../../../sidecar/test/lib/openapi.js';

export type { Schema };

/** A subschema as a schema: a boolean schema (true: anything) or a missing one is undefined, which valid() reads as any value. */
export const schemaOf = (v: unknown): Schema | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Schema) : undefined);

/** Hooks that give a property a value the fuzzer knows is meaningful (existing ids, loopback hosts). */
export type Override = (name: string, schema: Schema) => fc.Arbitrary<unknown> | undefined;

const FORMATS: Record<string, fc.Arbitrary<string>> = {
  email: fc.emailAddress(),
  'date-time': fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  date: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  uri: fc.webUrl(),
  url: fc.webUrl(),
  ipv4: fc.ipV4(),
  ipv6: fc.ipV6(),
  uuid: fc.uuid(),
};

function stringArb(s: Schema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? Math.max(min, 40);
  if (s.format && FORMATS[s.format]) return FORMATS[s.format].filter((v) => v.length >= min && v.length <= max);
  if (s.pattern) {
    // JSON Schema patterns are ECMA-262 regular expressions with the unicode flag (as Ajv reads them)
    let re: RegExp;
    try {
      re = new RegExp(s.pattern, 'u');
    } catch {
      re = /.*/;
    }
    const hi = s.maxLength ?? Infinity;
    const len = (v: string) => [...v].length; // JSON Schema lengths count code points
    // one character class repeated (text fields): characters of that class, as many as the lengths allow
    // (filtering short generated strings up to a minimum length would rarely succeed)
    const single = /^\^\[((?:\\.|[^\]])*)\]\*\$$/.exec(s.pattern);
    if (single) {
      const unit = fc.stringMatching(new RegExp(`^[${single[1]}]$`, 'u'));
      return fc.string({ unit, minLength: min, maxLength: Math.min(max, min + 40) }).filter((v) => len(v) >= min && len(v) <= hi);
    }
    try {
      // fast-check cannot generate lookarounds: generate without them, keep what the full pattern matches
      const gen = new RegExp(withoutLookarounds(s.pattern), 'u');
      return fc.stringMatching(gen, { size: min > 8 ? 'large' : 'small' }).filter((v) => re.test(v) && len(v) >= min && len(v) <= hi);
    } catch {
      // a pattern fast-check cannot generate from (backreferences, lookarounds): plain text, which the
      // server may refuse (the body then breaks the schema, and a 4xx is what is expected)
      return fc.string({ minLength: min, maxLength: Math.min(max, min + 40) });
    }
  }
  return fc.string({ minLength: min, maxLength: Math.min(max, min + 40) });
}

function numberArb(s: Schema): fc.Arbitrary<number> {
  const int = s.type === 'integer';
  let min = s.minimum ?? (typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + (int ? 1 : 1e-9) : undefined);
  let max = s.maximum ?? (typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - (int ? 1 : 1e-9) : undefined);
  if (int) {
    min = Math.max(min ?? -1_000_000, Number.MIN_SAFE_INTEGER);
    max = Math.min(max ?? 1_000_000, Number.MAX_SAFE_INTEGER);
    // edges and small values more often than the middle of a huge range
    const edges = [min, max, Math.min(max, Math.max(min, 0)), Math.min(max, Math.max(min, 1))];
    return fc.oneof(
      { arbitrary: fc.constantFrom(...edges), weight: 1 },
      { arbitrary: fc.integer({ min, max: Math.min(max, min + 1000) }), weight: 2 },
      { arbitrary: fc.integer({ min, max }), weight: 1 },
    );
  }
  return fc.double({ min: min ?? -1e6, max: max ?? 1e6, noNaN: true, noDefaultInfinity: true });
}

/** A value the schema accepts. */
export function valid(s: Schema | undefined, ov: Override, name = '', depth = 0): fc.Arbitrary<unknown> {
  if (!s || Object.keys(s).length === 0) return fc.jsonValue({ maxDepth: 1 });
  const o = ov(name, s);
  if (o) return o;
  if ('const' in s) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.allOf && !s.properties && !s.type) return valid(Object.assign({}, ...s.allOf), ov, name, depth);
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return fc.oneof(...alts.map((a) => valid(a, ov, name, depth)));
  const type = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (type.length > 1) return fc.oneof(...type.map((t) => valid({ ...s, type: t }, ov, name, depth)));
  switch (type[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number':
      return numberArb(s);
    case 'string':
      return stringArb(s);
    case 'array': {
      if (s.prefixItems) return fc.tuple(...s.prefixItems.map((p) => valid(schemaOf(p), ov, name, depth + 1)));
      const min = s.minItems ?? 0;
      return fc.array(valid(schemaOf(s.items), ov, name, depth + 1), { minLength: min, maxLength: Math.max(min, Math.min(s.maxItems ?? 4, min + 4)) });
    }
    case 'object':
    default: {
      const props = s.properties ?? {};
      const required = s.required ?? [];
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) record[k] = valid(schemaOf(v), ov, k, depth + 1);
      if (!Object.keys(record).length) return fc.constant({});
      return fc.record(record, { requiredKeys: required.filter((k) => k in record) });
    }
  }
}

/** Values of the wrong kind for almost any field: wrong types, edges JSON can carry, control characters. */
export const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    -0.5,
    9007199254740991,
    -9007199254740991,
    1e300,
    -1e300,
    8.64e15 + 1,
    '',
    ' ',
    'a\u0000b',
    '\u0000',
    'x\r\nSet-Cookie: a=b',
    '../../etc/passwd',
    '%00',
    '\uffff',
    '\ud800',
    'é'.repeat(300),
    'A'.repeat(5000),
    '4102444800000',
    '2030-01-01',
    '2030-13-45',
    'true',
    '1e3',
    '0x10',
    '-0',
    'NaN',
    'Infinity',
    [],
    [1],
    ['a'],
    [null],
    {},
    { a: 1 },
    { __proto__: { x: 1 } },
    { constructor: { prototype: { polluted: 1 } } },
  ),
  fc.string({ maxLength: 30, unit: 'binary' }),
  fc.integer(),
  fc.jsonValue({ maxDepth: 2 }),
);

/** A mutation of a valid object: a required key dropped, a key given a hostile value, an unknown key added, or the whole body replaced. */
export function invalidObject(s: Schema | undefined, ov: Override): fc.Arbitrary<unknown> {
  const base = valid(s, ov);
  const props = Object.keys(s?.properties ?? {});
  const required = s?.required ?? [];
  const muts: fc.Arbitrary<unknown>[] = [
    hostile,
    fc.tuple(base, fc.string({ minLength: 1, maxLength: 12 }), hostile).map(([b, k, v]) => (isObj(b) ? { ...b, [k]: v } : v)),
  ];
  if (props.length) {
    muts.push(fc.tuple(base, fc.constantFrom(...props), hostile).map(([b, k, v]) => (isObj(b) ? { ...b, [k]: v } : b)));
    muts.push(
      fc
        .tuple(base, fc.constantFrom(...props), fc.constantFrom(...props), hostile, hostile)
        .map(([b, k1, k2, v1, v2]) => (isObj(b) ? { ...b, [k1]: v1, [k2]: v2 } : b)),
    );
  }
  if (required.length)
    muts.push(fc.tuple(base, fc.constantFrom(...required)).map(([b, k]) => (isObj(b) ? Object.fromEntries(Object.entries(b).filter(([x]) => x !== k)) : b)));
  return fc.oneof(...muts);
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** A query string value of a schema: valid values as strings (arrays comma-joined), or hostile text. */
export function queryValue(s: Schema | undefined, ov: Override, name: string, bad: boolean): fc.Arbitrary<string | undefined> {
  const good = valid(s, ov, name).map((v) =>
    v === undefined || v === null ? undefined : Array.isArray(v) ? v.join(',') : typeof v === 'object' ? JSON.stringify(v) : String(v),
  );
  if (bad)
    return fc.oneof(
      good,
      hostile.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
    );
  return good;
}

/** A pattern's source without its lookahead and lookbehind groups (for generation only). */
export function withoutLookarounds(src: string): string {
  let out = '';
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') {
      out += c + (src[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '[') {
      // copy a character class whole
      let j = i + 1;
      if (src[j] === '^') j++;
      if (src[j] === ']') j++;
      while (j < src.length && src[j] !== ']') j += src[j] === '\\' ? 2 : 1;
      out += src.slice(i, j + 1);
      i = j;
      continue;
    }
    if (c === '(' && src[i + 1] === '?' && (src[i + 2] === '=' || src[i + 2] === '!' || (src[i + 2] === '<' && (src[i + 3] === '=' || src[i + 3] === '!')))) {
      let depth = 0;
      let j = i;
      for (; j < src.length; j++) {
        const d = src[j];
        if (d === '\\') {
          j++;
          continue;
        }
        if (d === '[') {
          j++;
          while (j < src.length && src[j] !== ']') j += src[j] === '\\' ? 2 : 1;
          continue;
        }
        if (d === '(') depth++;
        else if (d === ')' && --depth === 0) break;
      }
      i = j;
      continue;
    }
    out += c;
  }
  return out;
}
