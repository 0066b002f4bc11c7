// Regular expressions that state a request field's accepted form exactly, so that the OpenAPI
// document (JSON Schema `pattern`, ECMA-262 with the unicode flag) carries the same rule the
// validator enforces. Each is used with z.string().regex(...) ahead of the field's
// transforms; where code also checks something the pattern cannot say, the pattern is the stricter
// of the two (the document never allows what the server refuses). Sources are written to mean the
// same with and without the `u` flag.

/** 0-255, no leading zeros (as parseIPv4 reads them). */
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
export const IPV4 = `${OCTET}(?:\\.${OCTET}){3}`;
/** An IPv4 CIDR: address / 0-32 (one or two digits). */
export const IPV4_CIDR = `${IPV4}/(?:3[0-2]|[0-2]?\\d)`;
const H = '[0-9A-Fa-f]{1,4}';
/** IPv6 in its textual forms, embedded IPv4 included (::ffff:192.0.2.1, 64:ff9b::192.0.2.1); no zone. */
export const IPV6 = `(?:(?:${H}:){7}${H}|(?:${H}:){1,7}:|(?:${H}:){1,6}:${H}|(?:${H}:){1,5}(?::${H}){1,2}|(?:${H}:){1,4}(?::${H}){1,3}|(?:${H}:){1,3}(?::${H}){1,4}|(?:${H}:){1,2}(?::${H}){1,5}|${H}:(?::${H}){1,6}|:(?:(?::${H}){1,7}|:)|(?:${H}:){6}${IPV4}|::(?:[Ff]{4}(?::0{1,4})?:)?${IPV4}|(?:${H}:){1,5}:${IPV4})`;
/** A DNS label: letters, digits, inner hyphens, 1-63 characters. */
export const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
/** Dot-separated labels (the 253-character bound of a whole name is stated where the name stands alone). */
export const LABELS = `${LABEL}(?:\\.${LABEL})*`;
/**
 * A host name: dot-separated labels whose last label is not all digits, so that `999.1.1.1` (an
 * IPv4 address out of range) is not taken for a name. Top-level domains are never all digits.
 */
export const HOST_NAME = `(?:${LABEL}\\.)*(?=[0-9-]*[A-Za-z])${LABEL}`;

/** Anchors a source as a whole-string RegExp with the unicode flag. */
export const whole = (source: string) => new RegExp(`^(?:${source})$`, 'u');

const IP_ADDRESS = whole(`${IPV4}|${IPV6}`);
/** An IPv4 or IPv6 address as IPV4 and IPV6 state it (every one of which node:net's isIP accepts too). */
export const isIPAddress = (v: string) => IP_ADDRESS.test(v);
