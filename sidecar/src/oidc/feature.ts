// The OpenID Connect feature: the providers API (oidc/endpoints.ts), the sign-in through a provider
// (oidc/flow.ts, pages served after the router and ahead of the admin app), and its tables
// (oidc/model.ts). Its service is made once per container (oidc/flow.ts oidcService); the sign-in
// page (web/index.ts) and the password sign-in (auth/endpoints.ts) read the providers through
// oidc/service.ts enabledProviders and passwordSignInAllowed.
import type { Feature } from '../feature.js';
import { defineOidcModels } from './model.js';
import { oidcEndpoints } from './endpoints.js';
import { oidcPagesMiddleware } from './flow.js';

export const oidcFeature: Feature = {
  name: 'oidc',
  models: defineOidcModels,
  endpoints: (ctx) => oidcEndpoints(ctx),
  late: (ctx) => [oidcPagesMiddleware(ctx)],
};
