// Linked routes: in gateway mode an RDP route owns an L4 TCP route (rdp_routes.gateway_l4_route_id).
// The routes API refuses to edit, toggle or delete such a route on its own (409 naming the owner:
// the composition root hands linkedOwners to RoutesService); the RDP route changes it through
// RoutesService.createLinked/updateLinked/removeLinked.
import { Op, type Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import { findRows } from '../db/define.js';

/** The RDP routes owning any of these route ids, by route id. */
export async function linkedOwners(db: Database, routeIds: number[], transaction?: Transaction): Promise<Map<number, { id: number; name: string }>> {
  const out = new Map<number, { id: number; name: string }>();
  if (!routeIds.length) return out;
  const rows = await findRows(db.models.RdpRoute, {
    where: { gateway_l4_route_id: { [Op.in]: routeIds } },
    attributes: ['id', 'name', 'gateway_l4_route_id'],
    transaction,
  });
  for (const r of rows) out.set(Number(r.gateway_l4_route_id), { id: Number(r.id), name: r.name });
  return out;
}
