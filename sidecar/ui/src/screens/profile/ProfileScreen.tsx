// The signed-in user's own settings: username, email, language (PUT /settings/profile), own theme
// or the server default (PUT /settings/theme), password change ({current, next}, PUT
// /settings/password), the two-factor sign-in (SecondFactorCard.tsx), the passkeys (PasskeysCard.tsx) and, for admins, the server-wide default theme (PUT /settings/default-theme).
import { useEffect } from 'preact/hooks';
import { api } from '../../api';
import { toast } from '../../components/dialog';
import { FormErrors, SelectField, SubmitButton, TextField, useForm } from '../../components/form';
import { Card, ErrorBanner, PageHeader, Spinner } from '../../components/ui';
import { useApi, useTitle } from '../../hooks';
import { lang, t, useLang } from '../../i18n';
import { appInfo, isAdmin, user } from '../../session';
import { serverTheme, userTheme, type Theme } from '../../theme';
import { useStore } from '../../store';
import '../../components/admin.css';
import { SecondFactorCard } from './SecondFactorCard';
import { PasskeysCard } from './PasskeysCard';

import type { ProfileBody, ProfileResponse } from '../../protocol';

type Profile = ProfileResponse['profile'];

const themeLabel = (th: Theme) => t(`profile.theme_${th}`);

export default function ProfileScreen() {
  useLang();
  useTitle(t('profile.title'));
  const { data, error, reload } = useApi<ProfileResponse>('/settings/profile');
  const p = data?.profile;
  return (
    <>
      <PageHeader title={t('profile.title')} />
      <ErrorBanner error={error} onRetry={reload} />
      {!p ? (
        !error && <Spinner />
      ) : (
        <div class="grid-2">
          <div>
            <AccountCard profile={p} onSaved={reload} />
            <PasswordCard />
            <SecondFactorCard />
            <PasskeysCard />
          </div>
          <div>
            <ThemeCard profile={p} />
            {isAdmin() && <DefaultThemeCard />}
          </div>
        </div>
      )}
    </>
  );
}

function AccountCard(props: { profile: Profile; onSaved: () => void }) {
  const form = useForm({ username: props.profile.username, email: props.profile.email ?? '', language: props.profile.language });
  return (
    <Card title={t('profile.account')}>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          const ok = await form.submit(async (v) => {
            const body: ProfileBody = { username: v.username, email: v.email.trim() ? v.email : null, language: v.language };
            const r = await api<ProfileResponse>('PUT', '/settings/profile', body);
            user.update((u) => (u ? { ...u, username: r.profile.username, email: r.profile.email, language: r.profile.language } : u));
            lang.set(r.profile.language);
          });
          if (ok) {
            toast(t('profile.saved'));
            props.onSaved();
          }
        }}
      >
        <FormErrors form={form} />
        <TextField form={form} name="username" label={t('profile.username')} required autoComplete="username" />
        <TextField form={form} name="email" type="email" label={t('profile.email')} autoComplete="email" />
        <SelectField
          form={form}
          name="language"
          label={t('profile.language')}
          options={[
            { value: 'en', label: 'English' },
            { value: 'de', label: 'Deutsch' },
          ]}
        />
        <div class="form-actions">
          <SubmitButton form={form} label={t('common.save')} />
        </div>
      </form>
    </Card>
  );
}

function ThemeCard(props: { profile: Profile }) {
  const server = useStore(serverTheme);
  const form = useForm<{ theme: string }>({ theme: props.profile.theme ?? '' });
  return (
    <Card title={t('profile.appearance')}>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          const ok = await form.submit(async (v) => {
            const theme = (v.theme || null) as Theme | null;
            await api('PUT', '/settings/theme', { theme });
            userTheme.set(theme);
            user.update((u) => (u ? { ...u, theme } : u));
          });
          if (ok) toast(t('profile.themeSaved'));
        }}
      >
        <FormErrors form={form} />
        <SelectField
          form={form}
          name="theme"
          label={t('profile.theme')}
          hint={t('profile.themeHint')}
          empty={t('profile.themeServer', { theme: themeLabel(server) })}
          options={(['default', 'pro'] as Theme[]).map((th) => ({ value: th, label: themeLabel(th) }))}
        />
        <div class="form-actions">
          <SubmitButton form={form} label={t('common.save')} />
        </div>
      </form>
    </Card>
  );
}

function PasswordCard() {
  const form = useForm({ current: '', next: '' });
  return (
    <Card title={t('profile.password')}>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          const ok = await form.submit((v) => api('PUT', '/settings/password', { current: v.current, next: v.next }));
          if (ok) {
            form.setAll({ current: '', next: '' });
            toast(t('profile.passwordChanged'));
          }
        }}
      >
        <FormErrors form={form} />
        <TextField form={form} name="current" type="password" label={t('profile.current')} required autoComplete="current-password" />
        <TextField form={form} name="next" type="password" label={t('profile.next')} hint={t('profile.nextHint')} required autoComplete="new-password" />
        <div class="form-actions">
          <SubmitButton form={form} label={t('profile.change')} />
        </div>
      </form>
    </Card>
  );
}

function DefaultThemeCard() {
  const info = useStore(appInfo);
  const form = useForm<{ default_theme: Theme }>({ default_theme: info?.default_theme === 'pro' ? 'pro' : 'default' });
  useEffect(() => {
    form.setAll({ default_theme: serverTheme.get() });
  }, []);
  return (
    <Card title={t('profile.server')}>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          const ok = await form.submit(async (v) => {
            await api('PUT', '/settings/default-theme', { theme: v.default_theme });
            serverTheme.set(v.default_theme);
            appInfo.update((a) => (a ? { ...a, default_theme: v.default_theme } : a));
          });
          if (ok) toast(t('profile.defaultSaved'));
        }}
      >
        <FormErrors form={form} />
        <SelectField
          form={form}
          name="default_theme"
          label={t('profile.defaultTheme')}
          hint={t('profile.defaultThemeHint')}
          options={(['default', 'pro'] as Theme[]).map((th) => ({ value: th, label: themeLabel(th) }))}
        />
        <div class="form-actions">
          <SubmitButton form={form} label={t('common.save')} />
        </div>
      </form>
    </Card>
  );
}
