// The frame around every screen: navigation that shows where you are (aria-current), a top bar with
// language, theme, light/dark, live state and sign-out, and a skip link. The navigation keeps its
// place while the page scrolls (its own scroll). Below 900 px the navigation folds behind a menu
// button and the language, theme and light/dark switches move into it: the top bar stays one row.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { getCsrf, inflight } from '../api';
import { LANGS, lang as langStore, t, useLang, type Lang } from '../i18n';
import { liveState } from '../live';
import { loc } from '../router';
import { screens, type ScreenMeta } from '../screens/registry';
import { hasRole, setLanguage, setTheme, user } from '../session';
import { useStore } from '../store';
import { scheme, SCHEMES, serverTheme, THEMES, userTheme, type Scheme, type Theme } from '../theme';
import { Icon } from './icons';
import { Link } from './ui';

const SECTIONS: NonNullable<ScreenMeta['nav']>['section'][] = ['main', 'access', 'system', 'account'];
const sectionKey = (s: string) => `shell.section${s[0].toUpperCase()}${s.slice(1)}`;

export function Layout(props: { active: string | null; children: ComponentChildren; readOnly?: boolean }) {
  useLang();
  const u = useStore(user);
  const busy = useStore(inflight) > 0;
  const live = useStore(liveState);
  const [open, setOpen] = useState(false);
  const path = useStore(loc).path;
  useEffect(() => setOpen(false), [path]);
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
          <div class="topbar-prefs">
            <Prefs />
          </div>
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
        <div class="nav-prefs">
          <Prefs />
        </div>
        {SECTIONS.map((section) => {
          const items = screens.filter((s) => s.nav?.section === section && hasRole(s.viewRole ?? 'user'));
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
      {/* read-only-page: the role may look at this page but not change it (styles.css hides the row actions) */}
      <main id="main" class={props.readOnly ? 'main read-only-page' : 'main'} tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}

/** Language, theme and light/dark: in the top bar on a wide screen, in the navigation below 900 px (styles.css shows one of the two). */
function Prefs() {
  useLang();
  const ut = useStore(userTheme);
  const st = useStore(serverTheme);
  const sc = useStore(scheme);
  const themeLabel = (x: Theme) => t(x === 'pro' ? 'shell.themePro' : 'shell.themeDefault');
  return (
    <>
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
      <label class="compact">
        <span class="sr-only">{t('shell.scheme')}</span>
        <select value={sc} onChange={(e) => scheme.set(e.currentTarget.value as Scheme)} aria-label={t('shell.scheme')}>
          {SCHEMES.map((x) => (
            <option key={x} value={x}>
              {t(`shell.scheme_${x}`)}
            </option>
          ))}
        </select>
      </label>
    </>
  );
}

export const langNames: Record<Lang, string> = { en: 'English', de: 'Deutsch' };
