// Reads what the renderer needs from the database, optionally inside a transaction (the route write
// path renders from a snapshot read INSIDE its transaction, so Caddy gets exactly what will commit).
import { Op, QueryTypes, type Transaction } from 'sequelize';
import type { Config } from '../config.js';
import type { Database } from '../db/index.js';
import { isActive } from '../peers/view.js';
import { rowToRoute, valuesToRoute, type Route, type RouteRow } from '../routes/model.js';
import { accessLogFile } from './fragments/access-log.js';
import { caddyStorageDsn } from './fragments/storage.js';
import type { PeerTarget, ProxySettings, ProxySnapshot } from './render-context.js';
import { asBool, findRows } from '../db/define.js';
import type { PublicHost } from '../system/public-host.js';
import type { MasterKey } from '../util/crypto.js';
import { DEFAULT_SITE_SETTING, parseDefaultSite } from '../redirects/default-site.js';
import { closedRouteIds } from './fragments/access-window.js';
import { readInternalRanges } from './exposure-snapshot.js';

/**
 * The renderer's settings from the configuration and the master key (the sticky-cookie key is its
 * sub-key); with `network` (ctx.publicHost) the TLS mode and the ACME e-mail are read at every
 * render from the Network settings (stored value, else the environment), so a save applies with
 * the next render.
 */
export function proxySettings(
  config: Config,
  master: Pick<MasterKey, 'derive'>,
  network?: Pick<PublicHost, 'tls' | 'acmeEmail'>,
  geoip?: { status(): { present: boolean; path: string | null; size_bytes: number | null; modified_at: string | null } },
): ProxySettings {
  const local = config.bind === '0.0.0.0' || config.bind === '::' || config.bind === '' ? '127.0.0.1' : config.bind;
  return {
    httpPort: config.httpPort,
    httpsPort: config.httpsPort,
    adminListen: config.caddyAdmin,
    get tls() {
      return network ? network.tls().value : config.tls;
    },
    get acmeEmail() {
      return network ? (network.acmeEmail().value ?? undefined) : config.acmeEmail;
    },
    adminDomain: config.adminDomain,
    sidecarUpstream: `${local.includes(':') ? `[${local}]` : local}:${config.port}`,
    bind: config.proxyBind,
    dataDir: config.dataDir,
    gatewayProxyPort: config.gateways.proxyPort,
    accessLogFile: accessLogFile(config.dataDir),
    accessLogRollMb: config.accessLogRollMb,
    tunnelSubnet: config.wg.subnet,
    // the country database as it is at each render (geoip/service.ts: a stat, parsed again only when the file changed)
    get geoipDb() {
      const s = geoip?.status();
      return s?.present && s.path ? { path: s.path, version: `${s.size_bytes}-${s.modified_at}` } : undefined;
    },
    trustedProxies: config.trustedProxies,
    lbCookieKey: master.derive('caddy-lb-cookie').toString('hex'),
    sharedCertificates: caddyStorageDsn(config) !== undefined,
  };
}

/**
 * Every enabled route, read as ONE JSON value built by the database (json_group_array / json_agg):
 * the sqlite3 driver converts each column of each row into a JS value on the main thread, which
 * takes ~0.5 s for 10,000 rows of ~50 columns; one JSON text and JSON.parse take a fifth of that.
 */
async function readEnabledRoutes(db: Database, transaction?: Transaction): Promise<Route[]> {
  const cols = Object.keys(db.models.Route.getAttributes());
  if (db.dialect === 'postgres') {
    const rows = (await db.sequelize.query(`SELECT COALESCE(json_agg(r), '[]'::json) AS j FROM routes r WHERE r.enabled = true`, {
      type: QueryTypes.SELECT,
      transaction,
    })) as { j: RouteRow[] }[];
    return (rows[0]?.j ?? []).map(rowToRoute);
  }
  // SQLite: each row as a JSON array of its values (column names once, here). SQL functions take
  // at most 127 arguments in some builds, so wide rows are split into nested arrays of 100.
  const chunks: string[][] = [];
  for (let i = 0; i < cols.length; i += 100) chunks.push(cols.slice(i, i + 100));
  const arr = (c: string[]) => `json_array(${c.map((x) => `"${x}"`).join(', ')})`;
  const rowExpr = chunks.length === 1 ? arr(chunks[0]) : `json_array(${chunks.map(arr).join(', ')})`;
  const rows = (await db.sequelize.query(`SELECT json_group_array(${rowExpr}) AS j FROM routes WHERE enabled = 1`, {
    type: QueryTypes.SELECT,
    transaction,
  })) as { j: string }[];
  const values = JSON.parse(rows[0]?.j ?? '[]') as unknown[][];
  const index: Record<string, number> = Object.fromEntries(cols.map((c, i) => [c, i]));
  return values.map((v) => valuesToRoute(index, chunks.length === 1 ? v : (v as unknown[][]).flat()));
}

