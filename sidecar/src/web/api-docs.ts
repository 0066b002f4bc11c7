// GET /api-docs: the browsable API reference for signed-in users, rendered in the browser by Swagger
// UI (the swagger-ui-dist package, served from node_modules under /api-docs/assets/, never from a
// CDN) from GET /api/v1/openapi.json. Why Swagger UI: docs/contributing/design-notes.md. The page carries a
// header with a link back to the UI and a "create token" shortcut (/tokens?new=1, which the UI's
// tokens screen opens its create dialog from). "Try it out" calls the API with the session cookie;
// the page's script adds the session's CSRF token to writes.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';
import type Koa from 'koa';
import type { Deps } from '../deps.js';
import { nextParam } from '../auth/next.js';
import { escapeHtml, pickLang, sessionUser, type Lang } from './index.js';

export const API_DOCS_PATH = '/api-docs';
export const API_DOCS_ASSETS = '/api-docs/assets/';

/**
 * The page's Content-Security-Policy: scripts and stylesheets only from this origin (the viewer's
 * bundle and stylesheet and the page's own, no inline script or style, no eval), requests only to
 * this origin. Swagger UI runs under it as it is (its React styles are set through the DOM, which
 * style-src does not restrict), checked in Chromium with every operation's "Try it out".
 */
export const API_DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const T = {
  en: {
    title: 'API reference',
    back: 'Gatehouse',
    token: 'Create token',
    doc: 'OpenAPI document',
    noscript: 'The API reference needs JavaScript. The document itself is at',
  },
  de: {
    title: 'API-Referenz',
    back: 'Gatehouse',
    token: 'Token erstellen',
    doc: 'OpenAPI-Dokument',
    noscript: 'Die API-Referenz braucht JavaScript. Das Dokument selbst liegt unter',
  },
} satisfies Record<Lang, unknown>;

/** Starts Swagger UI on #swagger-ui with the sidecar's document; writes carry the session's CSRF token. */
const INIT_JS = `(function () {
  'use strict';
  var csrf = null;
  fetch('/api/v1/csrf', { credentials: 'same-origin', headers: { accept: 'application/json' } })
    .then(function (r) { return r.ok ? r.json() : null; })
    .then(function (d) { csrf = d && d.csrfToken; })
    .catch(function () { csrf = null; });
  window.ui = SwaggerUIBundle({
    url: '/api/v1/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    // Sections start collapsed, with a filter box: with every section expanded ('list') Swagger UI
    // rendered only the first section of our document (140 operations) and nothing after it.
    docExpansion: 'none',
    filter: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    validatorUrl: null,
    tryItOutEnabled: false,
    requestInterceptor: function (req) {
      var m = (req.method || 'GET').toUpperCase();
      if (csrf && m !== 'GET' && m !== 'HEAD') req.headers['X-CSRF-Token'] = csrf;
      return req;
    }
  });
})();
`;

const PAGE_CSS = `body{margin:0;font-family:system-ui,sans-serif;background:#fff;color:#1d2330}
.gh-bar{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;padding:.7rem 1.2rem;background:#1d2330;color:#fff}
.gh-bar a{color:#fff;text-decoration:none}.gh-bar a:hover,.gh-bar a:focus-visible{text-decoration:underline}
.gh-bar h1{font-size:1.1rem;margin:0 auto 0 0;font-weight:600}
.gh-bar .gh-btn{background:#2456d3;padding:.45rem .9rem;border-radius:4px}
.gh-bar a:focus-visible{outline:2px solid #9cb7ff;outline-offset:2px}
.gh-noscript{padding:1rem 1.2rem}`;

interface Asset {
  url: string;
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

/** The viewer's files and the page's own, each under a content-hashed name (so they can be cached for good). */
export interface ApiDocsAssets {
  css: string;
  pageCss: string;
  bundle: string;
  init: string;
  icon: string;
  byUrl: Map<string, Asset>;
}

let cached: ApiDocsAssets | undefined;

/** Where swagger-ui-dist is installed. */
export function swaggerUiDir(): string {
  return path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

export function apiDocsAssets(): ApiDocsAssets {
  if (cached) return cached;
  const dir = swaggerUiDir();
  const byUrl = new Map<string, Asset>();
  const add = (name: string, ext: string, type: string, body: Buffer): string => {
    const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 12);
    const url = `${API_DOCS_ASSETS}${name}.${hash}.${ext}`;
    byUrl.set(url, { url, type, body, gzip: zlib.gzipSync(body, { level: 9 }), etag: `"${hash}"` });
    return url;
  };
  cached = {
    css: add('swagger-ui', 'css', 'text/css; charset=utf-8', fs.readFileSync(path.join(dir, 'swagger-ui.css'))),
    bundle: add('swagger-ui-bundle', 'js', 'text/javascript; charset=utf-8', fs.readFileSync(path.join(dir, 'swagger-ui-bundle.js'))),
    pageCss: add('page', 'css', 'text/css; charset=utf-8', Buffer.from(PAGE_CSS)),
    init: add('init', 'js', 'text/javascript; charset=utf-8', Buffer.from(INIT_JS)),
    icon: add('favicon', 'png', 'image/png', fs.readFileSync(path.join(dir, 'favicon-32x32.png'))),
    byUrl,
  };
  return cached;
}

/** The page (pure: golden-testable); `assets` names the hashed asset URLs. */
export function renderApiDocsPage(lang: Lang, assets: Pick<ApiDocsAssets, 'css' | 'pageCss' | 'bundle' | 'init' | 'icon'>): string {
  const t = T[lang];
  const a = (u: string) => escapeHtml(u);
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${t.title} · Gatehouse</title>
<link rel="icon" type="image/png" href="${a(assets.icon)}"><link rel="stylesheet" href="${a(assets.css)}"><link rel="stylesheet" href="${a(assets.pageCss)}"></head>
<body><header class="gh-bar"><a href="/">← ${t.back}</a><h1>${t.title}</h1><a href="/api/v1/openapi.json">${t.doc}</a><a class="gh-btn" href="/tokens?new=1">${t.token}</a></header>
<noscript><p class="gh-noscript">${t.noscript} <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p></noscript>
<main id="swagger-ui"></main>
<script src="${a(assets.bundle)}"></script><script src="${a(assets.init)}"></script></body></html>`;
}

export function apiDocsMiddleware(deps: Deps): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path.startsWith(API_DOCS_ASSETS)) {
      const asset = apiDocsAssets().byUrl.get(ctx.path);
      if (!asset) {
        // The prefix is the viewer's: an unknown (or outdated) file name is a plain 404.
        ctx.status = 404;
        ctx.type = 'text/plain; charset=utf-8';
        ctx.body = 'not found\n';
        return;
      }
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Vary', 'Accept-Encoding');
      ctx.set('ETag', asset.etag);
      ctx.type = asset.type;
      if (ctx.get('If-None-Match') === asset.etag) {
        ctx.status = 304;
        return;
      }
      if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
        ctx.set('Content-Encoding', 'gzip');
        ctx.body = asset.gzip;
      } else {
        ctx.body = asset.body;
      }
      return;
    }
    if (ctx.path !== API_DOCS_PATH) return next();
    const user = await sessionUser(deps, ctx);
    if (!user) return ctx.redirect(`/login${nextParam(ctx.originalUrl, '?')}`);
    if (user.must_change_password) return ctx.redirect(`/password${nextParam(ctx.originalUrl, '?')}`);
    ctx.set('Content-Security-Policy', API_DOCS_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderApiDocsPage(user.language ?? pickLang(ctx.get('Accept-Language')), apiDocsAssets());
  };
}
