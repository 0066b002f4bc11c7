// Access windows in the viewer's words: weekday names of the viewer's locale, the time zones the
// browser knows, and an instant as the schedule's own time zone reads it ("Mon 08:00").
import type { Lang } from '../../i18n';

const locale = (lang: Lang) => (lang === 'de' ? 'de-DE' : 'en-GB');

/** Monday … Sunday (ISO 1 … 7) in the viewer's language: short ("Mon", "Mo") and long ("Monday"). */
export function dayNames(lang: Lang): { short: string; long: string }[] {
  const short = new Intl.DateTimeFormat(locale(lang), { weekday: 'short', timeZone: 'UTC' });
  const long = new Intl.DateTimeFormat(locale(lang), { weekday: 'long', timeZone: 'UTC' });
  // 1 January 2024 was a Monday
  return [0, 1, 2, 3, 4, 5, 6].map((i) => {
    const d = new Date(Date.UTC(2024, 0, 1 + i));
    return { short: short.format(d), long: long.format(d) };
  });
}

/** The IANA time zones this browser knows (and UTC), sorted. */
export function zoneNames(): string[] {
  const all = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return [...new Set(['UTC', ...all])].sort();
}

const WEEK_MS = 6 * 86_400_000;

/** An instant as the schedule's time zone reads it: "Mon 08:00", with the date when it is more than six days away. */
export function zoneTime(iso: string, timezone: string, lang: Lang, now = Date.now()): string {
  const t = Date.parse(iso);
  const far = t - now > WEEK_MS;
  try {
    return new Intl.DateTimeFormat(locale(lang), {
      timeZone: timezone,
      weekday: 'short',
      ...(far ? { day: 'numeric', month: 'short' } : {}),
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).format(new Date(t));
  } catch {
    return iso;
  }
}

/** The windows in words: "Mon, Tue 08:00–18:00; Fri 22:00–02:00". */
export function windowsText(windows: { days: number[]; from: string; to: string }[], lang: Lang): string {
  const names = dayNames(lang);
  return windows
    .map(
      (w) =>
        `${[...w.days]
          .sort((a, b) => a - b)
          .map((d) => names[d - 1]?.short ?? String(d))
          .join(', ')} ${w.from}–${w.to}`,
    )
    .join('; ');
}
