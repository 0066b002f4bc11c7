// The peer tags feature: /tags (tags/endpoints.ts). The service is ctx.tags.
import type { Feature } from '../feature.js';
import { defineTagModels } from './model.js';
import { tagEndpoints } from './endpoints.js';

export const tagsFeature: Feature = {
  name: 'tags',
  models: defineTagModels,
  endpoints: (ctx) => tagEndpoints(ctx),
};
