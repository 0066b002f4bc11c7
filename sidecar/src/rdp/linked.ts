// Linked routes: in gateway mode an RDP route owns an L4 TCP route (rdp_routes.gateway_l4_route_id).
// The routes API refuses to edit, toggle or delete such a route on its own (409 naming the owner);
// the RDP route changes it through RoutesService.createLinked/updateLinked/removeLinked.
import { Op, type Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import { conflict } from '../util/errors.js';

/** The RDP routes owning any of these route ids, by route id. */
export async function linkedOwners(db: Database, routeIds: number[], transaction?: Transaction): Promise<Map<number, { id: number; name: string }>> {
  const out = new Map<number, { id: number; name: string }>();
  if (!routeIds.length) return out;
  const rows = (await db.models.RdpRoute.findAll({ where: { gateway_l4_route_id: { [Op.in]: routeIds } }, attributes: ['id', 'name', 'gateway_l4_route_id'], raw: true, transaction })) as unknown as { id: number; name: string; gateway_l4_route_id: number }[];
  for (const r of rows) out.set(Number(r.gateway_l4_route_id), { id: Number(r.id), name: r.name });
  return out;
}

/** 409 when one of these routes belongs to an RDP route (nothing is changed then). */
export async function refuseLinkedRoutes(db: Database, routeIds: number[], transaction?: Transaction): Promise<void> {
  const owners = await linkedOwners(db, routeIds, transaction);
  const [first] = owners;
  if (!first) return;
  const [routeId, owner] = first;
  throw conflict(`Route ${routeId} belongs to RDP route '${owner.name}' (id ${owner.id}); edit it there`, { route_id: routeId, rdp_route_id: owner.id });
}
