// The extension point for screens: each folder src/screens/<name>/ holds meta.ts (eagerly loaded:
// paths and navigation entry), i18n.ts (its strings) and the screen component, loaded on first
// visit so the initial JavaScript stays small. A new screen needs no edit anywhere else.
import { matchPath } from '../router';
import type { ScreenMeta } from './define';

export type { ScreenMeta, ScreenProps } from './define';
export { defineScreen } from './define';

const metas = import.meta.glob<ScreenMeta>('./*/meta.ts', { eager: true, import: 'default' });
export const screens: ScreenMeta[] = Object.values(metas).sort((a, b) => (a.nav?.order ?? 999) - (b.nav?.order ?? 999));

export function findScreen(path: string): { screen: ScreenMeta; params: Record<string, string> } | null {
  const p = path === '/' ? '/dashboard' : path.replace(/\/+$/, '');
  for (const screen of screens) {
    for (const pattern of screen.paths) {
      const params = matchPath(pattern, p);
      if (params) return { screen, params };
    }
  }
  return null;
}
