// Themes `default` and `pro`, each with a light and a dark variant. The user's own theme choice
// (PUT /settings/theme) wins over the server-wide default (PUT /settings/default-theme); null means
// "use the default". Light or dark is this browser's choice (the top bar's switch): 'system' follows
// the operating system (prefers-color-scheme, also when it changes), 'light' and 'dark' stay as
// chosen; remembered in localStorage and applied before the first paint by public/scheme.js, which
// also applies the last theme seen here. The stylesheet keys on <html data-theme> and
// <html data-scheme="light|dark">.
import { createStore } from './store';

export type Theme = 'default' | 'pro';
export const THEMES: Theme[] = ['default', 'pro'];
export const serverTheme = createStore<Theme>('default');
export const userTheme = createStore<Theme | null>(null);

export type Scheme = 'system' | 'light' | 'dark';
export const SCHEMES: Scheme[] = ['system', 'light', 'dark'];
const SCHEME_KEY = 'gatehouse.scheme';
const THEME_KEY = 'gatehouse.theme';

function stored(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}
function store(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    /* storage blocked: the choice lasts until the page is left */
  }
}

const initial = stored(SCHEME_KEY);
export const scheme = createStore<Scheme>(initial === 'light' || initial === 'dark' ? initial : 'system');
const systemDark = window.matchMedia('(prefers-color-scheme: dark)');

/** Whether the server's and the user's theme are known (loadSession called themeKnown). */
let known = false;
/** Called once the session is loaded: from then on data-theme is the server's answer, not the last one seen here. */
export function themeKnown(): void {
  known = true;
  apply();
}

function apply(): void {
  const root = document.documentElement;
  if (known) {
    const theme = userTheme.get() ?? serverTheme.get();
    root.dataset.theme = theme;
    store(THEME_KEY, theme);
  } else root.dataset.theme ??= serverTheme.get();
  const s = scheme.get();
  root.dataset.scheme = s === 'dark' || (s === 'system' && systemDark.matches) ? 'dark' : 'light';
}
serverTheme.subscribe(apply);
userTheme.subscribe(apply);
scheme.subscribe((s) => {
  store(SCHEME_KEY, s);
  apply();
});
systemDark.addEventListener('change', apply);
apply();