/** Ids of the routes with a route-auth configuration (route-auth/models.ts protectedRouteIds), read in the same transaction. */
export type ProtectedRouteIdsFn = (transaction?: Transaction) => Promise<Set<number>>;

/**
 * Everything the renderer needs, read in `transaction` when given: the enabled routes, the peers,
 * the route-auth ids and which routes an RDP route owns.
 */
export async function readSnapshot(
  db: Database,
  settings: ProxySettings,
  now: number,
  transaction?: Transaction,
  protectedIds?: ProtectedRouteIdsFn,
): Promise<ProxySnapshot> {
  const routes = await readEnabledRoutes(db, transaction);
  const protectedRouteIds = protectedIds ? await protectedIds(transaction) : new Set<number>();
  const peerRows = await findRows(db.models.Peer, { attributes: ['id', 'address', 'enabled', 'expires_at'], transaction });
  const peers = new Map<number, PeerTarget>();
  // A peer that is disabled or expired is not on the interface: its routes render as unavailable.
  for (const p of peerRows) peers.set(Number(p.id), { address: p.address, enabled: isActive(p, now) });
  const linked = await findRows(db.models.RdpRoute, { where: { gateway_l4_route_id: { [Op.ne]: null } }, attributes: ['gateway_l4_route_id'], transaction });
  const rdpLinkedRouteIds = new Set(linked.map((r) => Number(r.gateway_l4_route_id)));
  const redirectRows = await findRows(db.models.RedirectHost, { attributes: ['domain', 'target_url', 'preserve_path', 'status_code', 'enabled'], transaction });
  const redirectHosts = redirectRows
    .map((r) => ({ ...r, preserve_path: asBool(r.preserve_path), enabled: asBool(r.enabled), status_code: Number(r.status_code) }))
    .filter((r) => r.enabled);
  const site = await findRows(db.models.Setting, { where: { key: DEFAULT_SITE_SETTING }, transaction });
  const internalRanges = routes.some((r) => r.exposure === 'internal') ? await readInternalRanges(db, settings.tunnelSubnet, now, transaction) : undefined;
  return {
    settings,
    routes,
    peers,
    protectedRouteIds,
    rdpLinkedRouteIds,
    redirectHosts,
    defaultSite: parseDefaultSite(site[0]?.value),
    internalRanges,
    closedRouteIds: closedRouteIds(routes, now),
  };
}

/**
 * What the renderer needs for only the routes `ids` (the apply path, proxy/apply.ts): their rows
 * (enabled or not: a disabled route renders no host), the peers they point at or list in their
 * ACL, their route-auth flags and which of them an RDP route owns. The same renderer turns it into
 * exactly the host entries a full snapshot would give these routes.
 */
export async function readRoutesSnapshot(
  db: Database,
  settings: ProxySettings,
  now: number,
  ids: number[],
  transaction?: Transaction,
  protectedIds?: ProtectedRouteIdsFn,
): Promise<ProxySnapshot> {
  const rows = ids.length ? await findRows(db.models.Route, { where: { id: { [Op.in]: ids } }, transaction }) : [];
  const routes = rows.map(rowToRoute);
  const peerIds = new Set<number>();
  for (const r of routes) {
    if (r.peer_id !== null) peerIds.add(Number(r.peer_id));
    if (r.target_peer_id !== null && r.target_peer_id !== undefined) peerIds.add(Number(r.target_peer_id));
    for (const p of r.acl_peer_ids ?? []) peerIds.add(Number(p));
    for (const b of r.backends) peerIds.add(Number(b.peer_id));
  }
  const peerRows = peerIds.size
    ? await findRows(db.models.Peer, { where: { id: { [Op.in]: [...peerIds] } }, attributes: ['id', 'address', 'enabled', 'expires_at'], transaction })
    : [];
  const peers = new Map<number, PeerTarget>();
  for (const p of peerRows) peers.set(Number(p.id), { address: p.address, enabled: isActive(p, now) });
  const allProtected = protectedIds ? await protectedIds(transaction) : new Set<number>();
  const protectedRouteIds = new Set(ids.filter((id) => allProtected.has(id)));
  const linked = ids.length
    ? await findRows(db.models.RdpRoute, { where: { gateway_l4_route_id: { [Op.in]: ids } }, attributes: ['gateway_l4_route_id'], transaction })
    : [];
  const internalRanges = routes.some((r) => r.exposure === 'internal') ? await readInternalRanges(db, settings.tunnelSubnet, now, transaction) : undefined;
  return {
    settings,
    routes,
    peers,
    protectedRouteIds,
    rdpLinkedRouteIds: new Set(linked.map((r) => Number(r.gateway_l4_route_id))),
    internalRanges,
    closedRouteIds: closedRouteIds(routes, now),
  };
}
