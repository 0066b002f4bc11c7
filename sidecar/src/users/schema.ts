// Request schemas of the users API (zod); usernameSchema and passwordSchema also serve the profile
// settings.
import { z } from 'zod';
import { ignoringReadOnly, storedResourceFields } from '../http/input.js';
import { text, UNPROCESSABLE } from '../http/fields.js';
import { fieldText } from '../http/messages.js';
import { ROLES } from '@gatehouse/common/roles.js';

export { ROLES, type Role } from '@gatehouse/common/roles.js';

export const usernameSchema = z
  .string()
  .trim()
  .min(1, 'required')
  .max(64)
  .regex(/^[A-Za-z0-9._@-]+$/, 'letters, digits and . _ @ - only');
/** The password policy of every admin-UI password (users API, profile, GET /password). */
export const PASSWORD_MIN = 8;
export const passwordSchema = z
  .string()
  .min(PASSWORD_MIN, fieldText('field.min_chars', { min: PASSWORD_MIN }))
  .max(1024);
const email = z.string().trim().email(fieldText('field.email')).max(254);

export const createBody = z.strictObject({
  username: usernameSchema,
  email: email.optional().nullable(),
  password: passwordSchema,
  role: z.enum(ROLES),
  language: z.enum(['en', 'de']).optional(),
});
/** What PUT /users/:id accepts and ignores besides the writable fields (docs/reference/api.md "Conventions"). */
export const USER_READ_ONLY = storedResourceFields('user');
export const updateBody = ignoringReadOnly(
  z
    .strictObject({ username: usernameSchema, email: email.nullable(), password: passwordSchema, role: z.enum(ROLES), language: z.enum(['en', 'de']) })
    .partial(),
  USER_READ_ONLY,
).refine((v) => Object.keys(v).length > 0, { message: 'nothing to update', params: UNPROCESSABLE });
export const unlockBody = z.strictObject({ username: text({ min: 1, max: 320 }), record_type: z.enum(['admin', 'route_auth']).default('admin') });
export const lockedQuery = z.strictObject({ record_type: z.enum(['admin', 'route_auth']).default('admin') });

/** users/service.ts publicUser: a user as served (never the password hash). */
export const userView = z.object({
  id: z.number().int(),
  username: z.string(),
  email: z.string().nullable(),
  role: z.enum(ROLES),
  language: z.enum(['en', 'de']),
  theme: z.enum(['pro', 'default']).nullable(),
  last_login_at: z.number().int().nullable().meta({ description: 'epoch milliseconds' }),
  must_change_password: z.boolean(),
  created_at: z.string().meta({ format: 'date-time' }),
  updated_at: z.string().meta({ format: 'date-time' }),
});
export const userResponse = z.object({ ok: z.literal(true), user: userView });
export const usersResponse = z.object({
  ok: z.literal(true),
  users: z.array(userView.extend({ totp_active: z.boolean().meta({ description: 'the user has a TOTP second factor' }) })),
});
export const resetPasswordResponse = z.object({ ok: z.literal(true), password: z.string().meta({ description: 'the new password, shown once' }) });
export const unlockResponse = z.object({ ok: z.literal(true), unlocked: z.literal(true), was_locked: z.boolean() });
export const lockedResponse = z.object({
  ok: z.literal(true),
  locked: z.array(z.object({ identifier: z.string(), locked_until: z.string().meta({ format: 'date-time' }) })),
});
