// Share links: the admin API under /api/v1/routes/:id/share-links (scope routes) and the setting of
// the longest expiry (/api/v1/settings/share-links). Thin: the rules live in ShareLinksService.
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import type { ShareLinksService } from './service.js';
import {
  createShareLinkBody,
  shareLinkCreatedResponse,
  shareLinkRevokedResponse,
  shareLinksResponse,
  shareSettingsBody,
  shareSettingsResponse,
} from './schema.js';

export function shareLinkEndpoints(_deps: AppContext, links: () => ShareLinksService): Endpoint[] {
  const tags = ['routes'];
  return [
    defineEndpoint({
      method: 'GET',
      path: '/routes/:id/share-links',
      tags,
      response: shareLinksResponse,
      summary:
        "The route's share links, newest first: state (active, expired, used_up, revoked), uses, max_uses, last_used_at, expires_at, path_prefix, note and who made it. Never the link itself",
      handler: async ({ params }) => ({ share_links: await links().list(params.id) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/routes/:id/share-links',
      tags,
      status: 201,
      body: createShareLinkBody,
      response: shareLinkCreatedResponse,
      secrets: 'a link that opens the protected route (under its path_prefix) without signing in, until it expires, is used up or revoked',
      summary:
        "A share link to a route with route auth or basic auth {expires_at, max_uses?, path_prefix?, note?}, shown once (`url`; only its hash is stored). Whoever opens it gets a session of this route only (and only under path_prefix) for the shorter of the link's remaining time and the route's session length (a basic-auth route: the link's remaining time), and skips the login or the basic-auth prompt. 404 unknown route, 409 neither route auth nor basic auth (or a wildcard domain), 422 expires_at in the past or beyond the setting max_expiry_days",
      handler: async ({ params, body }, ctx) => {
        const { link, url } = await links().create(params.id, body, actingUserId(ctx.state.principal) ?? undefined);
        ctx.set('Cache-Control', 'no-store');
        return { share_link: link, url };
      },
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/routes/:id/share-links/:linkId',
      tags,
      response: shareLinkRevokedResponse,
      summary: 'Revoke a share link: it opens nothing any more (its page says it was revoked) and the sessions opened with it end',
      handler: async ({ params }, ctx) => ({ share_link: await links().revoke(params.id, params.linkId, actingUserId(ctx.state.principal) ?? undefined) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/settings/share-links',
      tags: ['settings'],
      response: shareSettingsResponse,
      summary: 'Share-link settings: max_expiry_days, the longest a new share link may stay open (default 30)',
      handler: async () => ({ share_links: { max_expiry_days: await links().maxExpiryDays() } }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/settings/share-links',
      tags: ['settings'],
      body: shareSettingsBody,
      response: shareSettingsResponse,
      summary: 'Change the share-link settings {max_expiry_days (1 to 365)}; links made before keep their expiry',
      handler: async ({ body }, ctx) => ({
        share_links: { max_expiry_days: await links().setMaxExpiryDays(body.max_expiry_days, actingUserId(ctx.state.principal) ?? undefined) },
      }),
    }),
  ];
}
