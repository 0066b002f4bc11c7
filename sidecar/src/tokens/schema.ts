// Request and response schemas of the API-token endpoints.
import { z } from 'zod';
import { ignoringReadOnly, storedResourceFields } from '../http/input.js';
import { SCOPES } from '../http/scopes.js';
import { dateInput, text, UNPROCESSABLE } from '../http/fields.js';
import { splitTunnelList } from '../client-api/schema.js';

export const createTokenBody = z.strictObject({
  name: text({ min: 1, max: 128 }),
  scopes: z
    .array(z.enum(SCOPES))
    .min(1, 'at least one scope')
    .refine((s) => !(s.includes('full-access') && s.includes('read-only')), 'full-access and read-only contradict each other: choose one')
    .meta({
      not: { allOf: [{ contains: { const: 'full-access' } }, { contains: { const: 'read-only' } }] },
      description: 'full-access and read-only together are refused (they contradict each other)',
    }),
  expires_at: dateInput.nullable().optional(),
  user_id: z.number().int().positive().nullable().optional(),
  peer_id: z.number().int().positive().nullable().optional(),
});

export type TokenInput = z.output<typeof createTokenBody>;
/** What PATCH /tokens/:id accepts and ignores besides the writable fields (docs/reference/api.md "Conventions"). */
export const TOKEN_READ_ONLY = storedResourceFields('token');
export const updateTokenBody = ignoringReadOnly(
  z
    .strictObject({
      name: text({ min: 1, max: 128 }),
      split_tunnel: splitTunnelList.nullable().meta({
        description:
          'desktop clients: IPv4 CIDRs routed into the tunnel for this token (0.0.0.0/0 = full tunnel; the VPN subnet is always added); null = the server default',
      }),
    })
    .partial(),
  TOKEN_READ_ONLY,
).refine((v) => Object.keys(v).length > 0, { message: 'nothing to update', params: UNPROCESSABLE });
export type TokenPatch = z.output<typeof updateTokenBody>;

const isoDate = z.string().meta({ format: 'date-time' });
/** An API token as the API shows it: never the token itself. */
export const tokenView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    token_hint: z.string(),
    scopes: z.array(z.enum(SCOPES)),
    expires_at: isoDate.nullable(),
    expired: z.boolean(),
    user_id: z.number().int().nullable(),
    peer_id: z.number().int().nullable(),
    fingerprint_bound: z.boolean(),
    fingerprint_bound_at: isoDate.nullable(),
    last_used_at: isoDate.nullable(),
    created_at: isoDate,
    split_tunnel: z
      .array(z.string())
      .nullable()
      .meta({ description: "desktop clients: this token's split-tunnel ranges (null = the server default, GET /settings/client)" }),
  })
  .meta({ description: 'An API token (never the token itself)' });
export type TokenView = z.infer<typeof tokenView>;
export const tokenListResponse = z.object({ ok: z.literal(true), tokens: z.array(tokenView) });
export const tokenCreatedResponse = z.object({
  ok: z.literal(true),
  token: z.string().meta({ description: 'the plaintext gth_… token, shown once' }),
  record: tokenView,
});
export const tokenRecordResponse = z.object({ ok: z.literal(true), record: tokenView });
