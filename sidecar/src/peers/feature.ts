// The peers feature: /peers (peers/endpoints.ts). The service is ctx.peers (app-context.ts); the
// interface, DNS, groups, tags and the dashboard are features of their own.
import type { Feature } from '../feature.js';
import { definePeerModels } from './model.js';
import { peerEndpoints } from './endpoints.js';

export const peersFeature: Feature = {
  name: 'peers',
  models: definePeerModels,
  endpoints: (ctx) => peerEndpoints(ctx),
};
