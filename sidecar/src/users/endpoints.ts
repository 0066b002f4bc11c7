import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { text } from '../http/fields.js';
import { actingUserId, type Principal } from '../http/auth.js';
import { ROLES } from './service.js';

export const usernameSchema = z.string().trim().min(1, 'required').max(64).regex(/^[A-Za-z0-9._@-]+$/, 'letters, digits and . _ @ - only');
export const passwordSchema = z.string().min(8, 'at least 8 characters').max(1024);
const email = z.string().trim().email('must be an email address').max(254);

const createBody = z.object({ username: usernameSchema, email: email.optional().nullable(), password: passwordSchema, role: z.enum(ROLES), language: z.enum(['en', 'de']).optional() });
const updateBody = z
  .object({ username: usernameSchema, email: email.nullable(), password: passwordSchema, role: z.enum(ROLES), language: z.enum(['en', 'de']) })
  .partial()
  .refine((v) => Object.keys(v).length > 0, 'nothing to update');

export function userEndpoints(deps: AppContext): Endpoint[] {
  const actor = (ctx: { state: { principal?: Principal } }) => actingUserId(ctx.state.principal) ?? undefined;
  return [
    defineEndpoint({ method: 'GET', path: '/users', adminRole: true, summary: 'List users', tags: ['users'], handler: async () => ({ users: await deps.users.list() }) }),
    defineEndpoint({
      method: 'POST', path: '/users', adminRole: true, status: 201, summary: 'Create a user', tags: ['users'], body: createBody,
      handler: async ({ body }, ctx) => ({ user: await deps.users.create(body, actor(ctx)) }),
    }),
    defineEndpoint({ method: 'GET', path: '/users/:id', adminRole: true, summary: 'One user', tags: ['users'], handler: async ({ params }) => ({ user: await deps.users.get(params.id as number) }) }),
    defineEndpoint({
      method: 'PUT', path: '/users/:id', adminRole: true, summary: 'Update a user', tags: ['users'], body: updateBody,
      handler: async ({ body, params }, ctx) => ({ user: await deps.users.update(params.id as number, body, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'DELETE', path: '/users/:id', adminRole: true, summary: 'Delete a user (their sessions end)', tags: ['users'],
      handler: async ({ params }, ctx) => { await deps.users.remove(params.id as number, actor(ctx)); return {}; },
    }),
    defineEndpoint({
      method: 'POST', path: '/users/:id/reset-password', adminRole: true, summary: 'Set a new random password, returned once', tags: ['users'],
      handler: async ({ params }, ctx) => ({ password: await deps.users.resetPassword(params.id as number, actor(ctx)) }),
    }),
    defineEndpoint({
      method: 'POST', path: '/users/unlock', adminRole: true, summary: 'Lift a login lockout (record type admin or route_auth)', tags: ['users'],
      body: z.object({ username: text({ min: 1, max: 320 }), record_type: z.enum(['admin', 'route_auth']).default('admin') }),
      handler: async ({ body }, ctx) => {
        const wasLocked = await deps.lockout.unlock(body.record_type, body.username);
        await deps.activity.record({ source: 'auth', event_type: 'account_unlocked', message: `Account ${body.username} unlocked by an admin`, details: { record_type: body.record_type, was_locked: wasLocked }, user_id: actor(ctx) });
        return { unlocked: true, was_locked: wasLocked };
      },
    }),
    defineEndpoint({
      method: 'GET', path: '/users/locked', adminRole: true, summary: 'Currently locked accounts', tags: ['users'],
      query: z.object({ record_type: z.enum(['admin', 'route_auth']).default('admin') }),
      handler: async ({ query }) => ({ locked: (await deps.lockout.locked(query.record_type)).map((l) => ({ identifier: l.identifier, locked_until: new Date(l.until).toISOString() })) }),
    }),
  ];
}
