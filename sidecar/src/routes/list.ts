// GET /routes filters and sort orders as Sequelize where/order (both databases): the database
// filters, sorts and pages, as for peers (peers/list.ts).
import { domainToASCII } from 'node:url';
import { Op, literal, type Order, type WhereOptions } from 'sequelize';
import type { Database } from '../db/index.js';
import { containsText, containsTextSql, parseSort } from '../db/search.js';
import type { ListRoutesQuery } from './schema.js';

export type RouteFilter = Omit<ListRoutesQuery, 'limit' | 'offset' | 'sort'>;

export function hasFilter(f: RouteFilter): boolean {
  return Boolean(f.q) || f.type !== undefined || f.peer_id !== undefined || f.enabled !== undefined;
}

/**
 * q: domain (also in its punycode form when q has non-ASCII letters), description, the gateway
 * target's LAN host, and the name of the target peer (peer_id, or the gateway peer target_peer_id).
 */
function searchWhere(db: Pick<Database, 'dialect' | 'sequelize'>, q: string): WhereOptions {
  const or: WhereOptions[] = ['domain', 'description', 'target_lan_host'].map((c) => containsText(db.dialect, c, q));
  const ascii = /[\u0080-\uffff]/.test(q) ? domainToASCII(q.toLowerCase()) : '';
  if (ascii && ascii !== q) or.push(containsText(db.dialect, 'domain', ascii));
  const peers = `SELECT id FROM peers WHERE ${containsTextSql(db, 'name', q)}`;
  or.push(literal(`peer_id IN (${peers})`), literal(`target_peer_id IN (${peers})`));
  return { [Op.or]: or };
}

export function routeWhere(db: Pick<Database, 'dialect' | 'sequelize'>, f: RouteFilter): WhereOptions {
  const and: WhereOptions[] = [];
  if (f.q) and.push(searchWhere(db, f.q));
  if (f.type !== undefined) and.push({ route_type: f.type });
  if (f.peer_id !== undefined) and.push({ [Op.or]: [{ peer_id: f.peer_id }, { target_peer_id: f.peer_id }] });
  if (f.enabled !== undefined) and.push({ enabled: f.enabled });
  return and.length ? { [Op.and]: and } : {};
}

/** ORDER BY for a sort value; the id breaks ties. */
export function routeOrder(sort: ListRoutesQuery['sort']): Order {
  if (!sort) return [['id', 'ASC']];
  const { key, dir } = parseSort(sort);
  const tie: [string, string] = ['id', 'ASC'];
  switch (key) {
    case 'id':
      return [['id', dir]];
    case 'domain':
      return [['domain', dir], tie];
    case 'created_at':
      return [['created_at', dir], tie];
    case 'type':
      return [['route_type', dir], ['domain', 'ASC'], tie];
  }
}
