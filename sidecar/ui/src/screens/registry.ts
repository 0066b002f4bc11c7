// The extension point for screens: each folder src/screens/<name>/ holds meta.ts (eagerly loaded:
// paths and navigation entry), i18n.ts (its strings) and the screen component, loaded on first
// visit so the initial JavaScript stays small. A new screen needs no edit anywhere else.
import type { ComponentType } from 'preact';
import { matchPath } from '../router';

export interface ScreenProps { params: Record<string, string>; query: URLSearchParams }
export interface ScreenMeta {
  id: string;
  /** Path patterns, first is the canonical one: ['/peers', '/peers/:id']. */
  paths: string[];
  /** i18n key of the page title. */
  title: string;
  /** Shown in the navigation when set; lower order first, grouped by section. */
  nav?: { section: 'main' | 'access' | 'system' | 'account'; order: number; icon: string };
  /** Only for admins (role admin); hidden and refused for others. */
  adminOnly?: boolean;
  load: () => Promise<{ default: ComponentType<ScreenProps> }>;
}
export const defineScreen = (m: ScreenMeta): ScreenMeta => m;

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
