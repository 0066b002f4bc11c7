// Messages about one field of a request (the body's `fields` and `field_codes`): the generic ones,
// used by many schemas. A feature's own field messages sit in its area as `<area>.field.<what>`.
import type { Catalogue } from './define.js';

/** A size bound of zod's: what was measured (string, array, number, ...), the unit when it has one. */
export type Bound = {
  origin: string;
  unit: 'characters' | 'bytes' | 'items' | 'entries' | null;
  inclusive: boolean;
  exact: boolean;
};
const UNIT_ONE: Record<NonNullable<Bound['unit']>, string> = { characters: 'character', bytes: 'byte', items: 'item', entries: 'entry' };
const bound = (p: Bound, rel: string, limit: string) =>
  p.unit ? `must have ${rel}${limit} ${limit === '1' ? UNIT_ONE[p.unit] : p.unit}` : `must be ${rel}${limit}`;

/** zod's names of expected types, in words. */
export const EXPECTED: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  bigint: 'a whole number',
  date: 'a date',
  null: 'null',
  record: 'an object',
  map: 'a map',
  set: 'a set',
  tuple: 'a list',
  file: 'a file',
};
/** zod's names of received types, in words. */
export const RECEIVED: Record<string, string> = {
  string: 'text',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
  undefined: 'nothing',
  NaN: 'NaN',
  Infinity: 'Infinity',
  '-Infinity': '-Infinity',
  bigint: 'a big integer',
};

/** zod's English names of string formats. */
export const FORMATS: Record<string, string> = {
  regex: 'input',
  email: 'email address',
  url: 'URL',
  emoji: 'emoji',
  uuid: 'UUID',
  uuidv4: 'UUIDv4',
  uuidv6: 'UUIDv6',
  nanoid: 'nanoid',
  guid: 'GUID',
  cuid: 'cuid',
  cuid2: 'cuid2',
  ulid: 'ULID',
  xid: 'XID',
  ksuid: 'KSUID',
  datetime: 'ISO datetime',
  date: 'ISO date',
  time: 'ISO time',
  duration: 'ISO duration',
  ipv4: 'IPv4 address',
  ipv6: 'IPv6 address',
  mac: 'MAC address',
  cidrv4: 'IPv4 range',
  cidrv6: 'IPv6 range',
  base64: 'base64-encoded string',
  base64url: 'base64url-encoded string',
  json_string: 'JSON string',
  e164: 'E.164 number',
  jwt: 'JWT',
  template_literal: 'input',
};

