// The speed cap of a peer or a peer group (zod): what the API accepts and answers.
import { z } from 'zod';

/** Lowest and highest cap: 8 kbit/s (one small packet a second and a bit) to 10 Gbit/s. */
export const KBIT_MIN = 8;
export const KBIT_MAX = 10_000_000;

const kbit = z.number().int().min(KBIT_MIN).max(KBIT_MAX);

/**
 * `speed_limit`: kbit/s per direction, seen from the peer: down_kbit = server → peer, up_kbit = peer
 * → server; null in a direction = not capped. On a peer, `null` (no own value) means the group's
 * default applies; an object, even {down_kbit: null, up_kbit: null}, is the peer's own and wins.
 */
export const speedLimit = z
  .strictObject({
    down_kbit: kbit.nullable().meta({ description: 'server → peer, kbit/s; null: not capped' }),
    up_kbit: kbit.nullable().meta({ description: 'peer → server, kbit/s; null: not capped' }),
  })
  .meta({ description: 'speed cap in kbit/s per direction, enforced with traffic control on the WireGuard interface' });
export type SpeedLimit = z.infer<typeof speedLimit>;

/** A stored speed_limit column (JSON text) → the API value; anything unreadable is no cap. */
export function parseSpeedLimit(v: unknown): SpeedLimit | null {
  if (v === null || v === undefined || v === '') return null;
  try {
    const r = speedLimit.safeParse(typeof v === 'string' ? JSON.parse(v) : v);
    return r.success ? r.data : null;
  } catch {
    return null;
  }
}
export const storeSpeedLimit = (v: SpeedLimit | null): string | null => (v ? JSON.stringify({ down_kbit: v.down_kbit, up_kbit: v.up_kbit }) : null);

/** The cap that applies to a peer: its own value, else its group's default. */
export function effectiveSpeedLimit(own: SpeedLimit | null, group: SpeedLimit | null): (SpeedLimit & { source: 'peer' | 'group' }) | null {
  if (own) return { ...own, source: 'peer' };
  if (group) return { ...group, source: 'group' };
  return null;
}
