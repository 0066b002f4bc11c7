// Branded error answers of the proxy (pure): what a visitor gets instead of Caddy's empty 502 when a
// route's target cannot serve the request. One small HTML page in English or German (the first
// language of Accept-Language), or a JSON error body for clients that ask for JSON (Accept names
// application/json and not text/html). Nothing of the backend is shown: no address, no port, no
// upstream error text.
//
//   reason                status  when
//   peer_offline          502     the route's peer is disabled, expired or gone (rendered into the
//                                 host), or the tunnel does not answer: the dial times out / finds
//                                 no route (server `errors` routes)
//   gateway_offline       502     the same for a gateway route (the companion does not answer)
//   upstream_unreachable  502     the peer answers but nothing accepts the connection on the port
//   upstream_timeout      504     the upstream accepted but did not answer in time
//   circuit_open          503     the route's circuit breaker is open (its Retry-After is kept)
//   unknown_host          404     no route or redirect host serves the host name (the default site
//                                 in mode default, fragments/redirects.ts)
//
// The errors come from reverse_proxy (Caddy maps dial and transport errors to 502, timeouts to
// 504) and from gatehouse_circuit_breaker (open_as_error: a 503 "circuit breaker open"). They reach the HTTP servers' `errors` routes (errorRoutes) unless a host has its own:
// gateway routes do (gatewayHostErrors), so their dial failures say "gateway".
import type { CaddyHandler, CaddyRoute, Json } from '../caddy-json.js';

export type ErrorReason = 'peer_offline' | 'gateway_offline' | 'upstream_unreachable' | 'upstream_timeout' | 'circuit_open' | 'unknown_host';
type Lang = 'en' | 'de';

interface Text {
  title: string;
  message: string;
}

export const ERROR_STATUS: Record<ErrorReason, number> = {
  peer_offline: 502,
  gateway_offline: 502,
  upstream_unreachable: 502,
  upstream_timeout: 504,
  circuit_open: 503,
  unknown_host: 404,
};

const TEXTS: Record<ErrorReason, Record<Lang, Text>> = {
  unknown_host: {
    en: { title: 'Page not found', message: 'No site is served at this address. Please check the address you entered.' },
    de: { title: 'Seite nicht gefunden', message: 'Unter dieser Adresse wird keine Seite bereitgestellt. Bitte prüfen Sie die eingegebene Adresse.' },
  },
  peer_offline: {
    en: { title: 'Device offline', message: 'The device that serves this address is not connected right now. Please try again later.' },
    de: { title: 'Gerät offline', message: 'Das Gerät, das diese Adresse bereitstellt, ist gerade nicht verbunden. Bitte versuchen Sie es später erneut.' },
  },
  gateway_offline: {
    en: { title: 'Gateway offline', message: 'The gateway through which this address is served is not connected right now. Please try again later.' },
    de: {
      title: 'Gateway offline',
      message: 'Das Gateway, über das diese Adresse erreichbar ist, ist gerade nicht verbunden. Bitte versuchen Sie es später erneut.',
    },
  },
  upstream_unreachable: {
    en: {
      title: 'Service unavailable',
      message: 'The device is connected, but the service behind this address does not accept connections. Please try again later.',
    },
    de: {
      title: 'Dienst nicht erreichbar',
      message: 'Das Gerät ist verbunden, aber der Dienst hinter dieser Adresse nimmt keine Verbindungen an. Bitte versuchen Sie es später erneut.',
    },
  },
  upstream_timeout: {
    en: { title: 'No answer in time', message: 'The service behind this address did not answer in time. Please try again later.' },
    de: { title: 'Keine Antwort', message: 'Der Dienst hinter dieser Adresse hat nicht rechtzeitig geantwortet. Bitte versuchen Sie es später erneut.' },
  },
  circuit_open: {
    en: {
      title: 'Service paused',
      message: 'The service behind this address failed repeatedly and is paused for a moment (circuit breaker open). Please try again shortly.',
    },
    de: {
      title: 'Dienst pausiert',
      message: 'Der Dienst hinter dieser Adresse ist wiederholt ausgefallen und pausiert kurz (Circuit Breaker offen). Bitte versuchen Sie es gleich erneut.',
    },
  },
};

