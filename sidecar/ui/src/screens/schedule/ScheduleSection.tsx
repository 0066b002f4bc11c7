// The access window of a route or a peer (access_schedule, sidecar/src/access-windows): "always open"
// or "only in these windows", the time zone the windows are read in, and rows of windows (weekdays,
// from, to). What is typed is checked as it is typed with the server's own schema (accessSchedule),
// its messages in the reader's language at the inputs; the server's `fields` errors on save land at
// the same inputs (access_schedule.timezone, access_schedule.windows.0.to, …), and take precedence.
import { useMemo, useState } from 'preact/hooks';
import type { z } from 'zod';
import { accessSchedule } from '@server/access-windows/schema';
import { issueMessage } from '@server/http/messages';
import { refOf } from '@gatehouse/common/messages/index.js';
import { fid, type Form } from '../../components/form';
import { t, useLang, word } from '../../i18n';
import { dayNames, zoneNames } from './format';
import './schedule.css';

/** The request's access_schedule (what the server accepts). */
export type ScheduleBody = z.input<typeof accessSchedule>;
type Window = NonNullable<ScheduleBody>['windows'][number];

/** The form values this section edits (a part of the route's or peer's form values). */
export interface ScheduleValues {
  /** UI only: "only in these windows" (true) or "always open" (false, sent as null) */
  access_schedule_on: boolean;
  access_schedule: { timezone: string; windows: Window[] };
}

/** The viewer's own time zone: the default of a new schedule. */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
const newWindow = (): Window => ({ days: [1, 2, 3, 4, 5], from: '08:00', to: '18:00' });

export const scheduleValues = (r: { access_schedule?: ScheduleBody | null } | null | undefined): ScheduleValues => {
  const s = r?.access_schedule;
  return {
    access_schedule_on: !!s,
    access_schedule: s
      ? { timezone: s.timezone, windows: s.windows.map((w) => ({ days: [...w.days], from: w.from, to: w.to })) }
      : { timezone: browserZone(), windows: [newWindow()] },
  };
};

/** The request's access_schedule: the windows while "only in these windows" is chosen, else null (always open). */
export const scheduleBody = (v: ScheduleValues): ScheduleBody =>
  v.access_schedule_on
    ? {
        timezone: v.access_schedule.timezone.trim(),
        windows: v.access_schedule.windows.map((w) => ({ days: [...w.days].sort((a, b) => a - b), from: w.from.trim(), to: w.to.trim() })),
      }
    : null;

/** The shared schema's messages for the section's values, by field name (access_schedule.windows.0.to), in the reader's language. */
export function scheduleIssues(v: ScheduleValues): Record<string, string> {
  const body = scheduleBody(v);
  if (body === null) return {};
  const r = accessSchedule.safeParse(body);
  if (r.success) return {};
  const out: Record<string, string> = {};
  for (const iss of r.error.issues) {
    const key = ['access_schedule', ...iss.path.map(String)].join('.');
    if (!(key in out)) {
      const m = issueMessage(iss);
      out[key] = word(refOf(m), m.text);
    }
  }
  return out;
}

const minutes = (hhmm: string) => {
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(hhmm.trim());
  return m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
};

