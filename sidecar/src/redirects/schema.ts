// Request and response schemas of the redirect hosts API and of the default site setting (zod).
import { z } from 'zod';
import { ignoringReadOnly, storedResourceFields } from '../http/input.js';
import { text } from '../http/fields.js';
import { httpUrl } from '../http/http-url.js';
import { domainSchema } from '../routes/schema.js';
import { description } from '../peers/schema.js';

export const REDIRECT_STATUS_CODES = [301, 302, 307, 308] as const;
export type RedirectStatus = (typeof REDIRECT_STATUS_CODES)[number];
/** The largest custom 404 page, in characters. */
export const CUSTOM_HTML_MAX = 65536;
export { httpUrl };

const statusCode = z
  .union(
    REDIRECT_STATUS_CODES.map((c) => z.literal(c)),
    { error: 'must be 301, 302, 307 or 308' },
  )
  .meta({ description: '301 (moved permanently), 302 (found), 307 (temporary, keeps the method) or 308 (permanent, keeps the method)' });

const targetUrl = httpUrl(
  'where to send visitors: an absolute http(s) URL such as https://www.example.com/ (no { or }, no user name or password). With preserve_path the request path and query are appended to it, so it must have no query or fragment then',
);

/** A redirect host as the API shows it. */
export const redirectHostView = z.object({
  id: z.number().int(),
  domain: z.string(),
  target_url: z.string(),
  preserve_path: z.boolean(),
  status_code: z.number().int(),
  enabled: z.boolean(),
  description: z.string().nullable(),
  created_at: z.string().meta({ format: 'date-time' }),
  updated_at: z.string().meta({ format: 'date-time' }),
});
export type RedirectHostView = z.infer<typeof redirectHostView>;

const writable = {
  domain: domainSchema,
  target_url: targetUrl,
  preserve_path: z
    .boolean({ error: 'must be true or false' })
    .meta({ description: "append the request's path and query to target_url (default true); false: every request goes to target_url as it is" }),
  status_code: statusCode,
  enabled: z.boolean({ error: 'must be true or false' }),
  description: description.nullable(),
};

export const createBody = z.strictObject({
  domain: writable.domain,
  target_url: writable.target_url,
  preserve_path: writable.preserve_path.optional(),
  status_code: writable.status_code.optional().meta({ description: 'default 301' }),
  enabled: writable.enabled.optional().meta({ description: 'default true' }),
  description: writable.description.optional(),
});
export type RedirectHostInput = z.output<typeof createBody>;

/** What PUT /redirect-hosts/:id accepts and ignores besides the writable fields. */
export const REDIRECT_READ_ONLY = storedResourceFields('redirect host');
export const updateBody = ignoringReadOnly(
  z.strictObject({
    domain: writable.domain.optional(),
    target_url: writable.target_url.optional(),
    preserve_path: writable.preserve_path.optional(),
    status_code: writable.status_code.optional(),
    enabled: writable.enabled.optional(),
    description: writable.description.optional(),
  }),
  REDIRECT_READ_ONLY,
);
export type RedirectHostPatch = z.output<typeof updateBody>;

export const redirectHostsResponse = z.object({ ok: z.literal(true), redirect_hosts: z.array(redirectHostView) });
export const redirectHostResponse = z.object({ ok: z.literal(true), redirect_host: redirectHostView });
export const redirectHostDeletedResponse = z.object({ ok: z.literal(true), deleted: z.object({ id: z.number().int(), domain: z.string() }) });

// --- the default site: what a request for a host name that nothing serves gets ---

export const DEFAULT_SITE_MODES = ['default', 'redirect', 'custom_html'] as const;
export type DefaultSiteMode = (typeof DEFAULT_SITE_MODES)[number];

export const defaultSiteView = z.object({
  mode: z.enum(DEFAULT_SITE_MODES).meta({
    description: "default: Gatehouse's short 404 page | redirect: a 302 to redirect_url | custom_html: html with status 404 (text/html; charset=utf-8)",
  }),
  redirect_url: z.string().nullable(),
  html: z.string().nullable(),
});
export type DefaultSite = z.infer<typeof defaultSiteView>;
export const DEFAULT_SITE: DefaultSite = { mode: 'default', redirect_url: null, html: null };

export const defaultSiteBody = z
  .strictObject({
    mode: z.enum(DEFAULT_SITE_MODES, { error: 'must be default, redirect or custom_html' }),
    redirect_url: httpUrl(
      'an absolute http(s) URL such as https://www.example.com/ (no { or }): required with mode redirect; kept (unused) with the other modes; absent: left as it is',
    )
      .nullable()
      .optional(),
    html: text({ max: CUSTOM_HTML_MAX, multiline: true, trim: false })
      .nullable()
      .optional()
      .meta({
        description: `required with mode custom_html, at most ${CUSTOM_HTML_MAX} characters; kept (unused) with the other modes; absent: left as it is`,
      }),
  })
  .meta({ description: 'the default site; redirect_url and html stay stored when another mode is chosen' });
export type DefaultSiteBody = z.output<typeof defaultSiteBody>;
export const defaultSiteResponse = z.object({ ok: z.literal(true), default_site: defaultSiteView });
