// Redirect hosts and the default site (pure; redirects/ owns the rows and the setting).
//
// A redirect host is one host-map entry, the same on the HTTP and the HTTPS server: a
// static_response with the host's status code (301, 302, 307, 308) and a Location header. With
// preserve_path the request's path and query follow the target ({http.request.uri}); without it
// every request goes to the target as it is. Its certificate comes like a route's (an exact name on
// demand, a wildcard up front; fragments/servers.ts tlsApp).
//
// The default site is the host maps' `fallback` (caddy-modules/hostroute): what a request gets whose
// Host no route, redirect host or the admin domain has. It is part of the frame (the module cannot
// change it at run time), so changing it is a full load.
// - default: Gatehouse's 404 page (fragments/error-pages.ts reason unknown_host: English or German,
//   JSON for JSON clients);
// - redirect: a 302 to the URL, no-store;
// - custom_html: the admin's HTML with status 404, Content-Type text/html; charset=utf-8, nosniff.
//   Caddy expands `{…}` placeholders in a static body, so every brace is escaped (`\{`, `\}`): the
//   page is sent exactly as written and cannot echo request data or read files.
// On the HTTPS port an unknown name has no certificate (the on-demand permission allows only the
// names in the map), so the TLS handshake fails before any HTTP answer; the fallback answers there
// only for a name with a certificate but a Host header nothing serves.
import type { CaddyHandler, HostEntry } from '../caddy-json.js';
import type { DefaultSite } from '../../redirects/schema.js';
import { errorAnswerRoutes } from './error-pages.js';

/** What the renderer needs of a redirect host (a row of redirect_hosts). */
export interface RedirectTarget {
  domain: string;
  target_url: string;
  preserve_path: boolean;
  status_code: number;
  enabled: boolean;
}

/** The Location of a redirect host: the target, with the request's path and query appended when it preserves them. */
export function redirectLocation(r: Pick<RedirectTarget, 'target_url' | 'preserve_path'>): string {
  const target = escapePlaceholders(r.target_url);
  return r.preserve_path ? `${target.replace(/\/+$/, '')}{http.request.uri}` : target;
}

export function redirectHostEntry(r: RedirectTarget): HostEntry {
  return {
    routes: [{ handle: [{ handler: 'static_response', status_code: r.status_code, headers: { Location: [redirectLocation(r)] } }] }],
  };
}

/** A text with every brace escaped, so that Caddy's replacer leaves it as it is. */
export function escapePlaceholders(s: string): string {
  return s.replace(/[{}]/g, (c) => `\\${c}`);
}

/** The host maps' fallback for a default site (undefined: none, the module's own plain 404). */
export function defaultSiteEntry(site: DefaultSite | undefined): HostEntry | undefined {
  if (!site) return undefined;
  if (site.mode === 'redirect' && site.redirect_url) {
    const h: CaddyHandler = {
      handler: 'static_response',
      status_code: 302,
      headers: { Location: [escapePlaceholders(site.redirect_url)], 'Cache-Control': ['no-store'] },
    };
    return { routes: [{ handle: [h] }] };
  }
  if (site.mode === 'custom_html' && site.html) {
    const h: CaddyHandler = {
      handler: 'static_response',
      status_code: 404,
      headers: { 'Content-Type': ['text/html; charset=utf-8'], 'X-Content-Type-Options': ['nosniff'], 'Cache-Control': ['no-store'] },
      body: escapePlaceholders(site.html),
    };
    return { routes: [{ handle: [h] }] };
  }
  return { routes: errorAnswerRoutes('unknown_host') };
}
