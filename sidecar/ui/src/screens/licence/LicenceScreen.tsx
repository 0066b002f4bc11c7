// The licence (GET /license): what applies now (status, plan, features, limits), what the community
// edition includes and what a licence adds (from the API's `community`), the stored licence
// (customer, expiry, last refresh, grace period); activate a key (POST /license/activate: a refused
// key's reason shows next to the field), refresh (POST /license/refresh), remove (DELETE /license,
// confirmed once). Reloads on licence_changed.
import { useState } from 'preact/hooks';
import { api } from '../../api';
import { confirmAction, toast } from '../../components/dialog';
import { FormErrors, SubmitButton, TextArea, useForm } from '../../components/form';
import { Badge, Card, ErrorBanner, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { fmtDate, t, useLang, word } from '../../i18n';
import '../../components/admin.css';
import './licence.css';

import type { Licence, LicenceResponse, RefreshResponse } from '../../protocol';

type Feature = Licence['features'][number];
const FEATURES: readonly Feature[] = ['internal_dns', 'remote_desktop', 'circuit_breaker', 'prometheus_metrics', 'cluster'];

const tone = (s: Licence['status']) => (s === 'active' ? 'ok' : s === 'grace' ? 'warn' : s === 'community' ? 'muted' : 'bad');
const limit = (n: number | null) => (n === null ? t('licence.noLimit') : String(n));

export default function LicenceScreen() {
  useLang();
  useTitle(t('licence.title'));
  const { data, error, reload } = useApi<LicenceResponse>('/license', ['licence_changed']);
  const form = useForm({ key: '' });
  const [busy, setBusy] = useState<'refresh' | 'remove' | null>(null);
  const l = data?.license;
  const inForce = l && (l.status === 'active' || l.status === 'grace');

  const refresh = async () => {
    setBusy('refresh');
    try {
      const r = await api<RefreshResponse>('POST', '/license/refresh');
      if (r.refresh.ok) toast(t('licence.refreshed'));
      else toast(t('licence.refreshFailed', { error: word(r.refresh.error_code, r.refresh.error ?? '') }), 'bad');
    } catch (err) {
      toast(String((err as Error).message), 'bad');
    } finally {
      setBusy(null);
      reload();
    }
  };
  const remove = async () => {
    if (!l?.licence || !(await confirmAction(t('licence.removeConfirm', { id: l.licence.id }), { danger: true, confirmLabel: t('licence.removeBtn') }))) return;
    setBusy('remove');
    try {
      await api('DELETE', '/license');
      toast(t('licence.removed'));
    } catch (err) {
      toast(String((err as Error).message), 'bad');
    } finally {
      setBusy(null);
      reload();
    }
  };

  return (
    <>
      <PageHeader title={t('licence.title')} />
      <ErrorBanner error={error} onRetry={reload} />
      {!l ? (
        !error && <Spinner />
      ) : (
        <>
          <Card title={t('licence.state')}>
            {l.grace && (
              <p class="banner warn" role="status">
                {t('licence.graceUntil', { date: fmtDate(l.grace.ends_at) })}
              </p>
            )}
            {l.licence && !inForce && (
              <p class="banner warn" role="status">
                {t('licence.notInForce')}
              </p>
            )}
            {!l.licence && <p class="muted">{t('licence.communityIntro')}</p>}
            <dl class="licence-kv" data-testid="licence-state">
              <dt>{t('licence.status')}</dt>
              <dd>
                <Badge tone={tone(l.status)}>{t(`licence.st_${l.status}`)}</Badge>
              </dd>
              <dt>{t('licence.plan')}</dt>
              <dd>{l.plan}</dd>
              {l.licence && (
                <>
                  <dt>{t('licence.customer')}</dt>
                  <dd>{l.licence.customer}</dd>
                </>
              )}
              {l.licence && (
                <>
                  <dt>{t('licence.id')}</dt>
                  <dd>{l.licence.id}</dd>
                </>
              )}
              <dt>{t('licence.features')}</dt>
              <dd>
                <ul class="licence-features">
                  {FEATURES.map((f) => (
                    <li key={f}>
                      <Badge tone={l.features.includes(f) ? 'ok' : 'muted'}>
                        {t(`licence.f_${f}`)}: {l.features.includes(f) ? t('licence.on') : t('licence.off')}
                      </Badge>
                    </li>
                  ))}
                </ul>
              </dd>
              <dt>{t('licence.limits')}</dt>
              <dd>
                {t('licence.maxPeers')}: {limit(l.limits.max_peers)} · {t('licence.maxRoutes')}: {limit(l.limits.max_routes)}
              </dd>
              {l.licence && (
                <>
                  <dt>{t('licence.expires')}</dt>
                  <dd>{l.licence.expires_at ? fmtDate(l.licence.expires_at) : t('licence.perpetual')}</dd>
                </>
              )}
              {l.licence && (
                <>
                  <dt>{t('licence.issued')}</dt>
                  <dd>{fmtDate(l.licence.issued_at)}</dd>
                </>
              )}
              {l.licence && (
                <>
                  <dt>{t('licence.activated')}</dt>
                  <dd>{fmtDate(l.licence.activated_at)}</dd>
                </>
              )}
              {l.licence && (
                <>
                  <dt>{t('licence.lastRefresh')}</dt>
                  <dd>{l.licence.last_refresh_at ? fmtDate(l.licence.last_refresh_at) : t('common.never')}</dd>
                </>
              )}
              {l.licence && l.refresh.url_configured && (
                <>
                  <dt>{t('licence.lastOk')}</dt>
                  <dd>{fmtDate(l.licence.last_ok_at)}</dd>
                </>
              )}
              {l.licence?.last_refresh_error && (
                <>
                  <dt>{t('licence.refreshError')}</dt>
                  <dd>{word(l.licence.last_refresh_error_code, l.licence.last_refresh_error)}</dd>
                </>
              )}
              {l.grace && (
                <>
                  <dt>{t('licence.grace')}</dt>
                  <dd>
                    {fmtDate(l.grace.since)} – {fmtDate(l.grace.ends_at)}
                  </dd>
                </>
              )}
            </dl>
          </Card>
          <Card title={t('licence.editions')}>
            <dl class="licence-kv" data-testid="licence-editions">
              <dt>{t('licence.communityIncludes')}</dt>
              <dd>
                <ul class="licence-features">
                  {FEATURES.filter((f) => l.community.features.includes(f)).map((f) => (
                    <li key={f}>
                      <Badge tone="ok">{t(`licence.f_${f}`)}</Badge>
                    </li>
                  ))}
                  <li>
                    <Badge tone="ok">{t('licence.noSizeLimits')}</Badge>
                  </li>
                </ul>
              </dd>
              <dt>{t('licence.licenceAdds')}</dt>
              <dd>
                <ul class="licence-features">
                  {FEATURES.filter((f) => !l.community.features.includes(f)).map((f) => (
                    <li key={f}>
                      <Badge tone="info">{t(`licence.f_${f}`)}</Badge>
                    </li>
                  ))}
                </ul>
              </dd>
            </dl>
          </Card>
          <Card title={t('licence.activate')}>
            <p class="muted">{t('licence.activateIntro')}</p>
            <form
              noValidate
              class="licence-key"
              onSubmit={async (e) => {
                e.preventDefault();
                let id = '';
                const ok = await form.submit(async (v) => {
                  const r = await api<LicenceResponse>('POST', '/license/activate', { key: v.key });
                  id = r.license.licence?.id ?? '';
                });
                if (ok) {
                  form.setAll({ key: '' });
                  toast(t('licence.activated_ok', { id }));
                  reload();
                }
              }}
            >
              <FormErrors form={form} />
              <TextArea form={form} name="key" label={t('licence.key')} rows={4} required />
              <div class="form-actions">
                <SubmitButton form={form} label={t('licence.activateBtn')} />
              </div>
            </form>
          </Card>
          {l.licence && (
            <Card title={t('licence.refresh')}>
              <p class="muted">
                {l.refresh.url_configured
                  ? `${t('licence.refreshIntroService')} (${t('licence.everyHours', { n: l.refresh.every_hours })}, ${t('licence.graceDays', { n: l.refresh.grace_days })})`
                  : t('licence.refreshIntroOffline')}
              </p>
              <div class="actions-line">
                <button type="button" class="btn" onClick={refresh} disabled={busy !== null} aria-busy={busy === 'refresh'}>
                  {busy === 'refresh' ? t('licence.refreshing') : t('licence.refreshBtn')}
                </button>
              </div>
            </Card>
          )}
          {l.licence && (
            <Card title={t('licence.remove')}>
              <p class="muted">{t('licence.removeIntro')}</p>
              <div class="actions-line">
                <button type="button" class="btn danger" onClick={remove} disabled={busy !== null} aria-busy={busy === 'remove'}>
                  {t('licence.removeBtn')}
                </button>
              </div>
            </Card>
          )}
        </>
      )}
    </>
  );
}
