// Exposure of an HTTP route: `public` (every visitor) or `internal` (only clients whose
// connection comes from the tunnel subnet or a gateway's routed LAN). What everyone else gets from an
// internal route is the admin's choice (exposure_answer): not_found (Gatehouse's 404 page, the same
// as for a name nothing serves), page (the admin's HTML or text, status 403) or redirect (a 302 to
// exposure_redirect_url). The page and the URL stay stored when another answer is chosen.
// The field schemas (here, spread into routes/schema.ts), the rules of a merged route
// (exposure-rules.ts), the Caddy rendering (proxy/fragments/exposure.ts) and the DNS records
// (dns/service.ts) are the pieces.
import { z } from 'zod';
import { text } from '../http/fields.js';
import { httpUrl } from '../http/http-url.js';

export const EXPOSURES = ['public', 'internal'] as const;
export type Exposure = (typeof EXPOSURES)[number];
export const EXPOSURE_ANSWERS = ['not_found', 'page', 'redirect'] as const;
export type ExposureAnswer = (typeof EXPOSURE_ANSWERS)[number];
/** The largest outsider page, in characters (as the default site's custom page). */
export const EXPOSURE_PAGE_MAX = 65536;

/** The stored fields of a route's exposure (routes/model.ts Route). */
export interface ExposureFields {
  exposure: Exposure;
  /** null: not_found */
  exposure_answer: ExposureAnswer | null;
  exposure_page: string | null;
  exposure_redirect_url: string | null;
}

export const EXPOSURE_BLANK: ExposureFields = { exposure: 'public', exposure_answer: null, exposure_page: null, exposure_redirect_url: null };

/** The writable fields (routes/schema.ts routeFields). */
export const exposureInput = {
  exposure: z.enum(EXPOSURES, { error: 'must be public or internal' }).meta({
    description:
      'public (default): every visitor; internal: only clients whose connection comes from the tunnel subnet or the routed LAN of a gateway peer (HTTP routes only); everyone else gets exposure_answer',
  }),
  exposure_answer: z.enum(EXPOSURE_ANSWERS, { error: 'must be not_found, page or redirect' }).nullable().meta({
    description:
      "what an internal route answers clients outside the tunnel: not_found (default: Gatehouse's 404 page), page (exposure_page with status 403) or redirect (a 302 to exposure_redirect_url)",
  }),
  exposure_page: text({ max: EXPOSURE_PAGE_MAX, multiline: true, trim: false })
    .nullable()
    .meta({
      description: `the page outsiders get with exposure_answer page (status 403): HTML when it starts with <, else plain text; at most ${EXPOSURE_PAGE_MAX} characters; kept (unused) with the other answers`,
    }),
  exposure_redirect_url: httpUrl(
    "where outsiders are sent with exposure_answer redirect (302, not cached): an absolute http(s) URL such as https://www.example.com/ (no { or }, no user name or password), not on the route's own domain; kept (unused) with the other answers",
  ).nullable(),
};

/** The served fields (routes/schema.ts routeView). */
export const exposureView = {
  exposure: z.enum(EXPOSURES),
  exposure_answer: z.enum(EXPOSURE_ANSWERS).nullable().meta({ description: 'null: not_found (with exposure internal)' }),
  exposure_page: z.string().nullable(),
  exposure_redirect_url: z.string().nullable(),
};

/** Whether an outsider page is HTML (it starts with <, after white space) rather than plain text. */
export function isHtmlPage(page: string): boolean {
  return page.trimStart().startsWith('<');
}
