// Response schema of GET /api/v1/system/geoip: the country database of the routes' country filters.
import { z } from 'zod';

export const geoipStatus = z.object({
  configured: z.boolean().meta({ description: 'GATEHOUSE_GEOIP_DB is set' }),
  path: z.string().nullable().meta({ description: 'the file GATEHOUSE_GEOIP_DB names (absolute), null when unset' }),
  present: z.boolean().meta({ description: 'the file is there and is a MaxMind-format database: country filters can be saved and are enforced' }),
  database_type: z.string().nullable().meta({ description: "the file's metadata database_type, such as GeoLite2-Country or DBIP-Country-Lite" }),
  source: z
    .enum(['maxmind', 'dbip', 'other'])
    .nullable()
    .meta({ description: 'who makes it, judged by database_type: MaxMind (GeoLite2/GeoIP2), DB-IP, or another' }),
  description: z.string().nullable().meta({ description: "the metadata's English description" }),
  built_at: z.string().nullable().meta({ format: 'date-time', description: 'the build date of the database (metadata build_epoch)' }),
  ip_version: z.number().int().nullable().meta({ description: '4 or 6 (an IPv6 database answers IPv4 addresses too)' }),
  size_bytes: z.number().int().nullable(),
  modified_at: z.string().nullable().meta({ format: 'date-time', description: 'when the file was last written' }),
  error: z.string().nullable().meta({ description: 'why a configured file is not usable (missing, unreadable, not a MaxMind database)' }),
  routes_with_filter: z.number().int().meta({ description: 'routes that have a country filter' }),
});
export type GeoipStatus = z.infer<typeof geoipStatus>;
export const geoipStatusResponse = z.object({ ok: z.literal(true), geoip: geoipStatus });
