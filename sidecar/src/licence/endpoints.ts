// The licence endpoints: thin, over ctx.licence.
// Reading: any admin credential with full-access or read-only; writes: the admin role (tokens: full-access).
import type { AppContext } from '../app-context.js';
import { actingUserId } from '../http/auth.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { activateBody, licenceResponse, refreshResponse, removeResponse } from './schema.js';

export function licenceEndpoints(deps: AppContext): Endpoint[] {
  const svc = () => deps.licence;
  const tags = ['license'];
  return [
    defineEndpoint({
      method: 'GET',
      path: '/license',
      tags,
      response: licenceResponse,
      summary: 'The licence state: plan, features and limits in force, the stored licence, refresh and grace period, the community fallback',
      handler: () => ({ license: svc().view() }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/license/activate',
      tags,
      adminRole: true,
      body: activateBody,
      response: licenceResponse,
      summary:
        'Activate a licence key (verified offline: signature by a trusted key, expiry); a key not of the key form: 400; a refused key (signature, dates): 422 with fields.key and reason; nothing stored',
      handler: async ({ body }, ctx) => ({ license: await svc().activate(body.key, actingUserId(ctx.state.principal) ?? null) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/license/refresh',
      tags,
      adminRole: true,
      response: refreshResponse,
      summary:
        'Revalidate against the licence service (GATEHOUSE_LICENCE_URL), or offline without one; an unreachable service keeps the last good state for the grace period (refresh.ok false). 409 without a stored licence',
      handler: async (_i, ctx) => svc().refresh(actingUserId(ctx.state.principal) ?? null),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/license',
      tags,
      adminRole: true,
      response: removeResponse,
      summary: 'Remove the licence locally: back to the community fallback (no data is deleted)',
      handler: async (_i, ctx) => svc().remove(actingUserId(ctx.state.principal) ?? null),
    }),
  ];
}
