// One-time config links: the admin API under /api/v1/peers/:id/config-links and the public link
// itself, /c/:token (a page on GET, the download on POST).
import type Koa from 'koa';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import { PAGE_CSP, pickLang } from '../web/index.js';
import type { ConfigLinksService } from './service.js';
import { createLinkBody, linkCreatedResponse, linkRevokedResponse, linksResponse, linkTokenParams } from './schema.js';
import { renderLinkPage } from './page.js';

/** Where a link points: /c/<token>. */
export const LINK_PATH = '/c/:token';

const GONE: Record<string, number> = { used: 410, expired: 410, revoked: 410, unknown: 404 };

function pageHeaders(ctx: Koa.Context): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'same-origin'); // no-referrer would make the page's form post send Origin: null (refused as foreign)
  ctx.set('X-Robots-Tag', 'noindex, nofollow');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Content-Security-Policy', PAGE_CSP);
}

export function configLinkEndpoints(deps: AppContext, links: () => ConfigLinksService): Endpoint[] {
  const tags = ['peers'];
  const errors = {
    '404': 'no such link (the token is not one of ours): a page (browsers) or {ok:false, error}',
    '410': 'the link was used, has expired or was revoked: a page that says which (browsers) or {ok:false, error, state}',
  };
  const refused = (ctx: Koa.Context, state: keyof typeof GONE, action: string) => {
    pageHeaders(ctx);
    ctx.status = GONE[state];
    if (ctx.accepts('html', 'json') === 'json') {
      ctx.body = { ok: false, error: state === 'unknown' ? 'No such link' : `This link was ${state === 'used' ? 'already used' : state}`, state };
      return;
    }
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderLinkPage(pickLang(ctx.get('accept-language')), { state: state as 'used' }, action);
  };
  return [
    defineEndpoint({
      method: 'GET',
      path: '/peers/:id/config-links',
      tags,
      response: linksResponse,
      summary:
        "The peer's one-time config links, newest first: state (active, used, expired, revoked), expiry, when and from where it was used. Never the link itself",
      handler: async ({ params }) => ({ links: await links().list(params.id) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/peers/:id/config-links',
      tags,
      status: 201,
      body: createLinkBody,
      response: linkCreatedResponse,
      secrets: "a link that gives the peer's WireGuard private key (its config) to whoever opens it first",
      summary:
        "A one-time link to the peer's config (shown once), to send to the person who sets the peer up: opening it shows a download button, the download uses it up, later visits get 410. 404 for an unknown peer, 409 when the peer has no stored key",
      handler: async ({ params, body }, ctx) => {
        const { link, token } = await links().create(params.id, body, actingUserId(ctx.state.principal));
        const path = LINK_PATH.replace(':token', token);
        const origin = deps.config.adminDomain ? `https://${deps.config.adminDomain}` : ctx.origin;
        ctx.set('Cache-Control', 'no-store');
        return { link, url: `${origin}${path}`, path };
      },
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/peers/:id/config-links/:linkId',
      tags,
      response: linkRevokedResponse,
      summary: 'Revoke a link that was not used yet (a used, expired or revoked link is answered as it is)',
      handler: async ({ params }, ctx) => ({ link: await links().revoke(params.id, params.linkId, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: LINK_PATH,
      auth: 'public',
      rateLimit: 'link',
      tags,
      params: linkTokenParams,
      pages: true,
      errors,
      rawResponse: {
        contentType: 'text/html',
        description: "The link's page: whose config it gives, until when, and the download button. Opening it does not use it up",
      },
      summary: 'A one-time config link (no sign-in): the page with the download button',
      handler: async ({ params }, ctx) => {
        const found = await links().lookup(params.token);
        const action = ctx.path;
        if (found.state !== 'active') return refused(ctx, found.state, action);
        pageHeaders(ctx);
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = renderLinkPage(pickLang(ctx.get('accept-language')), found, action);
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: LINK_PATH,
      auth: 'public',
      rateLimit: 'link',
      sameOrigin: true,
      tags,
      params: linkTokenParams,
      pages: true,
      errors,
      rawResponse: {
        contentType: 'text/plain',
        description: "The peer's WireGuard config (wg-quick format) as an attachment named after the peer; the link is used up",
      },
      summary: 'Download through a one-time config link (no sign-in): the config once, then 410',
      handler: async ({ params }, ctx) => {
        const got = await links().redeem(params.token, String(ctx.state.clientIp ?? ctx.ip));
        if (!got.ok) return refused(ctx, got.state, ctx.path);
        pageHeaders(ctx);
        ctx.type = 'text/plain; charset=utf-8';
        ctx.attachment(got.filename);
        ctx.body = got.text;
      },
    }),
  ];
}
