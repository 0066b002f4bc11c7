// Request and response schemas of share links (share-links/endpoints.ts).
import { z } from 'zod';
import { dateInput, text, UNPROCESSABLE } from '../http/fields.js';
import { fieldText } from '../http/messages.js';
import { normalizePrefix } from './paths.js';

const isoDate = z.string().meta({ format: 'date-time' });

/** The longest expiry when the setting was never changed (days). */
export const DEFAULT_MAX_EXPIRY_DAYS = 30;
export const MAX_EXPIRY_DAYS_LIMIT = 365;
/** The setting's key (settings table, JSON number of days). */
export const MAX_EXPIRY_SETTING = 'share_links.max_expiry_days';
/** The token: the prefix and 43 base64url characters (32 random bytes). */
export const SHARE_TOKEN_PREFIX = 'gthsl';
export const SHARE_TOKEN_RE = /^gthsl_[A-Za-z0-9_-]{43}$/;

export const SHARE_STATES = ['active', 'expired', 'used_up', 'revoked'] as const;
export type ShareState = (typeof SHARE_STATES)[number];

const pathPrefix = z
  .string()
  .max(512)
  .refine((v) => normalizePrefix(v) !== undefined, { message: fieldText('share_link.field.path_prefix'), params: UNPROCESSABLE })
  .transform((v) => normalizePrefix(v) ?? null)
  .nullable()
  .optional()
  .meta({ description: 'only paths under it (segment-wise: /docs covers /docs and /docs/..., not /docsx); null, empty or "/": the whole route' });

export const createShareLinkBody = z.strictObject({
  expires_at: dateInput.meta({
    description: 'when the link stops working: in the future, at most the share-link setting max_expiry_days from now (default 30)',
  }),
  max_uses: z.number().int().min(1).max(1_000_000).nullable().optional().meta({ description: 'how many times it can be opened; null or absent: no limit' }),
  path_prefix: pathPrefix,
  note: text({ min: 0, max: 200 }).nullable().optional().meta({ description: 'who it is for (shown in the list and the activity log)' }),
});
export type CreateShareLinkInput = z.output<typeof createShareLinkBody>;

export const shareLinkView = z.object({
  id: z.number().int(),
  route_id: z.number().int(),
  note: z.string().nullable(),
  path_prefix: z.string().nullable(),
  max_uses: z.number().int().nullable(),
  uses: z.number().int(),
  last_used_at: isoDate.nullable(),
  state: z.enum(SHARE_STATES).meta({ description: 'active; expired; used_up (uses reached max_uses); revoked' }),
  created_at: isoDate,
  expires_at: isoDate,
  revoked_at: isoDate.nullable(),
  created_by: z
    .object({ user_id: z.number().int().nullable(), username: z.string().nullable() })
    .meta({ description: 'who made it (user_id null: an API token without a user, or a deleted user)' }),
});
export type ShareLinkView = z.infer<typeof shareLinkView>;

export const shareLinksResponse = z.object({ ok: z.literal(true), share_links: z.array(shareLinkView) });
export const shareLinkCreatedResponse = z.object({
  ok: z.literal(true),
  share_link: shareLinkView,
  url: z.string().meta({ description: 'the link to send, shown once: <scheme>://<route domain>/route-auth/share?t=<token>' }),
});
export const shareLinkRevokedResponse = z.object({ ok: z.literal(true), share_link: shareLinkView });

export const shareSettingsBody = z.strictObject({
  max_expiry_days: z
    .number()
    .int()
    .min(1)
    .max(MAX_EXPIRY_DAYS_LIMIT)
    .meta({ description: `the longest a new share link may stay open (1 to ${MAX_EXPIRY_DAYS_LIMIT} days)` }),
});
export const shareSettingsResponse = z.object({
  ok: z.literal(true),
  share_links: z.object({
    max_expiry_days: z
      .number()
      .int()
      .meta({ description: `days; default ${DEFAULT_MAX_EXPIRY_DAYS}` }),
  }),
});

export const linkIdParams = z.object({ id: z.coerce.number().int().positive(), linkId: z.coerce.number().int().positive() });
