// What the exposure rendering (fragments/exposure.ts) reads from the database: the address ranges an
// internal route serves. The tunnel subnet (GATEHOUSE_WG_SUBNET) and the routed LAN subnets of every
// gateway peer on the interface now (enabled, not expired): the entries of its allowed_ips beyond its
// own tunnel address, which WireGuard routes to that gateway, so a connection from them came
// through its tunnel. A disabled or expired gateway's LANs are not on the interface: a connection
// from those addresses came some other way, and is an outsider's.
import type { Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import { findRows } from '../db/define.js';
import { isActive } from '../peers/view.js';

/** The tunnel subnet and the active gateways' routed LANs, sorted, without duplicates. */
export async function readInternalRanges(db: Database, tunnelSubnet: string | undefined, now: number, transaction?: Transaction): Promise<string[]> {
  const gateways = await findRows(db.models.Peer, {
    where: { peer_type: 'gateway' },
    attributes: ['address', 'allowed_ips', 'enabled', 'expires_at'],
    transaction,
  });
  const lans = new Set<string>();
  for (const g of gateways) {
    if (!isActive(g, now)) continue;
    const own = `${g.address.split('/')[0]}/32`;
    for (const c of (g.allowed_ips ?? '').split(',')) {
      const cidr = c.trim();
      if (cidr && cidr !== own) lans.add(cidr);
    }
  }
  return [...(tunnelSubnet ? [tunnelSubnet] : []), ...[...lans].filter((c) => c !== tunnelSubnet).sort()];
}

/** Ids of the enabled internal HTTP routes: a change of a gateway peer re-renders their hosts. */
export async function internalRouteIds(db: Database, transaction?: Transaction): Promise<number[]> {
  const rows = await findRows(db.models.Route, { where: { exposure: 'internal', route_type: 'http', enabled: true }, attributes: ['id'], transaction });
  return rows.map((r) => Number(r.id));
}
