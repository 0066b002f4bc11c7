// /api/v1/system/dns/* (licence feature internal_dns, enforced by http/app.ts from `feature`)
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { dnsRecordsResponse, dnsStatusResponse } from './schema.js';

export function dnsEndpoints(deps: AppContext): Endpoint[] {
  const dns = () => deps.dns;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/system/dns/status',
      response: dnsStatusResponse,
      tags: ['system'],
      feature: 'internal_dns',
      summary:
        'Internal DNS: hosts-file metadata and peer hostname counts by source (admin, agent, stale = agent name not refreshed for 7 days). Feature internal_dns',
      handler: async () => ({ dns: await dns().status() }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/system/dns/records',
      response: dnsRecordsResponse,
      tags: ['system'],
      feature: 'internal_dns',
      summary:
        'The internal DNS zone: static records (gateway.<domain>, server.<domain>), every peer record with its source, and the names of internal routes (the server tunnel address). Feature internal_dns',
      handler: async () => ({ ...(await dns().records()) }),
    }),
  ];
}
