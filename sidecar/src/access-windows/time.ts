// The two small checks of a schedule's parts that both its schema and its pure core use: a time of day
// as "HH:MM", and an IANA time zone name (through Intl).

/** "HH:MM" → minutes of the day (24:00 → 1440); NaN when malformed. */
export function minutesOf(hhmm: string): number {
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(hhmm);
  if (!m) return NaN;
  const v = Number(m[1]) * 60 + Number(m[2]);
  return v > 1440 ? NaN : v;
}

/** Whether a string names a time zone Intl knows. */
export function isTimeZone(tz: string): boolean {
  if (!tz || tz.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
