// The redirects feature: redirect hosts (/redirect-hosts) and the default site (/settings/default-site),
// redirects/endpoints.ts. The service is ctx.redirects; proxy/fragments/redirects.ts renders both.
import type { Feature } from '../feature.js';
import { defineRedirectModels } from './model.js';
import { redirectEndpoints } from './endpoints.js';

export const redirectsFeature: Feature = {
  name: 'redirects',
  models: defineRedirectModels,
  endpoints: (ctx) => redirectEndpoints(ctx),
};
