// Who is signed in, loaded once at start from GET /api/v1/session and GET /api/v1/settings/app.
import { roleAtLeast, type Role } from '@gatehouse/common/roles.js';
import { api, get, setCsrf } from './api';
import { lang, type Lang } from './i18n';
import { createStore } from './store';
import { serverTheme, themeKnown, userTheme, type Theme } from './theme';
import type { AppSettings, AppSettingsResponse, SessionResponse, SessionUser } from './protocol';

export type User = SessionUser;
export type AppInfo = AppSettings;

export const user = createStore<User | null>(null);
export const appInfo = createStore<AppInfo | null>(null);

export async function loadSession(): Promise<void> {
  // Both at once: the first screen waits for the slower one, not for their sum.
  const [s, { app }] = await Promise.all([get<SessionResponse>('/session'), get<AppSettingsResponse>('/settings/app')]);
  const session = s.kind === 'session' ? s : null;
  setCsrf(session?.csrfToken ?? null);
  appInfo.set(app);
  serverTheme.set(app.default_theme === 'pro' ? 'pro' : 'default');
  if (session) {
    user.set(session.user);
    userTheme.set(session.user.theme === 'pro' || session.user.theme === 'default' ? session.user.theme : null);
  }
  themeKnown();
  lang.set(session?.user.language ?? app.default_language ?? 'en');
}

/** Whether the signed-in account's role is at least `least` (before the session is known: as an admin, the server decides). */
export const hasRole = (least: Role) => roleAtLeast(user.get()?.role ?? 'admin', least);
export const isAdmin = () => hasRole('admin');

export async function setLanguage(l: Lang): Promise<void> {
  lang.set(l);
  await api('POST', '/settings/language', { language: l });
  user.update((u) => (u ? { ...u, language: l } : u));
}

export async function setTheme(theme: Theme | null): Promise<void> {
  userTheme.set(theme);
  await api('PUT', '/settings/theme', { theme });
  user.update((u) => (u ? { ...u, theme } : u));
}