export function ScheduleSection<T extends ScheduleValues>(props: { form: Form<T>; legend?: string }) {
  const lang = useLang();
  // reason: the section edits only its own keys of the route's or peer's form
  const form = props.form as unknown as Form<ScheduleValues>;
  const v = form.values;
  const s = v.access_schedule;
  // the fields edited here: the schema's message shows at a field once it has been edited
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const touch = (...keys: string[]) => setTouched((old) => (keys.every((k) => old.has(k)) ? old : new Set([...old, ...keys])));
  const local = useMemo(() => scheduleIssues(v), [v.access_schedule_on, s, lang]);
  const err = (key: string): string | undefined => form.errors[key] ?? (touched.has(key) ? local[key] : undefined);
  const days = dayNames(lang);
  const zones = useMemo(zoneNames, []);
  const base = 'access_schedule';
  const set = (name: string, value: unknown, ...alsoTouch: string[]) => {
    form.set(name, value);
    touch(name, ...alsoTouch);
  };
  const setWindows = (windows: Window[]) => {
    form.set(`${base}.windows`, windows);
    // rows moved: the server's messages of rows and what was edited no longer name the same rows
    const stale = Object.keys(form.errors).filter((k) => k.startsWith(`${base}.windows`));
    if (!stale.length) form.set(`${base}.windows`, windows);
    for (const k of stale) form.set(`${base}.windows`, windows, k);
    setTouched(new Set([...touched].filter((k) => !k.startsWith(`${base}.windows.`))));
  };
  const sectionErr = form.errors[base];
  const listErr = err(`${base}.windows`);
  return (
    <fieldset class="route-section schedule-section" data-testid="schedule-section">
      <legend>{props.legend ?? t('schedule.legend')}</legend>
      <p class="hint">{t('schedule.hint')}</p>
      <div class={`schedule-mode${sectionErr ? ' has-error' : ''}`} role="radiogroup" aria-label={t('schedule.mode')}>
        <label class="check">
          <input
            type="radio"
            name="access_schedule_mode"
            value="always"
            checked={!v.access_schedule_on}
            onChange={() => form.set('access_schedule_on', false, base)}
          />
          {t('schedule.always')}
        </label>
        <label class="check">
          <input
            type="radio"
            id={fid(base)}
            name="access_schedule_mode"
            value="windows"
            checked={v.access_schedule_on}
            aria-invalid={sectionErr ? 'true' : undefined}
            aria-describedby={sectionErr ? `${fid(base)}-err` : undefined}
            onChange={() => form.set('access_schedule_on', true, base)}
          />
          {t('schedule.windowsOnly')}
        </label>
        {sectionErr && (
          <p class="field-error" id={`${fid(base)}-err`}>
            {sectionErr}
          </p>
        )}
      </div>
      {v.access_schedule_on && (
        <>
          <TimeZoneField
            value={s.timezone}
            error={err(`${base}.timezone`)}
            zones={zones}
            onInput={(z) => form.set(`${base}.timezone`, z)}
            onCommit={() => touch(`${base}.timezone`)}
          />
          <p class="hint">{t('schedule.midnightHint')}</p>
          <ol class="schedule-windows" aria-label={t('schedule.windows')}>
            {s.windows.map((w, i) => {
              const row = `${base}.windows.${i}`;
              const from = minutes(w.from);
              const to = minutes(w.to);
              const overnight = from > to;
              const daysErr = err(`${row}.days`);
              return (
                <li key={i} class="schedule-window" data-testid={`schedule-window-${i}`}>
                  <fieldset class={`schedule-days${daysErr ? ' has-error' : ''}`}>
                    <legend>{t('schedule.windowN', { n: i + 1 })}</legend>
                    <div
                      class="schedule-day-list"
                      role="group"
                      aria-label={t('schedule.days')}
                      aria-describedby={daysErr ? `${fid(`${row}.days`)}-err` : undefined}
                    >
                      {days.map((d, di) => {
                        const day = di + 1;
                        return (
                          <label key={day} class="schedule-day" title={d.long}>
                            <input
                              type="checkbox"
                              id={di === 0 ? fid(`${row}.days`) : undefined}
                              name={`${row}.days`}
                              value={day}
                              checked={w.days.includes(day)}
                              aria-label={d.long}
                              aria-invalid={daysErr ? 'true' : undefined}
                              onChange={(e) =>
                                set(`${row}.days`, e.currentTarget.checked ? [...w.days, day].sort((a, b) => a - b) : w.days.filter((x) => x !== day))
                              }
                            />
                            <span aria-hidden="true">{d.short}</span>
                          </label>
                        );
                      })}
                    </div>
                    {daysErr && (
                      <p class="field-error" id={`${fid(`${row}.days`)}-err`}>
                        {daysErr}
                      </p>
                    )}
                  </fieldset>
                  <div class="schedule-times">
                    <TimeField
                      name={`${row}.from`}
                      label={t('schedule.from')}
                      value={w.from}
                      error={err(`${row}.from`)}
                      onInput={(x) => set(`${row}.from`, x, `${row}.to`)}
                    />
                    <TimeField
                      name={`${row}.to`}
                      label={t('schedule.to')}
                      value={w.to}
                      error={err(`${row}.to`)}
                      onInput={(x) => set(`${row}.to`, x, `${row}.from`)}
                    />
                    <button
                      type="button"
                      class="btn small"
                      disabled={s.windows.length <= 1}
                      aria-label={t('schedule.removeN', { n: i + 1 })}
                      onClick={() => setWindows(s.windows.filter((_, j) => j !== i))}
                    >
                      {t('schedule.remove')}
                    </button>
                  </div>
                  {overnight && w.days.length > 0 && (
                    <p class="hint schedule-overnight" data-testid="schedule-overnight">
                      {t('schedule.overnight', { days: w.days.map((d) => days[d - 1].short).join(', '), from: w.from, to: w.to })}
                    </p>
                  )}
                </li>
              );
            })}
          </ol>
          {listErr && (
            <p class="field-error" id={`${fid(`${base}.windows`)}-err`}>
              {listErr}
            </p>
          )}
          <button
            type="button"
            class="btn small"
            id={fid(`${base}.windows`)}
            disabled={s.windows.length >= 50}
            onClick={() => setWindows([...s.windows, newWindow()])}
          >
            {t('schedule.add')}
          </button>
        </>
      )}
    </fieldset>
  );
}

function TimeZoneField(props: { value: string; error?: string; zones: string[]; onInput: (z: string) => void; onCommit: () => void }) {
  const id = fid('access_schedule.timezone');
  return (
    <div class={`field schedule-zone${props.error ? ' has-error' : ''}`}>
      <label for={id}>{t('schedule.timezone')}</label>
      <input
        id={id}
        name="access_schedule.timezone"
        type="text"
        list={`${id}-list`}
        autoComplete="off"
        spellcheck={false}
        value={props.value}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={`${id}-hint${props.error ? ` ${id}-err` : ''}`}
        onInput={(e) => props.onInput(e.currentTarget.value)}
        onChange={props.onCommit}
      />
      <datalist id={`${id}-list`}>
        {props.zones.map((z) => (
          <option key={z} value={z} />
        ))}
      </datalist>
      <p class="hint" id={`${id}-hint`}>
        {t('schedule.timezoneHint', { zone: browserZone() })}
      </p>
      {props.error && (
        <p class="field-error" id={`${id}-err`}>
          {props.error}
        </p>
      )}
    </div>
  );
}

function TimeField(props: { name: string; label: string; value: string; error?: string; onInput: (v: string) => void }) {
  const id = fid(props.name);
  return (
    <div class={`field schedule-time${props.error ? ' has-error' : ''}`}>
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type="text"
        inputMode="numeric"
        placeholder={t('schedule.timePlaceholder')}
        maxLength={5}
        size={6}
        autoComplete="off"
        value={props.value}
        aria-invalid={props.error ? 'true' : undefined}
        aria-describedby={props.error ? `${id}-err` : undefined}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
      {props.error && (
        <p class="field-error" id={`${id}-err`}>
          {props.error}
        </p>
      )}
    </div>
  );
}
