// Request schemas of the admin login (zod).
import { z } from 'zod';
import { text } from '../http/fields.js';

export const loginBody = z.object({
  username: text({ min: 1, max: 64 }),
  password: z.string().min(1, 'required').max(1024),
  next: text({ max: 2048 }).optional(),
});

/** The server-rendered password change form (GET /password); `next` is where to go afterwards. */
export const passwordFormBody = z.object({
  current: z.string().max(1024),
  new_password: z.string().max(1024),
  confirm: z.string().max(1024).optional(),
  next: text({ max: 2048 }).optional(),
});
