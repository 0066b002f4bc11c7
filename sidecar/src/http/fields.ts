// Reusable schema pieces for request fields (validation and the OpenAPI document come from them):
// dates (epoch milliseconds or a date string, bounded) and text without control characters.
import { z } from 'zod';
import toRegexRange from 'to-regex-range';
import { DATE_STRING_PATTERN, MAX_DATE_MS, parseDateString } from '../util/dates.js';
import { msg, type Msg } from '@gatehouse/common/messages/index.js';
import { fieldIssue, fieldText } from './messages.js';

const MAX_DATE_ISO = new Date(MAX_DATE_MS).toISOString();

/** Epoch milliseconds as a JSON number: an integer from 0 to MAX_DATE_MS. */
const epochMs = z
  .number({ error: fieldText('field.date') })
  .int(fieldText('field.whole_ms'))
  .min(0, fieldText('field.date_before_1970'))
  .max(MAX_DATE_MS, fieldText('field.date_after', { max: MAX_DATE_ISO }));

/** A date string (plain date, date-time without zone = UTC, or with Z/±hh:mm) → epoch milliseconds. */
const dateString = z
  .string()
  .max(40, fieldText('field.date'))
  .regex(new RegExp(DATE_STRING_PATTERN), fieldText('field.date'))
  .transform((v, ctx) => {
    const ms = parseDateString(v);
    if (ms === null) {
      ctx.addIssue(fieldIssue(msg('field.date_not_real')));
      return z.NEVER;
    }
    if (ms < 0 || ms > MAX_DATE_MS) {
      ctx.addIssue(fieldIssue(msg('field.date_range', { max: MAX_DATE_ISO })));
      return z.NEVER;
    }
    return ms;
  });

const DATE_DESCRIPTION = `Epoch milliseconds, or a date string: a plain date (2030-01-01, midnight UTC), a date-time without a zone (read as UTC) or with Z / ±hh:mm. From 1970-01-01 to ${MAX_DATE_ISO}.`;

/** A date in a JSON body: a number of epoch milliseconds or a date string (never a numeric string, array or boolean). */
export const dateInput = z.union([epochMs, dateString], { error: fieldText('field.date') }).meta({ description: DATE_DESCRIPTION });

/** A date in a query string: digits (epoch milliseconds) or a date string. */
export const dateQuery = z
  .union(
    [
      z
        .string()
        .regex(/^\d{1,16}$/)
        .transform(Number)
        .pipe(epochMs),
      dateString,
    ],
    { error: fieldText('field.date') },
  )
  .meta({ description: DATE_DESCRIPTION });

