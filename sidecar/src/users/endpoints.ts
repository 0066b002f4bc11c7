import { msg } from '@gatehouse/common/messages/index.js';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { actingUserId, type Principal } from '../http/auth.js';
import {
  createBody,
  lockedQuery,
  lockedResponse,
  resetPasswordResponse,
  unlockBody,
  unlockResponse,
  updateBody,
  userResponse,
  usersResponse,
} from './schema.js';
import { okOnly } from '../http/responses.js';

export function userEndpoints(deps: AppContext): Endpoint[] {
  const actor = (ctx: { state: { principal?: Principal } }) => actingUserId(ctx.state.principal) ?? undefined;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/users',
      response: usersResponse,
      adminRole: true,
      summary: 'List users',
      tags: ['users'],
      handler: async () => {
        const users = await deps.users.list();
        const totp = await deps.secondFactor.activeAmong(users.map((u) => u.id));
        return { users: users.map((u) => ({ ...u, totp_active: totp.has(u.id) })) };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/users',
      response: userResponse,
      adminRole: true,
      status: 201,
      summary: 'Create a user',
      tags: ['users'],
      body: createBody,
      storedChecks: (raw) => deps.users.storedProblems({ username: raw.username }),
      handler: async ({ body }, ctx) => ({ user: await deps.users.create(body, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/users/:id',
      response: userResponse,
      adminRole: true,
      summary: 'One user',
      tags: ['users'],
      handler: async ({ params }) => ({ user: await deps.users.get(params.id) }),
    }),
    defineEndpoint({
      method: 'PUT',
      path: '/users/:id',
      response: userResponse,
      adminRole: true,
      summary: 'Update a user',
      tags: ['users'],
      body: updateBody,
      storedChecks: (raw, ctx) => deps.users.storedProblems(raw, ctx.state.params.id),
      handler: async ({ body, params }, ctx) => ({ user: await deps.users.update(params.id, body, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/users/:id',
      response: okOnly,
      adminRole: true,
      summary: 'Delete a user (their sessions end)',
      tags: ['users'],
      handler: async ({ params }, ctx) => {
        await deps.users.remove(params.id, actor(ctx));
        return {};
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/users/:id/reset-password',
      secrets: 'a new password of another user, which signs in as them until they change it',
      response: resetPasswordResponse,
      adminRole: true,
      summary: 'Set a new random password, returned once; the user must choose a new one at the next sign-in (must_change_password)',
      tags: ['users'],
      handler: async ({ params }, ctx) => ({ password: await deps.users.resetPassword(params.id, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/users/unlock',
      response: unlockResponse,
      adminRole: true,
      summary: 'Lift a login lockout (record type admin or route_auth)',
      tags: ['users'],
      body: unlockBody,
      handler: async ({ body }, ctx) => {
        const wasLocked = await deps.lockout.unlock(body.record_type, body.username);
        await deps.activity.record({
          source: 'auth',
          event_type: 'account_unlocked',
          msg: msg('auth.unlocked_by_admin', { username: body.username }),
          details: { record_type: body.record_type, was_locked: wasLocked },
          user_id: actor(ctx),
        });
        return { unlocked: true as const, was_locked: wasLocked };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/users/locked',
      response: lockedResponse,
      adminRole: true,
      summary: 'Currently locked accounts',
      tags: ['users'],
      query: lockedQuery,
      handler: async ({ query }) => ({
        locked: (await deps.lockout.locked(query.record_type)).map((l) => ({ identifier: l.identifier, locked_until: new Date(l.until).toISOString() })),
      }),
    }),
  ];
}
