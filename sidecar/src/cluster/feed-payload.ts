// The change feed's notices (cluster/feed.ts): what a node publishes with PostgreSQL NOTIFY after a
// write commits, as small JSON texts. Pure: encoding, splitting under NOTIFY's payload limit, and
// decoding (zod) of what another node sent.
//
// A notice names what changed, never the data itself (the receiver reads the rows from the
// database, which committed before the notice was delivered):
//   {n: node, s: seq, r?: route ids | 'all', p?: [[peer id, public key before the change | null]], k?: setting keys, c?: caches, j?: jobs}
// - r: the routes whose hosts another node re-renders with the same renderer ('all': render
//   everything and compare host by host);
// - p: the peers another node reconciles on its own WireGuard interface; the key is the one the
//   peer had before the change (a deleted peer's row is gone, and its key must leave the interface);
// - k: the settings keys written (the receiver drops its settings cache and reloads what reads them);
// - c: caches to drop without any row change the receiver could see ('route_auth_sessions': a
//   route-auth session ended on the sender), or in-memory state to read again from the rows
//   ('backup_schedules': a backup job was created, changed or deleted);
// - j: singleton jobs the leader runs now (a follower's ask: util/scheduler.ts "Waking the leader").
// seq counts the sender's notices from 1 at its start: a receiver that sees a gap missed notices
// and catches up from the database.
import { z } from 'zod';

export const FEED_CHANNEL = 'gatehouse_changes';
/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; chunks stay under this. */
export const MAX_PAYLOAD_BYTES = 7900;

export const CACHE_NAMES = ['route_auth_sessions', 'backup_schedules'] as const;
export type CacheName = (typeof CACHE_NAMES)[number];

/** What one write changed (what a node publishes). */
export interface FeedChange {
  routes?: number[] | 'all';
  /** id and the public key before the change */
  peers?: { id: number; key: string | null }[];
  settings?: string[];
  caches?: CacheName[];
  /** singleton jobs the leader should run now */
  jobs?: string[];
}

const noticeSchema = z.object({
  n: z.string().min(1).max(63),
  s: z.number().int().positive(),
  r: z.union([z.array(z.number().int().positive()), z.literal('all')]).optional(),
  p: z.array(z.tuple([z.number().int().positive(), z.string().max(64).nullable()])).optional(),
  k: z.array(z.string().max(200)).optional(),
  c: z.array(z.enum(CACHE_NAMES)).optional(),
  j: z.array(z.string().min(1).max(100)).max(50).optional(),
});
export type Notice = z.infer<typeof noticeSchema>;

/** A notice as received: the sender, its sequence number and the change; null when the text is not one. */
export function decodeNotice(text: string): { node: string; seq: number; change: FeedChange } | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = noticeSchema.safeParse(raw);
  if (!parsed.success) return null;
  const n = parsed.data;
  const change: FeedChange = {};
  if (n.r) change.routes = n.r;
  if (n.p) change.peers = n.p.map(([id, key]) => ({ id, key }));
  if (n.k) change.settings = n.k;
  if (n.c) change.caches = n.c;
  if (n.j) change.jobs = n.j;
  return { node: n.n, seq: n.s, change };
}

/** Whether a change names anything at all. */
export function isEmptyChange(c: FeedChange): boolean {
  return !(c.routes === 'all' || c.routes?.length || c.peers?.length || c.settings?.length || c.caches?.length || c.jobs?.length);
}

/**
 * The texts to NOTIFY for one change, each under MAX_PAYLOAD_BYTES: one when it fits, otherwise
 * the lists split in halves until every part fits (thousands of route ids of a batch become a few
 * notices). `seq()` gives each text its number.
 */
export function encodeChange(node: string, change: FeedChange, seq: () => number): string[] {
  const parts: FeedChange[] = [];
  split(node, change, parts);
  return parts.map((c) => JSON.stringify(toNotice(node, seq(), c)));
}

function toNotice(node: string, s: number, c: FeedChange): Notice {
  const n: Notice = { n: node, s };
  if (c.routes === 'all' || c.routes?.length) n.r = c.routes === 'all' ? 'all' : [...new Set(c.routes)];
  if (c.peers?.length) n.p = c.peers.map((p) => [p.id, p.key] as [number, string | null]);
  if (c.settings?.length) n.k = [...new Set(c.settings)];
  if (c.caches?.length) n.c = [...new Set(c.caches)];
  if (c.jobs?.length) n.j = [...new Set(c.jobs)];
  return n;
}

function split(node: string, c: FeedChange, out: FeedChange[]): void {
  if (Buffer.byteLength(JSON.stringify(toNotice(node, Number.MAX_SAFE_INTEGER, c))) < MAX_PAYLOAD_BYTES) {
    out.push(c);
    return;
  }
  // the largest list is halved; the other fields go with the first half
  const lists: [keyof FeedChange, unknown[]][] = [];
  if (Array.isArray(c.routes)) lists.push(['routes', c.routes]);
  if (c.peers) lists.push(['peers', c.peers]);
  if (c.settings) lists.push(['settings', c.settings]);
  lists.sort((a, b) => b[1].length - a[1].length);
  const [field, list] = lists[0] ?? [];
  if (!field || !list || list.length < 2) throw new Error('a change notice does not fit into one NOTIFY payload');
  const half = Math.ceil(list.length / 2);
  split(node, { ...c, [field]: list.slice(0, half) }, out);
  split(node, { [field]: list.slice(half) }, out);
}
