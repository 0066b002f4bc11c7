// The frame around every screen: navigation that shows where you are (aria-current), a top bar with
// language, theme, live state and the user's menu, and a skip link. Below 900 px the navigation
// folds behind a menu button.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { getCsrf, inflight } from '../api';
import { LANGS, lang as langStore, t, useLang, type Lang } from '../i18n';
import { liveState } from '../live';
import { loc } from '../router';
import { screens, type ScreenMeta } from '../screens/registry';
import { isAdmin, setLanguage, setTheme, user } from '../session';
import { useStore } from '../store';
import { serverTheme, THEMES, userTheme, type Theme } from '../theme';
import { Icon } from './icons';
import { Link } from './ui';

const SECTIONS: NonNullable<ScreenMeta['nav']>['section'][] = ['main', 'access', 'system', 'account'];
const sectionKey = (s: string) => `shell.section${s[0].toUpperCase()}${s.slice(1)}`;

export function Layout(props: { active: string | null; children: ComponentChildren }) {
  useLang();
  const u = useStore(user);
  const busy = useStore(inflight) > 0;
  const live = useStore(liveState);
  const ut = useStore(userTheme);
  const st = useStore(serverTheme);
  const [open, setOpen] = useState(false);
  const path = useStore(loc).path;
  useEffect(() => setOpen(false), [path]);
  const admin = isAdmin();
  const themeLabel = (x: Theme) => t(x === 'pro' ? 'shell.themePro' : 'shell.themeDefault');
  return (
    <div class={`shell${open ? ' nav-open' : ''}`}>
      <a class="skip" href="#main">
        {t('shell.skip')}
      </a>
      <div class={`progress${busy ? ' on' : ''}`} aria-hidden="true" />
      <header class="topbar">
        <button type="button" class="btn icon menu" aria-expanded={open} aria-controls="nav" onClick={() => setOpen(!open)}>
          <span aria-hidden="true">☰</span>
          <span class="sr-only">{t('shell.menu')}</span>
        </button>
        <Link class="brand" href="/">
          Gatehouse
        </Link>
        <span class={`live live-${live}`} title={live === 'open' ? t('common.liveOn') : t('common.liveOff')}>
          <span class="dot" aria-hidden="true" />
          <span class="sr-only">{live === 'open' ? t('common.liveOn') : t('common.liveOff')}</span>
        </span>
        <div class="topbar-tools">
          <label class="compact">
            <span class="sr-only">{t('shell.language')}</span>
            <select value={langStore.get()} onChange={(e) => void setLanguage(e.currentTarget.value as Lang)} aria-label={t('shell.language')}>
              {LANGS.map((l) => (
                <option key={l} value={l}>
                  {l === 'de' ? 'Deutsch' : 'English'}
                </option>
              ))}
            </select>
          </label>
          <label class="compact">
            <span class="sr-only">{t('shell.theme')}</span>
            <select value={ut ?? ''} onChange={(e) => void setTheme((e.currentTarget.value || null) as Theme | null)} aria-label={t('shell.theme')}>
              <option value="">{t('shell.themeServer', { theme: themeLabel(st) })}</option>
              {THEMES.map((x) => (
                <option key={x} value={x}>
                  {themeLabel(x)}
                </option>
              ))}
            </select>
          </label>
          <a class="btn small ghost" href="/api-docs">
            {t('shell.apiDocs')}
          </a>
          <form method="post" action="/logout" class="logout">
            <input type="hidden" name="_csrf" value={getCsrf() ?? ''} />
            <button type="submit" class="btn small" title={u ? t('shell.signedInAs', { name: u.username }) : undefined}>
              {t('shell.signOut')}
            </button>
          </form>
        </div>
      </header>
      <nav id="nav" class="nav" aria-label={t('shell.navLabel')}>
        {SECTIONS.map((section) => {
          const items = screens.filter((s) => s.nav?.section === section && (!s.adminOnly || admin));
          if (!items.length) return null;
          return (
            <div class="nav-section" key={section}>
              <p class="nav-heading">{t(sectionKey(section))}</p>
              <ul>
                {items.map((s) => (
                  <li key={s.id}>
                    <Link href={s.paths[0]} aria-current={props.active === s.id ? 'page' : undefined}>
                      <Icon name={s.nav!.icon} />
                      {t(s.title)}
                    </Link>
                  </li>
                ))}
              </ul>
            </div>
          );
        })}
        {u && <p class="nav-user">{t('shell.signedInAs', { name: u.username })}</p>}
      </nav>
      <main id="main" class="main" tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}

export const langNames: Record<Lang, string> = { en: 'English', de: 'Deutsch' };
