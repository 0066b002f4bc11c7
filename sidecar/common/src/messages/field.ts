// Messages about one field of a request (the body's `fields` and `field_codes`): the generic ones,
// used by many schemas. A feature's own field messages sit in its area as `<area>.field.<what>`.
import type { Catalogue } from './define.js';

export const field = {
  'field.required': () => 'required',
  'field.invalid': () => 'invalid',
  'field.unknown': () => 'unknown field',
  'field.unknown_parameter': () => 'unknown query parameter',
  'field.not_allowed': () => 'not allowed',
  'field.does_not_resolve': () => 'the host does not resolve',
  'field.not_fetched': () => 'could not be fetched',
  'field.in_future': () => 'must be in the future',
  'field.not_empty': () => 'must not be empty',
  'field.positive_integer': () => 'must be a positive integer',
  'field.max_chars': (p: { max: number }) => `at most ${p.max} characters`,
  'field.min_chars': (p: { min: number }) => `at least ${p.min} characters`,
  'field.max_bytes': (p: { max: number }) => `at most ${p.max} bytes`,
  'field.no_control_chars': () => 'must not contain control characters',
  'field.no_control_chars_multiline': () => 'must not contain control characters (other than tab and line breaks)',
  'field.valid_unicode': () => 'must be valid Unicode text',
  'field.invalid_upload': () => 'invalid upload',
  'field.empty_file': () => 'empty file',
  'field.csrf_text': () => 'must be text (the CSRF token)',
  'field.no_such_user': () => 'no such user',
  'field.does_not_match': () => 'does not match',
  'field.already_taken': () => 'already taken',
  'field.taken_by_other_row': () => 'already taken by another row',
  /** a message of the zod schema kit itself (a type, size or format the schema states), with zod's own parameters */
  'field.invalid_type': (p: { expected: string; received: string }) => `Invalid input: expected ${p.expected}, received ${p.received}`,
  'field.too_small': (p: { origin: string; minimum: number | string; inclusive: boolean }) => `Too small: expected ${p.origin} to be ${p.inclusive ? '>=' : '>'}${p.minimum}`,
  'field.too_big': (p: { origin: string; maximum: number | string; inclusive: boolean }) => `Too big: expected ${p.origin} to be ${p.inclusive ? '<=' : '<'}${p.maximum}`,
  'field.invalid_format': (p: { format: string }) => `Invalid ${p.format}`,
  'field.invalid_value': (p: { values: string[] }) => `Invalid option: expected one of ${p.values.map((v) => JSON.stringify(v)).join('|')}`,
  'field.not_multiple_of': (p: { divisor: number }) => `Invalid number: must be a multiple of ${p.divisor}`,
  'field.invalid_input': () => 'Invalid input',
  /** a text a schema gave that the catalogue does not hold (should not happen: a test looks for them) */
  'field.unworded': (p: { text: string }) => p.text,
} satisfies Catalogue;
