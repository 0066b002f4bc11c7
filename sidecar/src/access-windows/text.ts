// Access windows in words: the lines of a peer's config file and the page a closed route answers
// with (en/de), with times in the schedule's own time zone.
import { parseSchedule, scheduleState } from './schedule.js';
import type { AccessSchedule } from './schema.js';

export type Lang = 'en' | 'de';

/** An instant in a schedule's time zone, e.g. "Mon, 30 Mar 2026, 08:00 (Europe/Berlin)". */
export function localTime(t: number, schedule: AccessSchedule, lang: Lang): string {
  const f = new Intl.DateTimeFormat(lang === 'de' ? 'de-DE' : 'en-GB', {
    timeZone: schedule.timezone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  return `${f.format(new Date(t))} (${schedule.timezone})`;
}

const DAYS: Record<Lang, string[]> = {
  en: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'],
  de: ['Mo', 'Di', 'Mi', 'Do', 'Fr', 'Sa', 'So'],
};

/** The windows in words: "Mon, Tue 08:00–18:00; Fri 22:00–02:00". */
export function windowsText(schedule: AccessSchedule, lang: Lang = 'en'): string {
  return schedule.windows
    .map(
      (w) =>
        `${[...w.days]
          .sort()
          .map((d) => DAYS[lang][d - 1])
          .join(', ')} ${w.from}–${w.to}`,
    )
    .join('; ');
}

/** The comment lines a peer's config carries about its access window (none without one). */
export function scheduleComment(raw: unknown, now: number): string[] {
  const schedule = parseSchedule(raw);
  if (!schedule) return [];
  const s = scheduleState(schedule, now);
  const next =
    s.next_change_at === null
      ? ''
      : s.open
        ? `; it closes ${localTime(s.next_change_at, schedule, 'en')}`
        : `; it opens ${localTime(s.next_change_at, schedule, 'en')}`;
  return [
    `Access window: ${windowsText(schedule)} (${schedule.timezone}). Outside it the tunnel carries no traffic.`,
    `Now ${s.open ? 'open' : 'CLOSED'}${next}.`,
  ];
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const PAGE: Record<Lang, { title: string; closed: string; opens: (t: string) => string; never: string }> = {
  en: {
    title: 'Closed right now',
    closed: 'This site is only available at certain times.',
    opens: (t) => `It opens again on ${t}.`,
    never: 'No opening time is scheduled.',
  },
  de: {
    title: 'Gerade geschlossen',
    closed: 'Diese Seite ist nur zu bestimmten Zeiten erreichbar.',
    opens: (t) => `Sie ist wieder erreichbar ab ${t}.`,
    never: 'Es ist keine Öffnungszeit geplant.',
  },
};

/** The 403 page of a closed route. */
export function closedPageHtml(schedule: AccessSchedule | null, opensAt: number | null, lang: Lang): string {
  const t = PAGE[lang];
  const when = opensAt !== null && schedule ? t.opens(localTime(opensAt, schedule, lang)) : t.never;
  return (
    `<!doctype html>\n<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>403 · ${t.title}</title><style>` +
    'body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:#f4f5f7;color:#1f2933;font:16px/1.5 system-ui,sans-serif}' +
    'main{max-width:32rem;margin:1rem;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 2px 12px rgba(0,0,0,.08)}' +
    'h1{margin:0 0 .5rem;font-size:1.4rem}p{margin:0 0 1rem}small{color:#7b8794}' +
    `</style></head><body><main><h1>${t.title}</h1><p>${t.closed}</p><p>${escape(when)}</p><small>403 · Gatehouse</small></main></body></html>\n`
  );
}
