// The internal DNS feature: /dns (dns/endpoints.ts), and the hosts file written once at start (after
// the WireGuard interface is up). The service is ctx.dns.
import type { Feature } from '../feature.js';
import { dnsEndpoints } from './endpoints.js';

export const dnsFeature: Feature = {
  name: 'dns',
  endpoints: (ctx) => dnsEndpoints(ctx),
  async start(ctx) {
    await ctx.dns.refresh();
  },
};
