// Field messages of the zod schemas as messages of the catalogue (@gatehouse/common/messages): the
// body's `fields` keep their English text and `field_codes` carry the code and parameters.
// - A schema's own message is written with fieldText(code, params) (or, in a refinement, with
//   fieldIssue(msg)), or is the English text of a field code without parameters ('required',
//   'must be in the future'): each is known by its text.
// - A message zod makes itself (a type, size or format the schema states without a message: its text
//   is zod's English default for the issue) gets the matching `field.*` code with zod's parameters,
//   worded for a person (not zod's "Too small: expected number to be >=0"); a missing field is
//   `field.required`.
// - Anything else is `field.unworded` with the text: sidecar/test/messages.test.ts fails on every
//   schema message of sidecar/src that is not known, so no message reaches a reader unworded.
import { z } from 'zod';
import { MESSAGES, msg, refOf, type Code, type MessageRef, type Msg, type ParamsOf } from '@gatehouse/common/messages/index.js';
import type { Bound } from '@gatehouse/common/messages/field.js';

type Args<C extends Code> = undefined extends ParamsOf<C> ? [params?: ParamsOf<C>] : [params: ParamsOf<C>];

const byText = new Map<string, Msg>();
function remember(m: Msg): Msg {
  if (!byText.has(m.text)) byText.set(m.text, m);
  return m;
}
// every field message without parameters is known by its text
for (const [code, wording] of Object.entries(MESSAGES)) {
  if ((code.startsWith('field.') || code.startsWith('schema.') || code.includes('.field.')) && wording.length === 0) remember(msg(code as Code));
}

/**
 * A field message of the catalogue as a schema's message text (zodFields maps the text back to the code).
 * For messages fixed when the schema is built (their parameters are constants): each call remembers
 * its text. A message whose parameters come from the input is given with fieldIssue instead.
 */
export function fieldText<C extends Code>(code: C, ...params: Args<C>): string {
  return remember(msg(code, ...params)).text;
}

/** A custom issue (ctx.addIssue in a refinement) with a message of the catalogue. */
export function fieldIssue(m: Msg, extra: { path?: PropertyKey[]; params?: Record<string, unknown>; input?: unknown; abort?: boolean } = {}) {
  return { code: 'custom' as const, message: m.text, ...extra, params: { ...extra.params, message: refOf(m) } };
}

/** A field message given as English text: its code when the catalogue knows the text, else field.unworded. */
export function fieldMessageOf(text: string): Msg {
  return knownText(text) ?? msg('field.unworded', { text });
}

