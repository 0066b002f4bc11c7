// Request schemas of the admin login (zod).
import { z } from 'zod';
import { text } from '../http/fields.js';
import { SCOPES } from '../http/scopes.js';
import { userView } from '../users/schema.js';

export const loginBody = z.strictObject({
  username: text({ min: 1, max: 64 }),
  password: z.string().min(1, 'required').max(1024),
  next: text({ max: 2048 }).optional(),
});

/** The server-rendered password change form (GET /password); `next` is where to go afterwards. */
export const passwordFormBody = z.strictObject({
  current: z.string().max(1024),
  new_password: z.string().max(1024),
  confirm: z.string().max(1024).optional(),
  next: text({ max: 2048 }).optional(),
});

/** POST /login for JSON clients (browsers are redirected). */
export const loginResponse = z.object({ ok: z.literal(true), user: userView, csrfToken: z.string(), must_change_password: z.boolean() });
export const csrfResponse = z.object({ ok: z.literal(true), csrfToken: z.string().nullable().meta({ description: 'null for API tokens' }) });
/** GET /session: one shape per kind of caller. */
export const sessionResponse = z.union([
  z.object({ ok: z.literal(true), kind: z.literal('session'), user: userView, csrfToken: z.string(), must_change_password: z.boolean() }),
  z.object({
    ok: z.literal(true),
    kind: z.literal('token'),
    token: z.object({ id: z.number().int(), scopes: z.array(z.enum(SCOPES)), user_id: z.number().int().nullable(), peer_id: z.number().int().nullable() }),
  }),
  z.object({ ok: z.literal(true), kind: z.enum(['gateway', 'client']) }),
]);
