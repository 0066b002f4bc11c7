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
const bound = (p: Bound, adj: string, limit: string) => (p.unit ? `have ${adj}${limit} ${p.unit}` : `be ${adj}${limit}`);

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
  'field.no_such_peer': (p: { id: number }) => `peer ${p.id} does not exist`,
  'field.not_gateway_peer': (p: { id: number }) => `peer ${p.id} is not a gateway peer`,
  'field.no_such_peers': (p: { ids: number[] }) => `peers do not exist: ${p.ids.join(', ')}`,
  'field.no_such_users': (p: { ids: number[] }) => `users do not exist: ${p.ids.join(', ')}`,
  'field.one_of': (p: { values: string[] }) => `must be one of ${p.values.join(', ')}`,
  'field.not_ip_or_domain': (p: { value: string }) => `"${p.value}" is not an IP address or domain`,
  'field.not_ipv4_cidr': (p: { value: string }) => `"${p.value}" is not an IPv4 CIDR such as 192.168.1.0/24`,
  'field.taken_by_other_row': () => 'already taken by another row',
  // The zod schema kit's own messages (a type, size or format the schema states but gives no message
  // for), with zod's parameters, worded as zod words them in English (http/messages.ts).
  'field.invalid_type': (p: { expected: string; received: string }) => `Invalid input: expected ${p.expected}, received ${p.received}`,
  'field.invalid_literal': (p: { value: string }) => `Invalid input: expected ${p.value}`,
  'field.invalid_option': (p: { values: string[] }) => `Invalid option: expected one of ${p.values.join('|')}`,
  'field.too_big': (p: Bound & { maximum: string }) =>
    `Too big: expected ${p.origin} to ${bound(p, p.exact ? 'exactly ' : p.inclusive ? '<=' : '<', p.maximum)}`,
  'field.too_small': (p: Bound & { minimum: string }) =>
    `Too small: expected ${p.origin} to ${bound(p, p.exact ? 'exactly ' : p.inclusive ? '>=' : '>', p.minimum)}`,
  'field.invalid_format': (p: { format: string }) => `Invalid ${FORMATS[p.format] ?? p.format}`,
  'field.must_start_with': (p: { prefix: string }) => `Invalid string: must start with "${p.prefix}"`,
  'field.must_end_with': (p: { suffix: string }) => `Invalid string: must end with "${p.suffix}"`,
  'field.must_include': (p: { includes: string }) => `Invalid string: must include "${p.includes}"`,
  'field.must_match': (p: { pattern: string }) => `Invalid string: must match pattern ${p.pattern}`,
  'field.not_multiple_of': (p: { divisor: number }) => `Invalid number: must be a multiple of ${p.divisor}`,
  'field.invalid_key': (p: { origin: string }) => `Invalid key in ${p.origin}`,
  'field.invalid_element': (p: { origin: string }) => `Invalid value in ${p.origin}`,
  'field.invalid_discriminator': (p: { options: string[] }) => `Invalid discriminator value. Expected ${p.options.map((o) => `'${o}'`).join(' | ')}`,
  'field.invalid_input': () => 'Invalid input',
  /** a text a schema gave that the catalogue does not hold (should not happen: a test looks for them) */
  'field.unworded': (p: { text: string }) => p.text,
} satisfies Catalogue;
