// The access window's state where routes and peers are shown: a badge for the lists and the detail
// pages ("Closed until Mon 08:00 (Europe/Berlin)", "Open until Fri 18:00 (…)"; nothing without a
// schedule), and the detail pages' card with the windows and, for an HTTP route, its closed answers.
import { Badge, Card } from '../../components/ui';
import { fmtNumber, t, useLang } from '../../i18n';
import type { Peer, Route } from '../../protocol';
import { windowsText, zoneTime } from './format';

type Scheduled = Pick<Route, 'access_schedule' | 'access_state'> | Pick<Peer, 'access_schedule' | 'access_state'>;

/** The state now, in words; null without a schedule (always open). */
export function accessStateText(item: Scheduled, lang: ReturnType<typeof useLang>): { open: boolean; text: string } | null {
  const s = item.access_schedule;
  if (!s) return null;
  const st = item.access_state;
  const next = st.next_change_at;
  const vars: Record<string, string> = { when: next ? zoneTime(next, s.timezone, lang) : '', zone: s.timezone };
  if (!st.open) return { open: false, text: next ? t('schedule.closedUntil', vars) : t('schedule.closedNever', vars) };
  return { open: true, text: next ? t('schedule.openUntil', vars) : t('schedule.openAlways', vars) };
}

export function AccessBadge(props: { item: Scheduled }) {
  const lang = useLang();
  const s = accessStateText(props.item, lang);
  if (!s) return null;
  return (
    <span data-testid="access-state" data-open={String(s.open)}>
      <Badge tone={s.open ? 'ok' : 'warn'}>{s.text}</Badge>
    </span>
  );
}

/** The detail pages' card: the state, the time zone and windows; an HTTP route's 403 answers while closed. */
export function AccessWindowCard(props: { item: Scheduled; kind: 'http' | 'l4' | 'peer' }) {
  const lang = useLang();
  const s = props.item.access_schedule;
  return (
    <Card title={t('schedule.legend')} class="access-window-card">
      {!s ? (
        <p class="muted" data-testid="access-always">
          {t('schedule.always')}
        </p>
      ) : (
        <>
          <p>
            <AccessBadge item={props.item} />
          </p>
          <dl class="facts">
            <dt>{t('schedule.timezone')}</dt>
            <dd>
              <code>{s.timezone}</code>
            </dd>
            <dt>{t('schedule.windows')}</dt>
            <dd data-testid="access-windows">{windowsText(s.windows, lang)}</dd>
            {props.kind === 'http' && (
              <>
                <dt>{t('schedule.closedAnswers')}</dt>
                <dd data-testid="closed-answers">{fmtNumber(props.item.access_state.closed_answers)}</dd>
              </>
            )}
          </dl>
          <p class="hint">{t(`schedule.closedHint_${props.kind}`)}</p>
        </>
      )}
    </Card>
  );
}
