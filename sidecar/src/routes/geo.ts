// A route's country filter (geo_filter): {mode: allow|deny, countries: [ISO 3166-1 alpha-2]} or
// null. Enforced in Caddy by the gatehouse_geo matchers (caddy-modules/geoip) against the country
// database GATEHOUSE_GEOIP_DB (geoip/service.ts): per request on HTTP routes, per connection on L4
// routes. The request schema checks the codes (upper-cased, deduplicated, sorted); the service
// refuses a filter while no database is there (routes/service.ts check → geoFilterProblems).
import { z } from 'zod';
import { COUNTRY_CODES, isCountryCode } from '@gatehouse/common/countries.js';
import { msg, type Msg } from '@gatehouse/common/messages/index.js';
import { fieldIssue } from '../http/messages.js';
import { UNPROCESSABLE } from '../http/fields.js';

export type GeoFilterMode = 'allow' | 'deny';
export interface GeoFilter {
  mode: GeoFilterMode;
  countries: string[];
}

const countryIn = z
  .string({ error: 'must be an ISO 3166-1 alpha-2 country code such as DE' })
  .max(8)
  .meta({ pattern: '^\\s*[A-Za-z]{2}\\s*$', description: 'ISO 3166-1 alpha-2 code (any case), such as DE' })
  .transform((v, ctx) => {
    const code = v.trim().toUpperCase();
    if (!isCountryCode(code)) {
      // two letters that name no country: the document's pattern cannot say so (422); anything else breaks the pattern (400)
      const twoLetters = /^\s*[A-Za-z]{2}\s*$/.test(v);
      ctx.addIssue(fieldIssue(msg('route.field.geo_unknown_country', { code: v.trim().slice(0, 8) }), twoLetters ? { params: UNPROCESSABLE } : {}));
      return z.NEVER;
    }
    return code;
  });

/** geo_filter as sent. */
export const geoFilterIn = z
  .strictObject(
    {
      mode: z.enum(['allow', 'deny'], { error: 'must be allow or deny' }),
      countries: z
        .array(countryIn)
        .min(1, 'at least one country')
        .max(COUNTRY_CODES.length, `at most ${COUNTRY_CODES.length} countries`)
        .transform((v) => [...new Set(v)].sort()),
    },
    { error: 'must be {mode: allow|deny, countries: [ISO 3166-1 alpha-2 codes]} or null' },
  )
  .nullable()
  .meta({
    description:
      "country filter, enforced by Caddy per request (HTTP) or per connection (L4) from the client's country in GATEHOUSE_GEOIP_DB: allow lets only clients from these countries through (and refuses addresses the database does not know), deny refuses them. null: none. Refused (422) while no country database is configured",
  });

/** geo_filter as served. */
export const geoFilterView = z.object({ mode: z.enum(['allow', 'deny']), countries: z.array(z.string()) }).nullable();

/** The stored column (JSON text) → the filter, or null. */
export function parseGeoFilter(v: unknown): GeoFilter | null {
  if (v === null || v === undefined || v === '') return null;
  try {
    const o = (typeof v === 'string' ? JSON.parse(v) : v) as GeoFilter;
    return o && (o.mode === 'allow' || o.mode === 'deny') && Array.isArray(o.countries) ? { mode: o.mode, countries: o.countries.map(String) } : null;
  } catch {
    return null;
  }
}

export const geoFilterColumn = (g: GeoFilter | null): string | null => (g ? JSON.stringify(g) : null);

/** Why a route's filter cannot be saved: a filter needs the country database. */
export function geoFilterProblems(r: { geo_filter: GeoFilter | null }, database: { present: boolean }): Record<string, Msg> {
  return r.geo_filter && !database.present ? { geo_filter: msg('route.field.geo_no_database') } : {};
}
