// Dates on the API: what a date input may be, and rendering stored epoch milliseconds without ever
// throwing (see docs/reference/api.md "Conventions": dates).

/**
 * The latest instant the API accepts: 9999-12-31T23:59:59.999Z, the last one with a four-digit
 * year (so every accepted date round-trips through ISO 8601 and both databases' BIGINT). A
 * JavaScript Date could hold up to 8.64e15 ms (year 275760); nothing useful lies beyond 9999.
 */
export const MAX_DATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The largest magnitude a JavaScript Date can hold (ECMAScript time value range). */
const DATE_LIMIT_MS = 8.64e15;

/**
 * A date string: a plain date (2030-01-01, midnight UTC), a date-time without a zone
 * (2030-01-01T00:00 or 2030-01-01T00:00:00[.fff], read as UTC), or one with `Z` or a ±hh:mm offset.
 * A space may stand for the `T`. Seconds and fractions are optional.
 */
export const DATE_STRING_PATTERN = dateStringPattern();

/**
 * DATE_STRING_PATTERN spelled out so that the pattern alone says which strings are dates the API
 * takes (the OpenAPI document carries it): real calendar days (month lengths, leap years), hours
 * 00-23, minutes and seconds 00-59, offsets up to ±23:59, years 1970-9999; on the first and last day
 * of that range only the offsets that keep the instant inside it (none, Z, and -hh:mm on
 * 1970-01-01, +hh:mm on 9999-12-31; ±00:00 on both).
 */
function dateStringPattern(): string {
  const d31 = '(?:0[1-9]|[12]\\d|3[01])',
    d30 = '(?:0[1-9]|[12]\\d|30)',
    d28 = '(?:0[1-9]|1\\d|2[0-8])';
  const monthDay = (months31: string, months30: string, extra = '') => `(?:${months31}-${d31}|${months30}-${d30}|02-${d28}${extra})`;
  const anyDay = monthDay('(?:0[13578]|1[02])', '(?:0[469]|11)');
  const leapYear = '(?:19(?:7[26]|8[048]|9[26])|[2-9]\\d(?:0[48]|[2468][048]|[13579][26])|(?:[2468][048]|[3579][26])00)';
  const middleYears = '(?:197[1-9]|19[89]\\d|[2-8]\\d{3}|9[0-8]\\d{2}|99[0-8]\\d|999[0-8])';
  const middle = `(?:${middleYears}-${anyDay}|${leapYear}-02-29|1970-(?:01-(?:0[2-9]|[12]\\d|3[01])|${monthDay('(?:0[3578]|1[02])', '(?:0[469]|11)')})|9999-(?:12-(?:0[1-9]|[12]\\d|30)|${monthDay('(?:0[13578]|10)', '(?:0[469]|11)')}))`;
  const time = '(?:[T ](?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d{1,9})?)?';
  const offset = '(?:[01]\\d|2[0-3]):?[0-5]\\d';
  const zero = '00:?00';
  return `^(?:${middle}${time}(?:Z|[+-]${offset})?)?|1970-01-01${time}(?:Z|-${offset}|\\+${zero})?)?|9999-12-31${time}(?:Z|\\+${offset}|-${zero})?)?)$`;
}
const DATE_STRING_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|([+-])(\d{2}):?(\d{2}))?)?$/;

/** Epoch milliseconds of a date string (zone-less means UTC), or null when it is not a real date. */
export function parseDateString(s: string): number | null {
  const m = DATE_STRING_RE.exec(s);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', , sign, oh, om] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d),
    hour = Number(h),
    minute = Number(mi),
    second = Number(sec);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const daysInMonth = month === 2 ? (isLeap(year) ? 29 : 28) : [31, 0, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  if (day > daysInMonth) return null;
  let ms = Date.UTC(year, month - 1, day, hour, minute, second, Number(frac.padEnd(3, '0').slice(0, 3)));
  // Date.UTC maps years 0-99 to 1900-1999; set the year explicitly.
  if (year < 100) {
    const dt = new Date(ms);
    dt.setUTCFullYear(year);
    ms = dt.getTime();
  }
  if (sign) {
    const offH = Number(oh),
      offM = Number(om);
    if (offH > 23 || offM > 59) return null;
    ms -= (sign === '+' ? 1 : -1) * (offH * 60 + offM) * 60_000;
  }
  return Number.isFinite(ms) ? ms : null;
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

/**
 * ISO 8601 of stored epoch milliseconds; null for null/undefined and for a value no Date can hold
 * (a row written before the range check, or by hand), so one bad row never breaks a whole list.
 */
export function isoOrNull(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  const n = Number(v);
  if (!Number.isFinite(n) || Math.abs(n) > DATE_LIMIT_MS) return null;
  return new Date(n).toISOString();
}
