// GET /peers filters and sort orders as Sequelize where/order: the database filters, sorts and pages,
// so a page costs the same at 10,000 peers as at ten. Both SQLite and PostgreSQL.
import { Op, fn, col, literal, type Order, type WhereOptions } from 'sequelize';
import type { Database } from '../db/index.js';
import { containsText, ipv4OrderKeys, listHasEntry, parseSort } from '../db/search.js';
import { ONLINE_WINDOW_MS } from './view.js';
import type { ListPeersQuery } from './schema.js';

/** Columns `q` searches. */
export const PEER_SEARCH_COLUMNS = ['name', 'description', 'address', 'allowed_ips', 'hostname', 'tags'] as const;

/** The peer view's isOnline (view.ts isOnline) as a where: enabled, not expired, a handshake within the window. */
export function onlineWhere(now: number): WhereOptions {
  return {
    enabled: true,
    latest_handshake: { [Op.gte]: now - ONLINE_WINDOW_MS, [Op.gt]: 0 },
    [Op.or]: [{ expires_at: null }, { expires_at: { [Op.gt]: now } }],
  };
}

/** Exactly the peers onlineWhere leaves out (spelled out: NOT over NULL columns would drop rows). */
export function offlineWhere(now: number): WhereOptions {
  return {
    [Op.or]: [
      { enabled: false },
      { latest_handshake: null },
      { latest_handshake: { [Op.lt]: now - ONLINE_WINDOW_MS } },
      { latest_handshake: { [Op.lte]: 0 } },
      { expires_at: { [Op.lte]: now } },
    ],
  };
}

export type PeerFilter = Omit<ListPeersQuery, 'limit' | 'offset' | 'sort'>;

export function hasFilter(f: PeerFilter): boolean {
  return Boolean(f.q) || f.group_id !== undefined || f.tag !== undefined || f.online !== undefined || f.enabled !== undefined;
}

export function peerWhere(db: Pick<Database, 'dialect'>, f: PeerFilter, now: number): WhereOptions {
  const and: WhereOptions[] = [];
  if (f.q) and.push({ [Op.or]: PEER_SEARCH_COLUMNS.map((c) => containsText(db.dialect, c, f.q!)) });
  if (f.group_id !== undefined) and.push({ group_id: f.group_id === 'none' ? null : f.group_id });
  if (f.tag !== undefined) and.push(listHasEntry(db.dialect, 'tags', f.tag));
  if (f.enabled !== undefined) and.push({ enabled: f.enabled });
  if (f.online !== undefined) and.push(f.online ? onlineWhere(now) : offlineWhere(now));
  return and.length ? { [Op.and]: and } : {};
}

/** ORDER BY for a sort value; the id breaks ties, so pages never overlap or skip a row. */
export function peerOrder(db: Pick<Database, 'dialect'>, sort: ListPeersQuery['sort']): Order {
  if (!sort) return [['id', 'ASC']];
  const { key, dir } = parseSort(sort);
  const tie: [string, string] = ['id', 'ASC'];
  switch (key) {
    case 'id':
      return [['id', dir]];
    case 'name':
      return [[fn('LOWER', col('name')), dir], tie];
    case 'created_at':
      return [['created_at', dir], tie];
    case 'last_handshake':
      // never connected (NULL) counts as the oldest, on both databases
      return [['latest_handshake', dir === 'ASC' ? 'ASC NULLS FIRST' : 'DESC NULLS LAST'], tie];
    case 'traffic':
      return [[literal('(total_rx + total_tx)'), dir], tie];
    case 'address':
      return [...ipv4OrderKeys(db.dialect, 'address').map((k): [ReturnType<typeof literal>, string] => [literal(k), dir]), tie];
  }
}
