import { msg } from '@gatehouse/common/messages/index.js';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { createTokenBody, tokenCreatedResponse, tokenListResponse, tokenRecordResponse, updateTokenBody } from './schema.js';
import { actingUserId } from '../http/auth.js';
import { unprocessable } from '../util/errors.js';
import { okOnly } from '../http/responses.js';

export function tokenEndpoints(deps: AppContext): Endpoint[] {
  return [
    defineEndpoint({
      method: 'GET',
      path: '/tokens',
      adminRole: true,
      summary: 'List API tokens (never the token itself)',
      tags: ['tokens'],
      response: tokenListResponse,
      handler: async () => ({ tokens: await deps.tokens.list() }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/tokens',
      adminRole: true,
      secrets: 'the new API token (any scopes, full-access included)',
      status: 201,
      summary: 'Create an API token; the plaintext gth_… token is returned once',
      tags: ['tokens'],
      body: createTokenBody,
      response: tokenCreatedResponse,
      handler: async ({ body }, ctx) => {
        if (body.expires_at != null && body.expires_at <= deps.clock())
          throw unprocessable(msg('request.validation_failed'), { expires_at: msg('field.in_future') });
        if (body.user_id != null && !(await deps.db.models.User.findByPk(body.user_id)))
          throw unprocessable(msg('request.validation_failed'), { user_id: msg('field.no_such_user') });
        const { token, record } = await deps.tokens.create(body, actingUserId(ctx.state.principal));
        return { token, record };
      },
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/tokens/:id',
      response: okOnly,
      adminRole: true,
      summary: 'Revoke a token at once',
      tags: ['tokens'],
      handler: async ({ params }, ctx) => {
        await deps.tokens.remove(params.id, actingUserId(ctx.state.principal));
        return {};
      },
    }),
    defineEndpoint({
      method: 'PATCH',
      path: '/tokens/:id',
      adminRole: true,
      summary: 'Rename a token or set its desktop-client split-tunnel override (split_tunnel: CIDRs, or null for the server default)',
      tags: ['tokens'],
      body: updateTokenBody,
      response: tokenRecordResponse,
      handler: async ({ params, body }, ctx) => ({ record: await deps.tokens.update(params.id, body, actingUserId(ctx.state.principal)) }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/tokens/:id/fingerprint',
      adminRole: true,
      summary: 'Reset the machine-fingerprint binding; the next use binds again',
      tags: ['tokens'],
      response: tokenRecordResponse,
      handler: async ({ params }, ctx) => ({ record: await deps.tokens.resetFingerprint(params.id, actingUserId(ctx.state.principal)) }),
    }),
  ];
}
