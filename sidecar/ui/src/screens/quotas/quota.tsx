// The data quota (quota, quota_state) in the admin app: the fields of the peer and group forms, the
// usage bar of the peer list and page (its colour changes at 80 and 100 %), the quota's facts and the
// reset and grant actions on the peer's page. The inputs are named like the API's fields
// (quota.bytes, quota.period, ...), so a refusal lands next to its input; the byte count is typed
// in MB (1 MB = 1,048,576 bytes, as the app shows sizes).
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { NumberField, SelectField, useForm, type FieldForm } from '../../components/form';
import { Badge } from '../../components/ui';
import { fmtBytes, fmtDate, t } from '../../i18n';
import type { Peer, PeerResponse } from '../../protocol';
import './quotas.css';

type QuotaView = NonNullable<Peer['quota']>;
type QuotaState = NonNullable<Peer['quota_state']>;
export const MB = 1024 * 1024;

/** The form's value: quota.bytes holds MB while it is edited; no period = no quota. */
export interface QuotaValue {
  bytes: number | null;
  period: QuotaView['period'] | null;
  resets_on: number | null;
  action: QuotaView['action'];
  throttle_kbit: number | null;
}

export const quotaValues = (q: QuotaView | null | undefined): QuotaValue => ({
  bytes: q ? Math.round((q.bytes / MB) * 1000) / 1000 : null,
  period: q?.period ?? null,
  resets_on: q?.resets_on ?? null,
  action: q?.action ?? 'disable',
  throttle_kbit: q?.throttle_kbit ?? null,
});

/** What the API gets: no period chosen = null (no own quota). */
export function quotaBody(v: QuotaValue): QuotaView | null {
  if (!v.period) return null;
  return {
    // an empty amount goes as 0, which the server names at quota.bytes
    bytes: v.bytes === null ? 0 : Math.round(v.bytes * MB),
    period: v.period,
    resets_on: v.period === 'daily' ? null : v.resets_on,
    action: v.action,
    throttle_kbit: v.action === 'throttle' ? v.throttle_kbit : null,
  };
}

/** "1 GB per month", or "No quota". */
export function quotaText(q: QuotaView | null | undefined): string {
  if (!q) return t('quotas.none');
  return t('quotas.value', { bytes: fmtBytes(q.bytes), period: t(`quotas.per_${q.period}`) });
}

/** The quota fields, with a hint (on a peer: the group default it falls back to). */
export function QuotaFields(props: { form: FieldForm; hint: string; groupDefault?: QuotaView | null }) {
  const { form } = props;
  const period = form.get('quota.period') as QuotaValue['period'];
  const action = form.get('quota.action') as QuotaValue['action'];
  const periods = (['daily', 'weekly', 'monthly'] as const).map((p) => ({ value: p, label: t(`quotas.${p}`) }));
  const actions = (['disable', 'throttle'] as const).map((a) => ({ value: a, label: t(`quotas.${a}`) }));
  return (
    <fieldset class="quota-fields" data-testid="quota-field">
      <legend>{t('quotas.quota')}</legend>
      <div class="form-grid">
        <SelectField form={form} name="quota.period" label={t('quotas.period')} options={periods} empty={t('quotas.noQuota')} />
        {period && <NumberField form={form} name="quota.bytes" label={t('quotas.bytes')} min={0} step={0.001} />}
        {period && period !== 'daily' && (
          <NumberField
            form={form}
            name="quota.resets_on"
            label={t('quotas.resetsOn')}
            hint={t(period === 'weekly' ? 'quotas.resetsOnHintWeekly' : 'quotas.resetsOnHintMonthly')}
            min={1}
            max={period === 'weekly' ? 7 : 31}
          />
        )}
        {period && <SelectField form={form} name="quota.action" label={t('quotas.action')} options={actions} />}
        {period && action === 'throttle' && <NumberField form={form} name="quota.throttle_kbit" label={t('quotas.throttleKbit')} min={8} max={10000000} />}
      </div>
      <p class="hint">{props.hint}</p>
    </fieldset>
  );
}

/** The peer form's hint: no own quota means the group's default (named when the chosen group has one). */
export function peerQuotaHint(groupQuota: QuotaView | null | undefined): string {
  return t('quotas.peerHint', { group: groupQuota ? t('quotas.groupHintText', { value: quotaText(groupQuota) }) : '' });
}

