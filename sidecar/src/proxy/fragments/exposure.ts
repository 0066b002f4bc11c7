// Exposure in Caddy (pure): an internal route (routes/exposure.ts) answers clients whose connection
// does not come from the tunnel subnet or a gateway's routed LAN with the admin's choice, before
// anything else of the route runs (ACL, IP filter, route auth, the proxy). A public route renders
// nothing here.
//
// The check is Caddy's remote_ip matcher on the connection's own source address, never a forwarded
// header (X-Forwarded-For, X-Real-IP, a trusted proxy's client_ip): anyone can write those headers,
// and a proxy in front of Gatehouse relays outsiders, so a header could only ever widen who gets in.
// A connection's source address cannot be chosen from outside the tunnel: the answers to a forged
// source go into the tunnel, so neither a TCP nor a QUIC handshake completes. It costs Caddy one
// prefix lookup per request and the sidecar nothing.
//
// The answers: not_found → Gatehouse's 404 page (error-pages.ts unknown_host: what a name nothing
// serves gets, so the route's presence is not told); page → the admin's page with status 403 (HTML
// when it starts with <, else plain text; every brace escaped so Caddy's replacer sends it as
// written); redirect → a 302 to the admin's URL, no-store (a 301 would be cached by the browser and
// keep sending the visitor away after they connect to the VPN).
import type { CaddyHandler, CaddyRoute } from '../caddy-json.js';
import { isHtmlPage, type ExposureFields } from '../../routes/exposure.js';
import { errorAnswerRoutes } from './error-pages.js';
import { escapePlaceholders } from './redirects.js';
import { remoteIpMatcher } from './protection.js';

const HEADERS = { 'Cache-Control': ['no-store'], 'X-Content-Type-Options': ['nosniff'] };

/** What an internal route answers outsiders. */
export function outsiderAnswer(r: Pick<ExposureFields, 'exposure_answer' | 'exposure_page' | 'exposure_redirect_url'>): CaddyHandler {
  if (r.exposure_answer === 'page' && r.exposure_page) {
    const type = isHtmlPage(r.exposure_page) ? 'text/html; charset=utf-8' : 'text/plain; charset=utf-8';
    return { handler: 'static_response', status_code: 403, headers: { 'Content-Type': [type], ...HEADERS }, body: escapePlaceholders(r.exposure_page) };
  }
  if (r.exposure_answer === 'redirect' && r.exposure_redirect_url) {
    return {
      handler: 'static_response',
      status_code: 302,
      headers: { Location: [escapePlaceholders(r.exposure_redirect_url)], 'Cache-Control': ['no-store'] },
    };
  }
  return { handler: 'subroute', routes: errorAnswerRoutes('unknown_host') };
}

/**
 * The route placed first in an internal route's host entry: every request whose connection source is
 * outside `internalRanges` (the tunnel subnet and the active gateways' routed LANs) gets the
 * outsider answer. [] for a public route.
 */
export function exposureRoutes(r: ExposureFields, internalRanges: readonly string[] | undefined): CaddyRoute[] {
  if (r.exposure !== 'internal') return [];
  const handle = [outsiderAnswer(r)];
  return [internalRanges?.length ? { match: [{ not: [remoteIpMatcher(internalRanges)] }], handle } : { handle }];
}