// C0 controls, DEL and C1 controls; multi-line text keeps tab, line feed and carriage return.
// eslint-disable-next-line no-control-regex
const CONTROL_LINE = /[\u0000-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex
const CONTROL_MULTILINE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a string is not acceptable text (control characters, unpaired surrogates), or null. */
export function textProblem(v: string, multiline = false): Msg | null {
  if ((multiline ? CONTROL_MULTILINE : CONTROL_LINE).test(v)) return msg(multiline ? 'field.no_control_chars_multiline' : 'field.no_control_chars');
  if (LONE_SURROGATE.test(v)) return msg('field.valid_unicode');
  return null;
}

/**
 * Marks a refinement the OpenAPI document cannot state (a comparison of two fields, a byte length, a
 * cron expression's meaning): when such issues are all a request has, it is answered 422 (documented
 * on every write) instead of 400, so that a 400 always means "the document says this is invalid".
 * Use as `.refine(fn, { message, params: UNPROCESSABLE })` or in ctx.addIssue({ ..., params: UNPROCESSABLE }).
 */
export const UNPROCESSABLE = { unprocessable: true } as const;

/**
 * A whole number in a query string, from min to max: digits only (no sign, spaces, exponent or hex,
 * which Number() would read), the range stated as a pattern so that the document says exactly
 * which values are taken.
 */
export function queryInt(min: number, max: number, message = fieldText('field.whole_number_range', { min, max })) {
  return z
    .string({ error: message })
    .regex(new RegExp(`^${toRegexRange(min, max)}$`), message)
    .transform(Number);
}

export interface TextOptions {
  /** at most this many characters (code points) */
  max: number;
  /** at least this many characters after trimming (default 0); 1 gives the message "required" */
  min?: number;
  /** tab, line feed and carriage return allowed (default false) */
  multiline?: boolean;
  /** trim surrounding whitespace after the control-character check (default true) */
  trim?: boolean;
}

/** The characters text() refuses, as a JSON Schema (ECMA-262, unicode) class body: C0, DEL, C1 and lone surrogates. */
const REFUSED_LINE = '\\u0000-\\u001f\\u007f-\\u009f\\ud800-\\udfff';
const REFUSED_MULTILINE = '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\ud800-\\udfff';

/** The pattern text() documents: no refused character; with min 1 (after trimming), at least one that is not white space. */
export function textPattern(multiline: boolean, required: boolean): string {
  const bad = multiline ? REFUSED_MULTILINE : REFUSED_LINE;
  return required ? `^[^${bad}]*[^${bad}\\s][^${bad}]*$` : `^[^${bad}]*$`;
}

/**
 * A text field: control characters (and unpaired surrogates) are refused before anything else, so a
 * trailing "\n" is an error rather than silently trimmed away; then trimmed and length-checked.
 * Lengths count code points of the value as sent (JSON Schema's maxLength/minLength), so the
 * OpenAPI document states exactly what is accepted: pattern, minLength and maxLength.
 */
export function text(opts: TextOptions): z.ZodString {
  const { max, min = 0, multiline = false, trim = true } = opts;
  if (trim && min > 1) throw new Error('text(): min > 1 with trimming cannot be stated as a JSON Schema pattern; use trim: false');
  let s = z.string().superRefine((v, ctx) => {
    const p = textProblem(v, multiline);
    if (p) ctx.addIssue(fieldIssue(p, { input: v, abort: true }));
  });
  s = s.refine((v) => codePoints(v) <= max, { message: fieldText('field.max_chars', { max }), abort: true });
  if (!trim && min > 0) s = s.refine((v) => codePoints(v) >= min, { message: min === 1 ? 'required' : fieldText('field.min_chars', { min }), abort: true });
  if (trim) s = s.trim();
  if (trim && min === 1) s = s.min(1, 'required');
  return s.meta({ maxLength: max, ...(min > 0 ? { minLength: min } : {}), pattern: textPattern(multiline, trim && min === 1) });
}

/** Length in code points (what a person counts as characters; an emoji is one, not two). */
export function codePoints(v: string): number {
  let n = 0;
  for (const _ of v) n++;
  return n;
}

/** true/false in a query string (also 1/0). */
export const queryBool = z.enum(['true', 'false', '1', '0'], { error: 'must be true or false' }).transform((v) => v === 'true' || v === '1');

/** A free-text search in a query string: trimmed, at most 200 characters; empty means no search. */
export const searchText = z
  .string({ error: 'must be one search string' })
  .max(200, fieldText('field.max_chars', { max: 200 }))
  .trim();

/** Ids are 32-bit integers in both databases. */
export const MAX_ID = 2_147_483_647;
export const idParam = z.coerce.number().int().positive().max(MAX_ID);
export const paging = z.strictObject({
  limit: queryInt(1, 1000).default(100),
  offset: queryInt(0, 1_000_000_000).default(0),
});

/** `sort` values of a list endpoint: `name` ascending, `-name` descending. */
export function sortValues<const K extends string>(keys: readonly K[]): [K | `-${K}`, ...(K | `-${K}`)[]] {
  return keys.flatMap((k) => [k, `-${k}` as const]) as [K | `-${K}`, ...(K | `-${K}`)[]];
}