const levelOf = (s: QuotaState) => (s.percent >= 100 ? 'bad' : s.percent >= 80 ? 'warn' : 'ok');

/** Use against the quota as a bar with "used of limit (percent)"; nothing without a quota. */
export function QuotaBar(props: { state: Peer['quota_state']; compact?: boolean }) {
  const s = props.state;
  if (!s) return null;
  const level = levelOf(s);
  const pct = Math.min(100, Math.max(0, s.percent));
  const text = t('quotas.usage', { used: fmtBytes(s.used_bytes), limit: fmtBytes(s.limit_bytes), percent: String(s.percent) });
  return (
    <span class={`quota-bar ${level}${props.compact ? ' compact' : ''}`} data-testid="quota-bar" data-level={level} title={text}>
      <span
        class="quota-track"
        role="progressbar"
        aria-label={t('quotas.usageLabel', { percent: String(s.percent) })}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={pct}
      >
        <span class="quota-fill" style={{ width: `${pct}%` }} />
      </span>
      <span class="quota-text">{text}</span>
    </span>
  );
}

/** The facts of the peer page: the quota in force, its use this period, and the reset and grant actions. */
export function QuotaFacts(props: { peer: Peer; groupName?: string; groupQuota?: QuotaView | null; onChange: (p: Peer) => void }) {
  const p = props.peer;
  const s = p.quota_state;
  const q = p.quota ?? props.groupQuota ?? null;
  const [granting, setGranting] = useState(false);
  const form = useForm<{ bytes: number | null }>({ bytes: null });
  if (!q || !s) return <span data-testid="quota-facts">{t('quotas.none')}</span>;
  const reset = async () => {
    if (!(await confirmAction(t('quotas.confirmReset', { name: p.name }), { confirmLabel: t('quotas.reset'), danger: false }))) return;
    try {
      props.onChange((await api<PeerResponse>('POST', `/peers/${p.id}/quota/reset`)).peer);
      toast(t('quotas.resetToast', { name: p.name }));
    } catch (err) {
      toast((err as Error).message, 'bad');
    }
  };
  const grant = (e: Event) => {
    e.preventDefault();
    let saved: Peer | undefined;
    let bytes = 0;
    void form
      .submit(async (v) => {
        bytes = v.bytes === null ? 0 : Math.round(v.bytes * MB);
        saved = (await api<PeerResponse>('POST', `/peers/${p.id}/quota/grant`, { bytes })).peer;
      })
      .then((ok) => {
        if (!ok || !saved) return;
        toast(t('quotas.grantToast', { bytes: fmtBytes(bytes), name: p.name }));
        form.setAll({ bytes: null });
        setGranting(false);
        props.onChange(saved);
      });
  };
  return (
    <div class="quota-facts" data-testid="quota-facts">
      <p>
        {quotaText(q)} ({p.quota ? t('quotas.own') : t('quotas.fromGroup', { name: props.groupName ?? '' })}){' '}
        <Badge tone={levelOf(s)}>{t(`quotas.state_${s.state}`)}</Badge>
        {s.action_applied && (
          <>
            {' '}
            <Badge tone="bad">{t(`quotas.applied_${s.action_applied}`)}</Badge>
          </>
        )}
      </p>
      <QuotaBar state={s} />
      <p class="hint">
        {t('quotas.until', { date: fmtDate(s.period_end) })}
        {s.granted_bytes > 0 && ` · ${t('quotas.granted', { bytes: fmtBytes(s.granted_bytes) })}`}
      </p>
      <div class="quota-actions">
        <button type="button" class="btn small" onClick={reset}>
          {t('quotas.reset')}
        </button>
        <button type="button" class="btn small" aria-expanded={granting} onClick={() => setGranting(!granting)}>
          {t('quotas.grant')}
        </button>
      </div>
      {granting && (
        <form class="quota-grant" onSubmit={grant} noValidate>
          <NumberField form={form} name="bytes" label={t('quotas.grantBytes')} min={0} step={0.001} />
          <button type="submit" class="btn small primary" disabled={form.busy}>
            {t('quotas.grant')}
          </button>
        </form>
      )}
    </div>
  );
}
