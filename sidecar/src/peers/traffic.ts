// Traffic history: byte deltas measured by the poller go into 5-minute buckets of peer_traffic;
// a rollup folds old buckets into coarser ones so the table stays bounded:
//   5m buckets are kept 48 hours, then summed into 1h buckets;
//   1h buckets are kept 30 days, then summed into 1d buckets;
//   1d buckets are kept 400 days, then deleted.
// Every statement is portable (SQLite >= 3.24 and PostgreSQL share INSERT ... ON CONFLICT).
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { ChartPoint } from './schema.js';

export type Resolution = '5m' | '1h' | '1d';
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;
export const RESOLUTION_MS: Record<Resolution, number> = { '5m': 5 * MINUTE, '1h': HOUR, '1d': DAY };
export const RETENTION = { '5m': 48 * HOUR, '1h': 30 * DAY, '1d': 400 * DAY } as const;

export interface TrafficSample {
  peerId: number;
  rx: number;
  tx: number;
}

export const PERIODS = {
  '1h': { window: HOUR, step: 5 * MINUTE },
  '24h': { window: 24 * HOUR, step: HOUR },
  '7d': { window: 7 * DAY, step: 6 * HOUR },
  '30d': { window: 30 * DAY, step: DAY },
} as const;
export type Period = keyof typeof PERIODS;

const floorTo = (t: number, step: number) => Math.floor(t / step) * step;

const UPSERT_TAIL = 'ON CONFLICT (peer_id, resolution, bucket_start) DO UPDATE SET rx = peer_traffic.rx + excluded.rx, tx = peer_traffic.tx + excluded.tx';

/** Adds the samples (bytes since the previous poll) to the 5-minute bucket holding `now`. */
export async function addSamples(s: Sequelize, samples: TrafficSample[], now: number, transaction?: Transaction): Promise<void> {
  const bucket = floorTo(now, RESOLUTION_MS['5m']);
  const rows = samples.filter((x) => x.rx > 0 || x.tx > 0);
  for (let i = 0; i < rows.length; i += 200) {
    const chunk = rows.slice(i, i + 200);
    const values = chunk.map(() => `(?, '5m', ?, ?, ?)`).join(', ');
    const replacements = chunk.flatMap((x) => [x.peerId, bucket, x.rx, x.tx]);
    await s.query(`INSERT INTO peer_traffic (peer_id, resolution, bucket_start, rx, tx) VALUES ${values} ${UPSERT_TAIL}`, {
      replacements,
      transaction,
      type: QueryTypes.INSERT,
    });
  }
}

/** Folds buckets older than their retention into the next resolution; drops 1d buckets past 400 days. */
export async function rollup(s: Sequelize, now: number): Promise<{ folded5m: number; folded1h: number; dropped1d: number }> {
  const out = { folded5m: 0, folded1h: 0, dropped1d: 0 };
  const steps: [Resolution, Resolution, 'folded5m' | 'folded1h'][] = [
    ['5m', '1h', 'folded5m'],
    ['1h', '1d', 'folded1h'],
  ];
  for (const [from, to, key] of steps) {
    const size = RESOLUTION_MS[to];
    // Aligned to the target resolution, so a coarse bucket is only ever built from complete input.
    const cutoff = floorTo(now - RETENTION[from], size);
    await s.transaction(async (transaction) => {
      await s.query(
        `INSERT INTO peer_traffic (peer_id, resolution, bucket_start, rx, tx)
         SELECT peer_id, ?, bucket_start - (bucket_start % ?), SUM(rx), SUM(tx) FROM peer_traffic
         WHERE resolution = ? AND bucket_start < ?
         GROUP BY peer_id, bucket_start - (bucket_start % ?) ${UPSERT_TAIL}`,
        { replacements: [to, size, from, cutoff, size], transaction, type: QueryTypes.INSERT },
      );
      const [n] = (await s.query('SELECT COUNT(*) AS n FROM peer_traffic WHERE resolution = ? AND bucket_start < ?', {
        replacements: [from, cutoff],
        transaction,
        type: QueryTypes.SELECT,
      })) as { n: number | string }[];
      out[key] = Number(n.n);
      await s.query('DELETE FROM peer_traffic WHERE resolution = ? AND bucket_start < ?', {
        replacements: [from, cutoff],
        transaction,
        type: QueryTypes.DELETE,
      });
    });
  }
  const [d] = (await s.query('SELECT COUNT(*) AS n FROM peer_traffic WHERE resolution = ? AND bucket_start < ?', {
    replacements: ['1d', now - RETENTION['1d']],
    type: QueryTypes.SELECT,
  })) as { n: number | string }[];
  out.dropped1d = Number(d.n);
  if (out.dropped1d)
    await s.query('DELETE FROM peer_traffic WHERE resolution = ? AND bucket_start < ?', {
      replacements: ['1d', now - RETENTION['1d']],
      type: QueryTypes.DELETE,
    });
  return out;
}

/**
 * Chart data for a period: one point per step (oldest first, empty steps as zeros), for one peer or
 * (peerId undefined) for all peers together.
 */
export async function series<P extends Period>(
  s: Sequelize,
  period: P,
  now: number,
  peerId?: number,
): Promise<{ period: P; step_ms: number; from: number; to: number; points: ChartPoint[]; total_rx: number; total_tx: number }> {
  const { window, step } = PERIODS[period];
  const to = floorTo(now, step) + step;
  const from = to - window;
  const where = peerId === undefined ? '' : ' AND peer_id = ?';
  const rows = (await s.query(
    `SELECT bucket_start - (bucket_start % ?) AS t, SUM(rx) AS rx, SUM(tx) AS tx FROM peer_traffic
     WHERE bucket_start >= ? AND bucket_start < ?${where} GROUP BY bucket_start - (bucket_start % ?)`,
    { replacements: [step, from, to, ...(peerId === undefined ? [] : [peerId]), step], type: QueryTypes.SELECT },
  )) as { t: number | string; rx: number | string; tx: number | string }[];
  const byT = new Map(rows.map((r) => [Number(r.t), r]));
  const points: ChartPoint[] = [];
  let totalRx = 0;
  let totalTx = 0;
  for (let t = from; t < to; t += step) {
    const r = byT.get(t);
    const rx = r ? Number(r.rx) : 0;
    const tx = r ? Number(r.tx) : 0;
    totalRx += rx;
    totalTx += tx;
    points.push({ timestamp: t, rx, tx });
  }
  return { period, step_ms: step, from, to, points, total_rx: totalRx, total_tx: totalTx };
}

/** Bytes received and sent since `since` (all peers). */
export async function totalsSince(s: Sequelize, since: number): Promise<{ rx: number; tx: number }> {
  const [r] = (await s.query('SELECT COALESCE(SUM(rx), 0) AS rx, COALESCE(SUM(tx), 0) AS tx FROM peer_traffic WHERE bucket_start >= ?', {
    replacements: [since],
    type: QueryTypes.SELECT,
  })) as { rx: number | string; tx: number | string }[];
  return { rx: Number(r.rx), tx: Number(r.tx) };
}
