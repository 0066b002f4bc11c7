// /api/v1/dashboard/*
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { statsResponse, trafficQuery, trafficResponse } from './schema.js';

export function dashboardEndpoints(deps: AppContext): Endpoint[] {
  const dash = () => deps.dashboard;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/dashboard/stats',
      tags: ['dashboard'],
      response: statsResponse,
      summary:
        'peers {total, online}, routes {active, total}, monitoring {total, up, down}, traffic {today, todayUpload, todayDownload, uploadRate, downloadRate} (bytes, bytes/s), wireguard {running}, latency (ms)',
      handler: async () => ({ ...(await dash().stats()) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/dashboard/traffic',
      tags: ['dashboard'],
      query: trafficQuery,
      response: trafficResponse,
      summary: 'Traffic of all peers as chart points {timestamp, rx, tx} (1h: 5-minute steps, 24h: 1 h, 7d: 6 h)',
      handler: async ({ query }) => ({ ...(await dash().traffic(query.period)) }),
    }),
  ];
}
