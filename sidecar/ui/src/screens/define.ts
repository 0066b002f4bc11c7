// The shape of a screen's meta.ts (apart from registry.ts, which loads every meta.ts eagerly: a
// meta.ts importing the registry would be a cycle).
import type { ComponentType } from 'preact';

export interface ScreenProps {
  params: Record<string, string>;
  query: URLSearchParams;
}
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
