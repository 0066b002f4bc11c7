// GET /route-auth/share?t=<token>: a share link opened on its route's domain (Caddy forwards it with
// the other route-auth pages, proxy/fragments/route-auth.ts PAGE_PATHS). Mounted as early middleware
// ahead of the route-auth pages (features.ts order), exactly this path; every other path goes on.
//
// - an active link: one use counted, the route-auth session cookie set (limited to the route and the
//   link's path prefix; share-links/service.ts), and 303 to the prefix (or /): the token leaves the
//   address bar at once, so the backend, its logs and any Referer only ever see the plain path. The
//   answer itself carries Referrer-Policy: no-referrer.
// - a visitor who already has a full session of the route keeps it: 303 to the prefix, no use counted.
// - HEAD, and a link-preview fetcher (a chat or social app unfurling the link: LINK_PREVIEW_AGENTS),
//   gets a neutral 200 page and no cookie, and no use is counted: a link for one use sent in a chat
//   still opens for the person it was sent to.
// - revoked (410), expired (410), used up (410), unknown token (404): the route's branded page that
//   says which, with a link to the login page (none on a basic-auth route); never the bare login form.
// - a route with basic auth and no route auth works the same (AuthView's share-only entry): the
//   session cookie then lets Caddy skip the basic auth (proxy/fragments/route-auth.ts).
import crypto from 'node:crypto';
import type Koa from 'koa';
import type { RouteAuthService } from '../route-auth/service.js';
import { cookieLine } from '../route-auth/http.js';
import { hostName } from '../route-auth/verify.js';
import type { RouteEntry } from '../route-auth/view.js';
import { pickLang } from '../web/index.js';
import { renderPage } from '../web/route-auth/page.js';
import type { ErrorKey, Lang, NoticeKey } from '../web/route-auth/i18n.js';
import { SHARE_PATH, type ShareLinksService } from './service.js';

const REFUSED: Record<string, { status: number; error: ErrorKey }> = {
  unknown: { status: 404, error: 'share_unknown' },
  expired: { status: 410, error: 'share_expired' },
  used_up: { status: 410, error: 'share_used_up' },
  revoked: { status: 410, error: 'share_revoked' },
};

/**
 * User agents of link-preview fetchers (chat and social apps that fetch a link to show a preview):
 * Slack, Facebook/Messenger/iMessage (facebookexternalhit, Facebot), X/Twitter, WhatsApp (and
 * Signal, which fetches as WhatsApp/…), Telegram, Discord, LinkedIn, Microsoft Teams/Skype
 * (SkypeUriPreview), the Mattermost, Rocket.Chat and Zulip servers, Pinterest, Reddit, Embedly and
 * Iframely. Only their fetchers' names: the desktop apps' own browsers do not match.
 */
export const LINK_PREVIEW_AGENTS =
  /Slackbot|Slack-ImgProxy|facebookexternalhit|Facebot|Twitterbot|WhatsApp\/|TelegramBot|Discordbot|LinkedInBot|SkypeUriPreview|MicrosoftPreview|Mattermost-Bot|Rocket\.Chat\+|ZulipURLPreview|Pinterestbot|redditbot|Embedly|Iframely/i;

function headers(ctx: Koa.Context, nonce: string): void {
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'self' 'nonce-${nonce}'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Robots-Tag', 'noindex, nofollow');
  ctx.set('Cache-Control', 'no-store');
}

function page(ctx: Koa.Context, status: number, entry: RouteEntry | null, lang: Lang, error: ErrorKey | null, loginLink: boolean, notice?: NoticeKey): void {
  const nonce = crypto.randomBytes(16).toString('base64');
  headers(ctx, nonce);
  const c = entry && !entry.shareOnly ? entry.cfg : null;
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = renderPage({
    lang,
    domain: hostName(ctx.get('host')) || entry?.route.domain || '',
    branding: c
      ? {
          title: c.title,
          description: c.description,
          primary_color: c.primary_color,
          bg_color: c.bg_color,
          logo: c.logo,
          bg_image: c.bg_image,
          version: c.updated_at,
        }
      : null,
    step: 'message',
    csrf: '',
    rd: '/',
    nonce,
    error: error ?? undefined,
    notice,
    loginLink,
  });
}

export function shareLinkMiddleware(routeAuth: RouteAuthService, links: () => ShareLinksService): Koa.Middleware {
  const view = routeAuth.view;
  return async (ctx, next) => {
    if (ctx.path !== SHARE_PATH) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, HEAD');
      ctx.body = 'Method not allowed';
      return;
    }
    const lang = pickLang(ctx.get('accept-language'));
    const routeDomain = ctx.get('x-route-domain').toLowerCase();
    const host = ctx.get('host');
    const entry = routeDomain ? await view.domain(routeDomain) : await view.host(hostName(host));
    if (!entry) return page(ctx, 404, null, lang, 'not_configured', false);
    const ip = (ctx.state.clientIp as string) || '';
    if (entry.ip && !entry.ip.matcher.allows(entry.ip.mode, ip)) return page(ctx, 403, entry, lang, 'forbidden', false);
    // a HEAD or a link preview: a neutral page, no use counted, no cookie
    if (ctx.method === 'HEAD' || LINK_PREVIEW_AGENTS.test(ctx.get('user-agent'))) return page(ctx, 200, entry, lang, null, false, 'share_preview');
    const token = typeof ctx.query.t === 'string' ? ctx.query.t : '';
    const current = await routeAuth.activeSession(entry.route.id, ctx.cookies.get(entry.cookieName));
    const r = current && !current.pathPrefix ? null : await links().open(entry, token, { ip, userAgent: ctx.get('user-agent') });
    // a basic-auth route has no login page to point to: the page says the link no longer works, nothing more
    if (r && !r.ok) return page(ctx, REFUSED[r.state].status, entry, lang, REFUSED[r.state].error, !entry.shareOnly);
    headers(ctx, crypto.randomBytes(16).toString('base64'));
    if (r?.ok) ctx.append('Set-Cookie', cookieLine(entry.cookieName, r.token, { path: '/', maxAgeMs: r.maxAgeMs, secure: ctx.cookies.secure }));
    ctx.status = 303;
    ctx.set('Location', r?.ok ? r.location : '/');
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = 'See Other';
  };
}
