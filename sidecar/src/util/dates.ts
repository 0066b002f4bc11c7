// Dates on the API: what a date input may be, and rendering stored epoch milliseconds without ever
// throwing (see README "API conventions": dates).

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
export const DATE_STRING_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(?:[T ]\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d{1,9})?)?(?:Z|[+-]\\d{2}:?\\d{2})?)?$';
const DATE_STRING_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|([+-])(\d{2}):?(\d{2}))?)?$/;

/** Epoch milliseconds of a date string (zone-less means UTC), or null when it is not a real date. */
export function parseDateString(s: string): number | null {
  const m = DATE_STRING_RE.exec(s);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', , sign, oh, om] = m;
  const year = Number(y), month = Number(mo), day = Number(d), hour = Number(h), minute = Number(mi), second = Number(sec);
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
    const offH = Number(oh), offM = Number(om);
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