export const field = {
  'field.required': () => 'required',
  'field.invalid': () => 'invalid',
  'field.base64url': () => 'must be base64url',
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
  'field.max_ids': (p: { max: number }) => `at most ${p.max} ids`,
  'field.max_users': (p: { max: number }) => `at most ${p.max} users`,
  'field.max_windows': (p: { max: number }) => `at most ${p.max} windows`,
  'field.max_patterns': (p: { max: number }) => `at most ${p.max} patterns`,
  'field.max_rules': (p: { max: number }) => `at most ${p.max} rules`,
  'field.max_targets': (p: { max: number }) => `at most ${p.max} targets`,
  'field.max_cidrs': (p: { max: number }) => `at most ${p.max} CIDRs`,
  'field.min_ms': (p: { min: number }) => `at least ${p.min} ms`,
  'field.no_control_chars': () => 'must not contain control characters',
  'field.no_control_chars_multiline': () => 'must not contain control characters (other than tab and line breaks)',
  'field.valid_unicode': () => 'must be valid Unicode text',
  'field.invalid_upload': () => 'invalid upload',
  'field.empty_file': () => 'empty file',
  'field.csrf_text': () => 'must be text (the CSRF token)',
  'field.no_such_user': () => 'no such user',
  'field.does_not_match': () => 'does not match',
  'field.already_taken': () => 'already taken',
  'field.email': () => 'must be an email address',
  'field.no_such_peer': (p: { id: number }) => `peer ${p.id} does not exist`,
  'field.not_gateway_peer': (p: { id: number }) => `peer ${p.id} is not a gateway peer`,
  'field.no_such_peers': (p: { ids: number[] }) => `peers do not exist: ${p.ids.join(', ')}`,
  'field.no_such_users': (p: { ids: number[] }) => `users do not exist: ${p.ids.join(', ')}`,
  'field.one_of': (p: { values: string[] }) => `must be one of ${p.values.join(', ')}`,
  'field.not_ip_or_domain': (p: { value: string }) => `"${p.value}" is not an IP address or domain`,
  'field.not_ipv4_cidr': (p: { value: string }) => `"${p.value}" is not an IPv4 CIDR such as 192.168.1.0/24`,
  'field.taken_by_other_row': () => 'already taken by another row',
  // Runtime-built field messages (a limit, an allowed list, the value refused as parameters).
  'field.date': () => 'must be epoch milliseconds or a date such as 2030-01-01, 2030-01-01T12:00:00 (UTC) or 2030-01-01T12:00:00+02:00',
  'field.date_not_real': () => 'not a real date; must be a date such as 2030-01-01, 2030-01-01T12:00:00 (UTC) or 2030-01-01T12:00:00+02:00',
  'field.whole_ms': () => 'must be whole milliseconds',
  'field.date_before_1970': () => 'must not be before 1970-01-01',
  'field.date_after': (p: { max: string }) => `must not be after ${p.max}`,
  'field.date_range': (p: { max: string }) => `must be between 1970-01-01 and ${p.max}`,
  'field.whole_number_range': (p: { min: number; max: number }) => `must be a whole number from ${p.min} to ${p.max}`,
  'field.integer_range': (p: { min: number; max: number }) => `must be an integer from ${p.min} to ${p.max}`,
  'field.at_most': (p: { max: number }) => `must be at most ${p.max}`,
  'field.at_most_ms': (p: { max: number }) => `at most ${p.max} ms`,
  'field.one_of_durations': (p: { values: number[] }) => `must be one of ${p.values.join(', ')} (1h, 12h, 24h, 7d, 30d in milliseconds)`,
  'field.cidr_prefix_range': (p: { max: number }) => `prefix must be 0-${p.max}`,
  // The zod schema kit's own messages (a type, size or format the schema states but gives no message
  // for), with zod's parameters, worded for a person (http/messages.ts maps zod's issues to them).
  'field.invalid_type': (p: { expected: string; received: string }) =>
    `must be ${EXPECTED[p.expected] ?? p.expected}${p.received ? ` (received ${RECEIVED[p.received] ?? p.received})` : ''}`,
  'field.invalid_literal': (p: { value: string }) => `must be ${p.value}`,
  'field.invalid_option': (p: { values: string[] }) => `must be one of ${p.values.join(', ')}`,
  'field.too_big': (p: Bound & { maximum: string }) => bound(p, p.exact ? 'exactly ' : p.inclusive ? 'at most ' : 'less than ', p.maximum),
  'field.too_small': (p: Bound & { minimum: string }) => bound(p, p.exact ? 'exactly ' : p.inclusive ? 'at least ' : 'more than ', p.minimum),
  'field.invalid_format': (p: { format: string }) => `must be a valid ${FORMATS[p.format] ?? p.format}`,
  'field.must_start_with': (p: { prefix: string }) => `must start with "${p.prefix}"`,
  'field.must_end_with': (p: { suffix: string }) => `must end with "${p.suffix}"`,
  'field.must_include': (p: { includes: string }) => `must include "${p.includes}"`,
  'field.must_match': (p: { pattern: string }) => `must match the pattern ${p.pattern}`,
  'field.not_multiple_of': (p: { divisor: number }) => `must be a multiple of ${p.divisor}`,
  'field.invalid_key': (p: { origin: string }) => `has an invalid key (${p.origin})`,
  'field.invalid_element': (p: { origin: string }) => `has an invalid value (${p.origin})`,
  'field.invalid_discriminator': (p: { options: string[] }) => `must be one of the kinds ${p.options.map((o) => `'${o}'`).join(', ')}`,
  'field.invalid_input': () => 'invalid input',
  /** a text a schema gave that the catalogue does not hold (should not happen: a test looks for them) */
  'field.unworded': (p: { text: string }) => p.text,
} satisfies Catalogue;
