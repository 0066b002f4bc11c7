// Request and response schemas of the peer-groups API (zod).
import { z } from 'zod';
import { ignoringReadOnly, storedResourceFields } from '../http/input.js';
import { description, peerName } from '../peers/schema.js';
import { speedLimit } from '../shaping/schema.js';
import { quota, quotaView } from '../quotas/schema.js';

/** #rgb, #rrggbb or #rrggbbaa */
export const hexColor = z.string().regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/, 'must be a hex colour such as #3b82f6');

/** A peer group with the count of its peers. */
export const groupView = z.object({
  id: z.number().int(),
  name: z.string(),
  color: z.string().nullable(),
  description: z.string().nullable(),
  peer_count: z.number().int(),
  speed_limit: speedLimit.nullable().meta({ description: "the members' default speed cap (a member's own speed_limit wins); null: none" }),
  quota: quotaView.nullable().meta({ description: "the members' default data quota (a member's own quota wins); null: none" }),
  created_at: z.string().meta({ format: 'date-time' }),
  updated_at: z.string().meta({ format: 'date-time' }),
});
export type GroupView = z.infer<typeof groupView>;
export const groupResponse = z.object({ ok: z.literal(true), group: groupView });

const groupQuota = quota.nullable().optional().meta({ description: "the members' default data quota (a member's own quota wins); null: none" });
const groupSpeedLimit = speedLimit.nullable().optional().meta({ description: "the members' default speed cap (a member's own speed_limit wins); null: none" });
export const createBody = z.strictObject({
  name: peerName,
  color: hexColor.nullable().optional(),
  description: description.nullable().optional(),
  speed_limit: groupSpeedLimit,
  quota: groupQuota,
});
export type GroupInput = z.output<typeof createBody>;
/** What PUT /peer-groups/:id accepts and ignores besides the writable fields (docs/reference/api.md "Conventions"). */
export const GROUP_READ_ONLY = storedResourceFields('peer group', { peer_count: z.number().int() });
export const updateBody = ignoringReadOnly(
  z.strictObject({
    name: peerName.optional(),
    color: hexColor.nullable().optional(),
    description: description.nullable().optional(),
    speed_limit: groupSpeedLimit,
    quota: groupQuota,
  }),
  GROUP_READ_ONLY,
);
export type GroupPatch = z.output<typeof updateBody>;

export const groupsResponse = z.object({ ok: z.literal(true), groups: z.array(groupView) });
export const groupDeletedResponse = z.object({
  ok: z.literal(true),
  deleted: z.object({ id: z.number().int(), name: z.string(), peers_ungrouped: z.number().int() }),
});
