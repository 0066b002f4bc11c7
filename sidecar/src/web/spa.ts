// Serves the admin single-page app (sidecar/ui, built by Vite into sidecar/ui/dist) on port 3000:
// - /assets/<hashed name>: immutable, cached for a year (a new build has new names); JavaScript,
//   CSS and SVG gzipped (once, kept in memory) for browsers that accept it;
// - other files at the top of dist (favicon.svg): cached for an hour;
// - every other GET that nothing else answered (history fallback: /peers/12, /routes?q=x):
//   index.html for browsers (Accept: text/html), never cached, with a strict Content-Security-Policy, for a signed-in user;
//   others are sent to /login?next=<the path they asked for>, and a user who must first replace a
//   generated password to /password?next=<the path>.
// Runs as a `late` middleware: the API, /login, /logout and the route-auth pages come first.
import { readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import type Koa from 'koa';
import type { Deps } from '../deps.js';
import { passwordChangePath, sessionUser } from './index.js';

/** src/web/spa.ts and dist/web/spa.js both sit two levels below sidecar/. */
export const DEFAULT_UI_DIR = fileURLToPath(new URL('../../ui/dist/', import.meta.url));

export const SPA_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};
/** Paths that belong to the server, never to the app's history fallback. */
const SERVER_PATHS = /^\/(api|login|logout|password|api-docs)(\/|$)/;
const SAFE_NAME = /^[\w.-]+$/;
const COMPRESSIBLE = new Set(['.js', '.css', '.svg', '.json', '.map', '.txt']);

function securityHeaders(ctx: Koa.Context): void {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('X-Frame-Options', 'DENY');
}

async function fileOrNull(path: string): Promise<Buffer | null> {
  try {
    if (!(await stat(path)).isFile()) return null;
    return await readFile(path);
  } catch {
    return null;
  }
}

export function spaMiddleware(deps: Deps, uiDir = process.env.GATEHOUSE_UI_DIR || DEFAULT_UI_DIR): Koa.Middleware {
  let index: Buffer | null = null;
  const cache = new Map<string, { raw: Buffer; gz: Buffer | null }>();
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || ctx.body !== undefined || SERVER_PATHS.test(ctx.path)) return next();
    const segs = ctx.path.split('/').filter(Boolean);
    // Static files: /assets/<name> and /<name> at the top of dist (not index.html).
    const isAsset = segs.length === 2 && segs[0] === 'assets' && SAFE_NAME.test(segs[1]);
    const isTop = segs.length === 1 && SAFE_NAME.test(segs[0]) && segs[0] !== 'index.html' && extname(segs[0]) !== '';
    if (isAsset || isTop) {
      const file = join(uiDir, ...segs);
      let entry = cache.get(file);
      if (!entry) {
        const raw = await fileOrNull(file);
        if (!raw) return next();
        entry = { raw, gz: COMPRESSIBLE.has(extname(file)) && raw.length > 1024 ? gzipSync(raw, { level: 9 }) : null };
        cache.set(file, entry);
      }
      const gzip = entry.gz !== null && ctx.acceptsEncodings('gzip', 'identity') === 'gzip';
      ctx.vary('Accept-Encoding');
      if (gzip) ctx.set('Content-Encoding', 'gzip');
      const buf = gzip ? entry.gz! : entry.raw;
      securityHeaders(ctx);
      ctx.type = TYPES[extname(file)] ?? 'application/octet-stream';
      ctx.set('Cache-Control', isAsset ? 'public, max-age=31536000, immutable' : 'public, max-age=3600');
      ctx.body = buf;
      return;
    }
    // The history fallback is for browsers navigating (Accept: text/html); an API client asking an
    // unknown path keeps the JSON 404.
    if (segs.some((s) => s.startsWith('.')) || extname(ctx.path) !== '' || !(ctx.get('Accept') || '').includes('text/html')) return next();
    const user = await sessionUser(deps, ctx);
    securityHeaders(ctx);
    if (user?.must_change_password) {
      ctx.set('Cache-Control', 'no-store');
      return ctx.redirect(passwordChangePath(ctx.originalUrl));
    }
    if (!user) {
      const target = ctx.path === '/' ? '' : `?next=${encodeURIComponent(ctx.path + (ctx.querystring ? `?${ctx.querystring}` : ''))}`;
      ctx.set('Cache-Control', 'no-store');
      return ctx.redirect(`/login${target}`);
    }
    index ??= await fileOrNull(join(uiDir, 'index.html'));
    ctx.set('Cache-Control', 'no-cache');
    if (!index) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = `The admin UI is not built (no ${join(uiDir, 'index.html')}): run \`npm run build\`. The JSON API works without it: /api/v1/openapi.json\n`;
      return;
    }
    ctx.set('Content-Security-Policy', SPA_CSP);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = index;
  };
}
