// The peer groups feature: /groups (groups/endpoints.ts). The service is ctx.groups.
import type { Feature } from '../feature.js';
import { groupEndpoints } from './endpoints.js';

export const groupsFeature: Feature = {
  name: 'groups',
  endpoints: (ctx) => groupEndpoints(ctx),
};
