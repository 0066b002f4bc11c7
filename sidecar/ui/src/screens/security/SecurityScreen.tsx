// Security settings: the sign-in lockout and the second-factor policy (GET/PUT /settings/security) and the accounts locked now
// (GET /users/locked for admin and route sign-ins) with unlock (POST /users/unlock).
import { useEffect } from 'preact/hooks';
import { api } from '../../api';
import { toast } from '../../components/dialog';
import { CheckField, FormErrors, NumberField, SubmitButton, useForm } from '../../components/form';
import { DataTable } from '../../components/table';
import { Card, EmptyState, ErrorBanner, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { fmtDate, t, useLang } from '../../i18n';
import '../../components/admin.css';

import type { Locked, LockedResponse, LockoutResponse } from '../../protocol';

type Kind = 'admin' | 'route_auth';

export default function SecurityScreen() {
  useLang();
  useTitle(t('security.title'));
  const settings = useApi<LockoutResponse>('/settings/security');
  const form = useForm<{ lockout: { max_attempts: number | null; duration: number | null } }>({ lockout: { max_attempts: null, duration: null } });
  useEffect(() => {
    if (settings.data) form.setAll({ lockout: { ...settings.data.lockout } });
  }, [settings.data]);
  const reloadOn = ['activity_recorded', 'user_updated'];
  const admin = useApi<LockedResponse>('/users/locked?record_type=admin', reloadOn);
  const route = useApi<LockedResponse>('/users/locked?record_type=route_auth', reloadOn);
  const rows = [
    ...(admin.data?.locked ?? []).map((l) => ({ ...l, kind: 'admin' as Kind })),
    ...(route.data?.locked ?? []).map((l) => ({ ...l, kind: 'route_auth' as Kind })),
  ];
  const unlock = async (r: Locked & { kind: Kind }) => {
    try {
      await api('POST', '/users/unlock', { username: r.identifier, record_type: r.kind });
      toast(t('security.unlocked', { name: r.identifier }));
      admin.reload();
      route.reload();
    } catch (e) {
      toast(String((e as Error).message), 'bad');
    }
  };
  return (
    <>
      <PageHeader title={t('security.title')} />
      <ErrorBanner
        error={settings.error ?? admin.error ?? route.error}
        onRetry={() => {
          settings.reload();
          admin.reload();
          route.reload();
        }}
      />
      <Card title={t('security.lockout')}>
        <p class="muted">{t('security.lockoutText')}</p>
        {!settings.data ? (
          !settings.error && <Spinner />
        ) : (
          <form
            noValidate
            onSubmit={async (e) => {
              e.preventDefault();
              const ok = await form.submit((v) => api('PUT', '/settings/security', { lockout: v.lockout }));
              if (ok) {
                toast(t('security.saved'));
                settings.reload();
              }
            }}
          >
            <FormErrors form={form} />
            <div class="form-grid">
              <NumberField form={form} name="lockout.max_attempts" label={t('security.maxAttempts')} min={1} max={100} required />
              <NumberField form={form} name="lockout.duration" label={t('security.duration')} min={1} max={1440} required />
            </div>
            <div class="form-actions">
              <SubmitButton form={form} label={t('common.save')} />
            </div>
          </form>
        )}
      </Card>
      {settings.data && <SecondFactorPolicy required={settings.data.second_factor.required} onSaved={settings.reload} />}
      <Card title={t('security.locked')}>
        {!admin.data || !route.data ? (
          !admin.error && !route.error && <Spinner />
        ) : (
          <DataTable
            label={t('security.locked')}
            rows={rows}
            rowKey={(r) => `${r.kind}:${r.identifier}`}
            empty={<EmptyState title={t('security.noneLocked')} text={t('security.noneLockedText')} />}
            columns={[
              { key: 'account', label: t('security.account'), render: (r) => <strong>{r.identifier}</strong> },
              { key: 'kind', label: t('security.kind'), render: (r) => t(`security.kind_${r.kind}`) },
              { key: 'until', label: t('security.until'), render: (r) => fmtDate(r.locked_until) },
              {
                key: 'actions',
                label: t('common.actions'),
                render: (r) => (
                  <button type="button" class="btn small" aria-label={`${t('security.unlock')}: ${r.identifier}`} onClick={() => unlock(r)}>
                    {t('security.unlock')}
                  </button>
                ),
              },
            ]}
          />
        )}
      </Card>
    </>
  );
}

/** Whether every account needs a second factor (accounts without one enrol at their next sign-in). */
function SecondFactorPolicy(props: { required: boolean; onSaved: () => void }) {
  const form = useForm({ required: props.required });
  useEffect(() => form.setAll({ required: props.required }), [props.required]);
  return (
    <Card title={t('security.secondFactor')}>
      <p class="muted">{t('security.secondFactorText')}</p>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          const ok = await form.submit((v) => api('PUT', '/settings/security', { second_factor: { required: v.required } }));
          if (ok) {
            toast(t('security.secondFactorSaved'));
            props.onSaved();
          }
        }}
      >
        <FormErrors form={form} />
        <CheckField form={form} name="required" label={t('security.secondFactorRequired')} hint={t('security.secondFactorHint')} />
        <div class="form-actions">
          <SubmitButton form={form} label={t('common.save')} />
        </div>
      </form>
    </Card>
  );
}
