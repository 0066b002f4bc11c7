// Request and response schemas of the tags API (zod).
import { z } from 'zod';
import { tagNameIn } from './names.js';

/** A tag: a registered name, or a name only found on peers (id null, registered false). */
export const tagView = z.object({ id: z.number().int().nullable(), name: z.string(), peer_count: z.number().int(), registered: z.boolean() });
export type TagView = z.infer<typeof tagView>;

export const createBody = z.strictObject({ name: tagNameIn });

export const tagsResponse = z.object({ ok: z.literal(true), tags: z.array(tagView) });
export const tagCreatedResponse = z.object({ ok: z.literal(true), tag: tagView, created: z.boolean() });
export const renameBody = z.strictObject({ name: tagNameIn });
export const tagRenamedResponse = z.object({
  ok: z.literal(true),
  renamed: z.object({ from: z.string(), to: z.string(), registered: z.boolean(), peers_updated: z.number().int() }),
});
export const tagDeletedResponse = z.object({
  ok: z.literal(true),
  deleted: z.object({ name: z.string(), registered: z.boolean(), peers_updated: z.number().int() }),
});
