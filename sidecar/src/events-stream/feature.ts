// The live events feature: GET /events (events-stream/endpoints.ts). The hub is ctx.eventStreams;
// server.ts ends the open streams first when it stops.
import type { Feature } from '../feature.js';
import { eventStreamEndpoints } from './endpoints.js';

export const eventsStreamFeature: Feature = {
  name: 'events-stream',
  endpoints: (ctx) => eventStreamEndpoints(ctx),
};
