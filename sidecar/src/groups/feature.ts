// The peer groups feature: /groups (groups/endpoints.ts). The service is ctx.groups.
import type { Feature } from '../feature.js';
import { defineGroupModels } from './model.js';
import { groupEndpoints } from './endpoints.js';

export const groupsFeature: Feature = {
  name: 'groups',
  models: defineGroupModels,
  endpoints: (ctx) => groupEndpoints(ctx),
};
