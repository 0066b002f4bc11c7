// Response schemas of /api/v1/system/dns/* (the OpenAPI document).
import { z } from 'zod';

const record = { type: z.literal('A'), name: z.string(), fqdn: z.string(), address: z.string() };
const dnsRecord = z.object(record);
const peerDnsRecord = z.object({
  ...record,
  peer_id: z.number().int(),
  peer_name: z.string(),
  source: z.enum(['admin', 'agent']),
  stale: z.boolean(),
  enabled: z.union([z.literal(1), z.literal(0)]),
  updated_at: z.string().meta({ format: 'date-time' }).nullable(),
});
const routeDnsRecord = z.object({ ...record, route_id: z.number().int() });
export type DnsRecord = z.infer<typeof dnsRecord>;
export type PeerDnsRecord = z.infer<typeof peerDnsRecord>;
/** An internal route's name (its domain as it is, not under the zone's domain). */
export type RouteDnsRecord = z.infer<typeof routeDnsRecord>;
/** dns/service.ts records(). */
export const dnsRecordsResponse = z.object({
  ok: z.literal(true),
  domain: z.string(),
  static: z.array(dnsRecord),
  peers: z.array(peerDnsRecord),
  routes: z.array(routeDnsRecord).meta({
    description:
      "the enabled internal HTTP routes (exposure internal): each domain with the server's tunnel address, so peers reach it through the tunnel; wildcard domains are left out (a hosts file cannot hold them)",
  }),
});
/** dns/service.ts status(). */
export const dnsStatus = z.object({
  enabled: z.boolean(),
  domain: z.string(),
  server_address: z.string(),
  hosts_file: z
    .object({
      path: z.string(),
      exists: z.boolean(),
      size: z.number().int().optional(),
      updated_at: z.string().meta({ format: 'date-time' }).optional(),
      records: z.number().int().optional(),
      sha256: z.string().optional(),
    })
    .meta({ description: 'size, updated_at, records and sha256 only when the file exists' }),
  peers: z.object({ total: z.number().int(), admin: z.number().int(), agent: z.number().int(), stale: z.number().int() }),
  stale_after_days: z.number(),
});
export type DnsStatus = z.infer<typeof dnsStatus>;
export const dnsStatusResponse = z.object({ ok: z.literal(true), dns: dnsStatus });
