// Admin API of route auth (scope `routes`): /routes/:id/auth (the configuration sub-resource, TOTP
// setup) and /routes/:id/branding/* (the login-page images). Thin: the rules live in RouteAuthService
// (ctx.routeAuth). Registered by the route-auth feature (route-auth/feature.ts).
import { msg } from '@gatehouse/common/messages/index.js';
import type Koa from 'koa';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { uploadedFile } from '../http/body.js';
import { actingUserId, type Principal } from '../http/auth.js';
import { validation } from '../util/errors.js';
import crypto from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  BRANDING_MAX_BYTES,
  previewQuery,
  routeAuthBody,
  routeAuthDeletedResponse,
  routeAuthOrNullResponse,
  routeAuthResponse,
  totpSetupBody,
  totpSetupResponse,
  totpVerifyBody,
} from './schema.js';
import type { BrandingKind } from './branding.js';
import { pickLang } from '../web/index.js';
import { renderPage } from '../web/route-auth/page.js';

export function routeAuthEndpoints(deps: AppContext): Endpoint[] {
  const svc = () => deps.routeAuth;
  const actor = (ctx: { state: { principal?: Principal } }) => actingUserId(ctx.state.principal) ?? undefined;
  const tags = ['routes'];

  const branding = (kind: BrandingKind, seg: string): Endpoint[] => [
    defineEndpoint({
      method: 'POST',
      path: `/routes/:id/branding/${seg}`,
      response: routeAuthResponse,
      tags,
      summary: `Upload the login-page ${kind === 'logo' ? 'logo' : 'background image'} (multipart field "file"; PNG, JPEG, GIF or WebP by content, SVG refused; at most ${BRANDING_MAX_BYTES} bytes). Needs a saved route auth configuration`,
      multipart: { field: 'file', maxBytes: BRANDING_MAX_BYTES },
      handler: async ({ params }, ctx: Koa.Context) => {
        const routeId = params.id;
        await svc().get(routeId); // 404 for an unknown route before looking at the upload
        const file = uploadedFile(ctx);
        if (!file) throw validation(msg('request.file_required'), { file: msg('field.required') });
        return { route_auth: await svc().setBranding(routeId, kind, file.buffer, actor(ctx)) };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: `/routes/:id/branding/${seg}`,
      tags,
      summary: `The stored login-page ${kind === 'logo' ? 'logo' : 'background image'} (404 when none): the image itself, for the admin UI and the login-page preview`,
      rawResponse: { contentType: 'image/*', description: 'The image (PNG, JPEG, GIF or WebP)' },
      handler: async ({ params }, ctx) => {
        const img = await svc().brandingImage(params.id, kind);
        ctx.set('X-Content-Type-Options', 'nosniff');
        ctx.set('Content-Security-Policy', "default-src 'none'");
        ctx.set('Cache-Control', 'private, no-cache');
        ctx.type = img.mime;
        ctx.body = await readFile(img.file);
      },
    }),
    defineEndpoint({
      method: 'DELETE',
      path: `/routes/:id/branding/${seg}`,
      response: routeAuthResponse,
      tags,
      summary: `Remove the login-page ${kind === 'logo' ? 'logo' : 'background image'}`,
      handler: async ({ params }, ctx) => ({ route_auth: await svc().deleteBranding(params.id, kind, actor(ctx)) }),
    }),
  ];

  return [
    defineEndpoint({
      method: 'GET',
      path: '/routes/:id/auth',
      response: routeAuthOrNullResponse,
      tags,
      summary:
        "The route auth configuration of a route (route_auth: null when none), with `users`: the route's user_ids who can also sign in ({user_id, username, email, totp_active, totp_setup_pending}); the password and TOTP secrets are never returned",
      handler: async ({ params }) => ({ route_auth: await svc().get(params.id) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/routes/:id/auth',
      response: routeAuthResponse,
      tags,
      body: routeAuthBody,
      summary:
        'Create or replace the route auth configuration {method, two_factor_enabled?, two_factor_method?, email, password, session_max_age (ms: 1h, 12h, 24h, 7d, 30d), title?, description?, primary_color?, bg_color?, logo_url?, bg_image_url?}. HTTP routes only, not with basic auth. A new password, email, method or second factor ends all sessions of the route',
      handler: async ({ body, params }, ctx) => ({ route_auth: await svc().save(params.id, body, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/routes/:id/auth',
      response: routeAuthDeletedResponse,
      tags,
      summary: 'Remove route auth from a route; all its sessions end',
      handler: async ({ params }, ctx) => ({ deleted: await svc().remove(params.id, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/routes/:id/auth/totp-setup',
      secrets: 'the new TOTP secret of the route (or of one of its users), the second factor once verified',
      response: totpSetupResponse,
      tags,
      body: totpSetupBody,
      summary:
        'Start TOTP setup for a saved route auth configuration, or with {user_id} for that user of the route (one of its user_ids): {secret, otpauth_url, qr_code (PNG data URL)}; active after totp-verify',
      handler: async ({ body, params }, ctx) => svc().totpSetup(params.id, actor(ctx), body.user_id),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/routes/:id/auth/totp-verify',
      response: routeAuthResponse,
      tags,
      body: totpVerifyBody,
      summary: 'Confirm TOTP setup with a current code {token, user_id?} (±1 step of 30 s accepted); activates TOTP',
      handler: async ({ body, params }, ctx) => ({ route_auth: await svc().totpVerify(params.id, body.token, actor(ctx), body.user_id) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/routes/:id/auth/preview',
      tags,
      query: previewQuery,
      summary:
        "The route-auth login page as a visitor will see it, rendered with branding values not saved yet (title, description, primary_color, bg_color; an empty value clears, a missing one keeps the stored value), the stored images, and the first step of `method` (or `step`). Works before a configuration is saved. An HTML page that may be framed by the admin app only (frame-ancestors 'self'); its forms do not submit",
      rawResponse: { contentType: 'text/html', description: 'The login page (HTML)' },
      handler: async ({ params, query }, ctx) => {
        const p = await svc().preview(params.id, query);
        const nonce = crypto.randomBytes(16).toString('base64');
        ctx.set(
          'Content-Security-Policy',
          `default-src 'none'; style-src 'self' 'nonce-${nonce}'; img-src 'self'; form-action 'none'; frame-ancestors 'self'; base-uri 'none'`,
        );
        ctx.set('X-Frame-Options', 'SAMEORIGIN');
        ctx.set('X-Content-Type-Options', 'nosniff');
        ctx.set('Referrer-Policy', 'no-referrer');
        ctx.set('Cache-Control', 'no-store');
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = renderPage({
          lang: query.lang ?? pickLang(ctx.get('accept-language')),
          domain: p.domain,
          branding: p.branding,
          step: p.step,
          csrf: '',
          rd: '/',
          nonce,
          accounts: p.accounts,
          preview: true,
          imageBase: `/api/v1/routes/${params.id}/branding`,
        });
      },
    }),
    ...branding('logo', 'logo'),
    ...branding('bg_image', 'bg-image'),
  ];
}
