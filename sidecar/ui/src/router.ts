// History-API routing: real paths (/peers/12), served by the sidecar's history fallback, so links
// can be opened in a new tab, bookmarked and shared. Screens register in src/screens/*/meta.ts.
import { createStore, useStore } from './store';

export interface Location {
  path: string;
  query: URLSearchParams;
}
const read = (): Location => ({ path: location.pathname, query: new URLSearchParams(location.search) });
export const loc = createStore<Location>(read());
addEventListener('popstate', () => loc.set(read()));

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  loc.set(read());
  if (!opts.replace) scrollTo(0, 0);
}

/** Change query parameters of the current path (list filters), replacing history by default. */
export function setQuery(changes: Record<string, string | number | null | undefined>, opts: { push?: boolean } = {}): void {
  const q = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === undefined || v === '') q.delete(k);
    else q.set(k, String(v));
  }
  const s = q.toString();
  navigate(location.pathname + (s ? `?${s}` : ''), { replace: !opts.push });
}

export const useLocation = () => useStore(loc);

/** '/peers/:id' against '/peers/12' → { id: '12' }; null when it does not match. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  if (p.length !== s.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) out[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return out;
}
