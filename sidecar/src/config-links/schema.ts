// Request and response schemas of one-time config links (config-links/endpoints.ts).
import { z } from 'zod';
import { text } from '../http/fields.js';
import { fieldText } from '../http/messages.js';

const isoDate = z.string().meta({ format: 'date-time' });

/** The longest a link may stay open, in hours (7 days). */
export const LINK_MAX_HOURS = 168;
/** What a link is given when the request does not say (24 hours). */
export const LINK_DEFAULT_HOURS = 24;

export const LINK_STATES = ['active', 'used', 'expired', 'revoked'] as const;

export const createLinkBody = z.strictObject({
  expires_in_hours: z
    .number()
    .int()
    .min(1)
    .max(LINK_MAX_HOURS)
    .optional()
    .meta({ description: `hours until the link stops working unused (1 to ${LINK_MAX_HOURS}; default ${LINK_DEFAULT_HOURS})` }),
  note: text({ min: 0, max: 200 }).nullable().optional().meta({ description: 'who it is for (shown in the list and the activity log)' }),
});

export const linkView = z.object({
  id: z.number().int(),
  peer_id: z.number().int(),
  note: z.string().nullable(),
  state: z.enum(LINK_STATES).meta({ description: 'active: not used yet and not expired; used: downloaded once (used_at, used_ip); expired; revoked' }),
  created_at: isoDate,
  expires_at: isoDate,
  used_at: isoDate.nullable(),
  used_ip: z.string().nullable(),
  revoked_at: isoDate.nullable(),
});
export type LinkView = z.infer<typeof linkView>;

export const linksResponse = z.object({ ok: z.literal(true), links: z.array(linkView) });
export const linkCreatedResponse = z.object({
  ok: z.literal(true),
  link: linkView,
  url: z
    .string()
    .meta({ description: 'the link to send, shown once: https://GATEHOUSE_ADMIN_DOMAIN/c/<token> when that is set, else on the origin the request came to' }),
  path: z.string().meta({ description: 'the same link without the origin: /c/<token>' }),
});
export const linkRevokedResponse = z.object({ ok: z.literal(true), link: linkView });

/** The token in a link's path: the prefix and 43 base64url characters (32 random bytes). */
export const LINK_TOKEN_PREFIX = 'gthcl';
export const linkTokenParams = z.object({
  token: z
    .string()
    .regex(/^gthcl_[A-Za-z0-9_-]{43}$/, fieldText('schema.a_link_token'))
    .meta({ description: 'the link token (gthcl_ and 43 base64url characters)' }),
});
