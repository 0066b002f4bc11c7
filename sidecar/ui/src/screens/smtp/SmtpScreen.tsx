// SMTP settings (GET/PUT /smtp; the password is never returned, only password_set) and a test
// mail with the saved settings (POST /smtp/test: the mail server's refusal is shown as it came).
import { useEffect } from 'preact/hooks';
import { api } from '../../api';
import { toast } from '../../components/dialog';
import { CheckField, FormErrors, NumberField, SubmitButton, TextField, useForm } from '../../components/form';
import { Card, ErrorBanner, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { t, useLang } from '../../i18n';
import '../../components/admin.css';

import type { MayBeEmpty, SmtpBody, SmtpResponse } from '../../protocol';

export default function SmtpScreen() {
  useLang();
  useTitle(t('smtp.title'));
  const { data, error, reload } = useApi<SmtpResponse>('/smtp');
  const form = useForm({ host: '', port: 587 as number | null, secure: false, user: '', password: '', remove_password: false, from: '' });
  const test = useForm({ to: '' });
  useEffect(() => {
    const s = data?.smtp;
    if (s?.configured)
      form.setAll({ host: s.host ?? '', port: s.port, secure: s.secure, user: s.user ?? '', password: '', remove_password: false, from: s.from ?? '' });
  }, [data]);
  const s = data?.smtp;
  return (
    <>
      <PageHeader title={t('smtp.title')} />
      <ErrorBanner error={error} onRetry={reload} />
      {!s ? (
        !error && <Spinner />
      ) : (
        <>
          <Card title={t('smtp.server')}>
            <p class="muted">{t('smtp.intro')}</p>
            {!s.configured && <p class="banner info">{t('smtp.notConfigured')}</p>}
            <form
              noValidate
              onSubmit={async (e) => {
                e.preventDefault();
                const ok = await form.submit(async (v) => {
                  const body: MayBeEmpty<SmtpBody, 'port'> = { host: v.host, port: v.port, secure: v.secure, user: v.user, from: v.from };
                  if (v.remove_password) body.password = null;
                  else if (v.password) body.password = v.password;
                  await api('PUT', '/smtp', body);
                });
                if (ok) {
                  toast(t('smtp.saved'));
                  reload();
                }
              }}
            >
              <FormErrors form={form} />
              <div class="form-grid">
                <TextField form={form} name="host" label={t('smtp.host')} required />
                <NumberField form={form} name="port" label={t('smtp.port')} min={1} max={65535} required />
                <TextField form={form} name="user" label={t('smtp.user')} autoComplete="off" />
                <TextField
                  form={form}
                  name="password"
                  type="password"
                  label={t('smtp.password')}
                  autoComplete="new-password"
                  hint={s.password_set ? `${t('smtp.passwordSet')} ${t('smtp.passwordKeep')}` : undefined}
                />
                <TextField form={form} name="from" label={t('smtp.from')} hint={t('smtp.fromHint')} required />
              </div>
              <CheckField form={form} name="secure" label={t('smtp.secure')} hint={t('smtp.secureHint')} />
              {s.password_set && <CheckField form={form} name="remove_password" label={t('smtp.removePassword')} />}
              <div class="form-actions">
                <SubmitButton form={form} label={t('common.save')} />
              </div>
            </form>
          </Card>
          <Card title={t('smtp.test')}>
            <p class="muted">{s.configured ? t('smtp.testIntro') : t('smtp.saveFirst')}</p>
            <form
              noValidate
              onSubmit={async (e) => {
                e.preventDefault();
                const ok = await test.submit((v) => api('POST', '/smtp/test', { to: v.to }));
                if (ok) toast(t('smtp.sent', { to: test.values.to }));
              }}
            >
              <FormErrors form={test} />
              <TextField form={test} name="to" type="email" label={t('smtp.to')} required />
              <div class="form-actions">
                <button type="submit" class="btn primary" disabled={test.busy || !s.configured} aria-busy={test.busy}>
                  {test.busy ? t('smtp.sending') : t('smtp.send')}
                </button>
              </div>
            </form>
          </Card>
        </>
      )}
    </>
  );
}
