// The default site's stored form: one row of the settings table (key `default_site`, JSON of
// DefaultSite), so it travels in backups with the settings. Read by the redirects service and,
// inside the render transaction, by the proxy snapshot (proxy/snapshot.ts).
import { DEFAULT_SITE, type DefaultSite } from './schema.js';

export const DEFAULT_SITE_SETTING = 'default_site';

/** The stored default site, parsed; the default when none is stored or it cannot be read. */
export function parseDefaultSite(value: string | null | undefined): DefaultSite {
  if (!value) return { ...DEFAULT_SITE };
  try {
    const v = JSON.parse(value) as Partial<DefaultSite>;
    const mode = v.mode === 'redirect' || v.mode === 'custom_html' ? v.mode : 'default';
    return {
      mode,
      redirect_url: typeof v.redirect_url === 'string' ? v.redirect_url : null,
      html: typeof v.html === 'string' ? v.html : null,
    };
  } catch {
    return { ...DEFAULT_SITE };
  }
}