// Field messages with one number (a limit), known by their text with any number: `.max(64, 'at most
// 64 characters')` carries field.max_chars {max: 64}.
const NUMBERED: { code: Code; param: string; pattern: RegExp }[] = (
  [
    ['field.max_chars', 'max'],
    ['field.min_chars', 'min'],
    ['field.max_bytes', 'max'],
    ['field.max_ids', 'max'],
    ['field.max_users', 'max'],
    ['field.max_windows', 'max'],
    ['field.max_patterns', 'max'],
    ['field.max_rules', 'max'],
    ['field.max_targets', 'max'],
    ['field.max_cidrs', 'max'],
    ['field.min_ms', 'min'],
    ['field.at_most', 'max'],
    ['field.at_most_ms', 'max'],
  ] as const
).map(([code, param]) => {
  const sample = (MESSAGES[code] as (p: Record<string, number>) => string)({ [param]: 987654321 });
  const [before, after] = sample.split('987654321').map((x) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return { code, param, pattern: new RegExp(`^${before}(\\d{1,15})${after}$`) };
});

/** The message known by this text (a schema's own message), or null. */
export function knownText(text: string): Msg | null {
  const known = byText.get(text);
  if (known) return known;
  for (const n of NUMBERED) {
    const m = n.pattern.exec(text);
    if (m) return { code: n.code, params: { [n.param]: Number(m[1]) }, text } as Msg;
  }
  return null;
}

const UNITS: Record<string, Bound['unit']> = { string: 'characters', file: 'bytes', array: 'items', set: 'items', map: 'entries' };
const typeName = (type: string, input?: unknown) =>
  type === 'number' && typeof input === 'number' && !Number.isFinite(input) ? String(input) : type === 'nan' ? 'NaN' : type;

const zodEnglish = z.locales.en().localeError as (iss: z.core.$ZodRawIssue) => string | { message: string } | undefined;

/** Whether zod wrote the issue's message itself (its English default), rather than the schema. */
function zodMadeIt(iss: z.core.$ZodIssue): boolean {
  if (iss.code === 'invalid_type') {
    // zod's default names what it received, which the issue does not keep
    const said = /^Invalid input: expected (.*), received .*$/.exec(iss.message);
    return !!said && said[1] === iss.expected;
  }
  const d = zodEnglish(iss as z.core.$ZodRawIssue);
  return (typeof d === 'string' ? d : d?.message) === iss.message;
}

/** The message of a zod issue zod made itself, with its parameters (worded as zod words it). */
function zodOwn(iss: z.core.$ZodIssue, input: unknown): Msg {
  const u = z.core.util;
  switch (iss.code) {
    case 'invalid_type': {
      // zod's issues do not keep the input: what was received is read from zod's own words
      const said = /^Invalid input: expected .*, received (.*)$/.exec(iss.message);
      const received = said ? said[1] : input === undefined ? '' : typeName(u.parsedType(input), input);
      // a missing field, or null where no null is taken (an input left empty): required, in a person's words
      if (received === 'undefined' || received === 'null') return msg('field.required');
      return msg('field.invalid_type', { expected: typeName(iss.expected), received });
    }
    case 'invalid_value':
      return iss.values.length === 1
        ? msg('field.invalid_literal', { value: u.stringifyPrimitive(iss.values[0]) })
        : msg('field.invalid_option', { values: iss.values.map((v) => u.stringifyPrimitive(v)) });
    case 'too_big':
    case 'too_small': {
      const b: Bound = { origin: iss.origin ?? 'value', unit: UNITS[iss.origin] ?? null, inclusive: !!iss.inclusive, exact: !!iss.exact };
      return iss.code === 'too_big'
        ? msg('field.too_big', { ...b, maximum: iss.maximum.toString() })
        : msg('field.too_small', { ...b, minimum: iss.minimum.toString() });
    }
    case 'invalid_format': {
      const f = iss as z.core.$ZodIssueInvalidStringFormat & { prefix?: string; suffix?: string; includes?: string; pattern?: string };
      if (f.format === 'starts_with') return msg('field.must_start_with', { prefix: String(f.prefix) });
      if (f.format === 'ends_with') return msg('field.must_end_with', { suffix: String(f.suffix) });
      if (f.format === 'includes') return msg('field.must_include', { includes: String(f.includes) });
      if (f.format === 'regex') return msg('field.must_match', { pattern: String(f.pattern) });
      return msg('field.invalid_format', { format: f.format });
    }
    case 'not_multiple_of':
      return msg('field.not_multiple_of', { divisor: Number(iss.divisor) });
    case 'invalid_key':
      return msg('field.invalid_key', { origin: iss.origin });
    case 'invalid_element':
      return msg('field.invalid_element', { origin: iss.origin });
    case 'invalid_union': {
      const options = (iss as { options?: unknown[] }).options;
      if (Array.isArray(options) && options.length) return msg('field.invalid_discriminator', { options: options.map(String) });
      return msg('field.invalid_input');
    }
    default:
      return msg('field.invalid_input');
  }
}

/** The message of one zod issue (not unrecognized_keys, which zodFields names key by key). */
export function issueMessage(iss: z.core.$ZodIssue, input?: unknown): Msg {
  const given = (iss as { params?: { message?: MessageRef } }).params?.message;
  if (given && typeof given.code === 'string' && given.code in MESSAGES) return { ...(given as Msg), text: iss.message };
  const known = knownText(iss.message);
  if (known) return known;
  if (zodMadeIt(iss)) return zodOwn(iss, input);
  return msg('field.unworded', { text: iss.message });
}
