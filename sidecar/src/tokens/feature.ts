// The API tokens feature: /tokens (tokens/endpoints.ts). The service is ctx.tokens, built with the platform.
import type { Feature } from '../feature.js';
import { tokenEndpoints } from './endpoints.js';

export const tokensFeature: Feature = {
  name: 'tokens',
  endpoints: (ctx) => tokenEndpoints(ctx),
};