/** The HTML page of a reason in a language (a fixed text: no placeholder, nothing from the request). */
export function errorPageHtml(reason: ErrorReason, lang: Lang): string {
  const t = TEXTS[reason][lang];
  const status = ERROR_STATUS[reason];
  return (
    `<!doctype html>\n<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${status} · ${t.title}</title><style>` +
    'body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:#f4f5f7;color:#1f2933;font:16px/1.5 system-ui,sans-serif}' +
    'main{max-width:32rem;margin:1rem;padding:2rem;background:#fff;border-radius:12px;box-shadow:0 2px 12px rgba(0,0,0,.08)}' +
    'h1{margin:0 0 .5rem;font-size:1.4rem}p{margin:0 0 1rem}small{color:#7b8794}' +
    `</style></head><body><main><h1>${t.title}</h1><p>${t.message}</p><small>${status} · Gatehouse</small></main></body></html>\n`
  );
}

/** The JSON body of a reason: the API's error shape, with the reason as `error`. */
export function errorJson(reason: ErrorReason): string {
  return `${JSON.stringify({ ok: false, error: reason, message: TEXTS[reason].en.message })}\n`;
}

/** Requests that want JSON: Accept names application/json (or +json) and not text/html. */
const JSON_CLIENT: Json = {
  header_regexp: { Accept: { pattern: '(?i)application/([a-z.+-]*\\+)?json' } },
  not: [{ header_regexp: { Accept: { pattern: '(?i)text/html' } } }],
};
/** German first in Accept-Language (`de`, `de-DE`, `de-AT;q=…`). */
const GERMAN: Json = { header_regexp: { 'Accept-Language': { pattern: '(?i)^\\s*de([-;,\\s]|$)' } } };

function respond(reason: ErrorReason, body: string, type: string): CaddyHandler {
  return {
    handler: 'static_response',
    status_code: ERROR_STATUS[reason],
    headers: { 'Content-Type': [type], 'Cache-Control': ['no-store'], 'X-Content-Type-Options': ['nosniff'] },
    body,
  };
}

/** The answer of one reason as a route list: JSON clients, then German, then English. */
export function errorAnswerRoutes(reason: ErrorReason): CaddyRoute[] {
  return [
    { match: [JSON_CLIENT], handle: [respond(reason, errorJson(reason), 'application/json')] },
    { match: [GERMAN], handle: [respond(reason, errorPageHtml(reason, 'de'), 'text/html; charset=utf-8')] },
    { handle: [respond(reason, errorPageHtml(reason, 'en'), 'text/html; charset=utf-8')] },
  ];
}

/** Dial failures that mean "the tunnel does not answer" (the peer or gateway is not connected). */
const TUNNEL_DOWN = '(?i)(i/o timeout|timed out|no route to host|host is unreachable|network is unreachable)';
/** The message of gatehouse_circuit_breaker's error while open (caddy-modules/circuitbreaker ErrOpen). */
export const CIRCUIT_OPEN_MESSAGE = 'circuit breaker open';
const status = (code: number): Json => ({ vars: { '{http.error.status_code}': [String(code)] } });

function errorRoute(match: Json, reason: ErrorReason): CaddyRoute {
  return { match: [match], handle: [{ handler: 'subroute', routes: errorAnswerRoutes(reason) }] };
}

/**
 * The `errors` routes of the HTTP servers: a 502 whose dial timed out or found no route → peer
 * offline, any other 502 → nothing accepts the connection, 504 → no answer in time, the circuit
 * breaker's 503 → paused. Other errors keep Caddy's default answer. (A subroute per reason: error answers are rare, so compiling one per
 * answer costs nothing that matters, and a config load provisions the pages once per server.)
 */
export function errorRoutes(): { routes: CaddyRoute[] } {
  return {
    routes: [
      errorRoute({ ...status(502), vars_regexp: { '{http.error.message}': { pattern: TUNNEL_DOWN } } }, 'peer_offline'),
      errorRoute(status(502), 'upstream_unreachable'),
      errorRoute(status(504), 'upstream_timeout'),
      errorRoute({ vars: { '{http.error.status_code}': ['503'], '{http.error.message}': [CIRCUIT_OPEN_MESSAGE] } }, 'circuit_open'),
    ],
  };
}

/** The host-level `errors` of a gateway route: any 502 means the gateway's companion does not answer. */
export function gatewayHostErrors(): { routes: CaddyRoute[] } {
  return { routes: [errorRoute(status(502), 'gateway_offline')] };
}
