// The shape of a screen's meta.ts (apart from registry.ts, which loads every meta.ts eagerly: a
// meta.ts importing the registry would be a cycle).
import type { ComponentType } from 'preact';
import type { Role } from '@gatehouse/common/roles.js';

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
  /** The least role that opens it (default user): hidden from the navigation and refused for lower roles. */
  viewRole?: Role;
  /**
   * The least role that changes things on it (default admin), as the server's endpoint registry
   * decides (docs/guides/security.md): below it, the page's actions are hidden and it says "read-only".
   */
  writeRole?: Role;
  load: () => Promise<{ default: ComponentType<ScreenProps> }>;
}
export const defineScreen = (m: ScreenMeta): ScreenMeta => m;
