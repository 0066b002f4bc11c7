// /api/v1/auth/oidc/providers (admin role; tokens: full-access): the OpenID Connect providers of the
// admin sign-in, and the discovery test. The sign-in itself is served outside the registry
// (oidc/flow.ts: GET /auth/oidc/:providerId/start and GET /auth/oidc/callback).
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId } from '../http/auth.js';
import { createProviderBody, deletedResponse, providerResponse, providersResponse, testResponse, updateProviderBody } from './schema.js';
import { callbackUrl, oidcService } from './flow.js';

export function oidcEndpoints(ctx: AppContext): Endpoint[] {
  const svc = () => oidcService(ctx);
  const tags = ['auth'];
  return [
    defineEndpoint({
      method: 'GET',
      path: '/auth/oidc/providers',
      adminRole: true,
      tags,
      summary: 'The OpenID Connect providers of the admin sign-in (never their client secrets: client_secret_set says whether one is stored)',
      response: providersResponse,
      handler: async (_i, c) => ({ providers: await svc().list(callbackUrl(ctx, c)) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/auth/oidc/providers',
      adminRole: true,
      status: 201,
      tags,
      body: createProviderBody,
      storedChecks: (raw) => svc().storedProblems(raw),
      response: providerResponse,
      errors: { '409': 'A provider with this name exists (fields.name)' },
      summary:
        'Add an OpenID Connect provider; its enabled providers show as "Sign in with <name>" on the sign-in page. The issuer must be https unless allow_private (422 fields.issuer)',
      handler: async ({ body }, c) => ({ provider: await svc().create(body, callbackUrl(ctx, c), actingUserId(c.state.principal)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/auth/oidc/providers/:id',
      adminRole: true,
      tags,
      summary: 'One OpenID Connect provider (never its client secret)',
      response: providerResponse,
      handler: async ({ params }, c) => ({ provider: await svc().get(params.id, callbackUrl(ctx, c)) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/auth/oidc/providers/:id',
      adminRole: true,
      tags,
      body: updateProviderBody,
      storedChecks: (raw, c) => svc().storedProblems(raw, Number(c.state.params.id)),
      response: providerResponse,
      errors: { '409': 'A provider with this name exists (fields.name)' },
      summary: 'Update an OpenID Connect provider (partial; an omitted or empty client_secret is kept, null removes it)',
      handler: async ({ params, body }, c) => ({ provider: await svc().update(params.id, body, callbackUrl(ctx, c), actingUserId(c.state.principal)) }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/auth/oidc/providers/:id',
      adminRole: true,
      tags,
      response: deletedResponse,
      summary: 'Delete an OpenID Connect provider and the links of accounts to it (the accounts stay, with their passwords)',
      handler: async ({ params }, c) => {
        await svc().remove(params.id, actingUserId(c.state.principal));
        return { deleted: true as const };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/auth/oidc/providers/:id/test',
      adminRole: true,
      tags,
      response: testResponse,
      summary:
        "Fetch the provider's discovery document now (through the request-forgery guard) and say what is wrong: not allowed (a private address without allow_private), unreachable, an HTTP error, not JSON, another issuer, no authorization, token or key endpoint",
      handler: async ({ params }) => ({ result: await svc().test(params.id) }),
    }),
  ];
}
