import { msg } from '@gatehouse/common/messages/index.js';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { createTokenBody, tokenCreatedResponse, tokenListResponse, tokenRecordResponse, updateTokenBody } from './schema.js';
import { actingUserId } from '../http/auth.js';
import { unprocessable, type FieldMessages } from '../util/errors.js';
import { okOnly } from '../http/responses.js';

export function tokenEndpoints(deps: AppContext): Endpoint[] {
  /** What a create body's schema cannot say, all at once: an expiry in the past, a user that does not exist (also run on a body the schema refused). */
  const tokenProblems = async (b: { expires_at?: unknown; user_id?: unknown }): Promise<FieldMessages> => {
    const f: FieldMessages = {};
    if (typeof b.expires_at === 'number' && b.expires_at <= deps.clock()) f.expires_at = msg('field.in_future');
    if (typeof b.user_id === 'number' && Number.isSafeInteger(b.user_id) && !(await deps.db.models.User.findByPk(b.user_id, { attributes: ['id'] })))
      f.user_id = msg('field.no_such_user');
    return f;
  };
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
      storedChecks: (raw) => tokenProblems(raw),
      response: tokenCreatedResponse,
      handler: async ({ body }, ctx) => {
        const f = await tokenProblems(body);
        if (Object.keys(f).length) throw unprocessable(msg('request.validation_failed'), f);
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
