// Peer groups: a name (unique, case-insensitive), a hex colour and a description. Deleting a group
// leaves its peers without a group.
import { msg } from '@gatehouse/common/messages/index.js';
import { Op, QueryTypes, UniqueConstraintError, col, fn, where as sqlWhere, type WhereOptions } from 'sequelize';
import type { Deps } from '../deps.js';
import type { PeerGroupRow } from './model.js';
import { AppError, notFound, type FieldMessages } from '../util/errors.js';
import type { GroupInput, GroupPatch, GroupView } from './schema.js';
import { findRows, findRowByPk } from '../db/define.js';
import { parseSpeedLimit, storeSpeedLimit } from '../shaping/schema.js';
import { parseQuota, storeQuota } from '../quotas/schema.js';

/** 409 for a taken name, with `fields.name` so a form shows it next to the name input. */
const nameConflict = (name: string) => new AppError('conflict', msg('group.name_taken', { name }), { name: msg('group.field.name_taken') });

const iso = (v: unknown) => new Date(Number(v)).toISOString();

export class GroupsService {
  constructor(private deps: Deps) {}

  private get Group() {
    return this.deps.db.models.PeerGroup;
  }

  private async counts(): Promise<Map<number, number>> {
    const rows = (await this.deps.db.sequelize.query('SELECT group_id, COUNT(*) AS n FROM peers WHERE group_id IS NOT NULL GROUP BY group_id', {
      type: QueryTypes.SELECT,
    })) as { group_id: number; n: number | string }[];
    return new Map(rows.map((r) => [Number(r.group_id), Number(r.n)]));
  }

  private view(r: PeerGroupRow, count: number): GroupView {
    return {
      id: r.id,
      name: r.name,
      color: r.color ?? null,
      description: r.description ?? null,
      peer_count: count,
      speed_limit: parseSpeedLimit(r.speed_limit),
      quota: parseQuota(r.quota),
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    };
  }

  async list(): Promise<GroupView[]> {
    const [rows, counts] = await Promise.all([findRows(this.Group, { order: [['name', 'ASC']] }), this.counts()]);
    return rows.map((r) => this.view(r, counts.get(r.id) ?? 0));
  }

  async get(id: number): Promise<GroupView> {
    const r = await findRowByPk(this.Group, id, {});
    if (!r) throw notFound(msg('group.not_found'));
    return this.view(r, await this.deps.db.models.Peer.count({ where: { group_id: id } }));
  }

  /** The body's fields the stored groups refuse (a name taken in any case), for a body whose schema refused other fields too (storedChecks). */
  async storedProblems(input: { name?: unknown }, exceptId?: number): Promise<FieldMessages> {
    if (typeof input.name !== 'string' || input.name.trim() === '') return {};
    const conds: WhereOptions<PeerGroupRow>[] = [sqlWhere(fn('LOWER', col('name')), fn('LOWER', input.name.trim()))];
    if (exceptId) conds.push({ id: { [Op.ne]: exceptId } });
    return (await this.Group.findOne({ attributes: ['id'], where: { [Op.and]: conds }, raw: true })) ? { name: msg('group.field.name_taken') } : {};
  }

  private async assertNameFree(name: string, exceptId?: number): Promise<void> {
    const conds: WhereOptions<PeerGroupRow>[] = [sqlWhere(fn('LOWER', col('name')), fn('LOWER', name))];
    if (exceptId) conds.push({ id: { [Op.ne]: exceptId } });
    if (await this.Group.findOne({ attributes: ['id'], where: { [Op.and]: conds }, raw: true })) throw nameConflict(name);
  }

  async create(input: GroupInput, actor?: number): Promise<GroupView> {
    await this.assertNameFree(input.name);
    const now = this.deps.clock();
    let id: number;
    try {
      const row = await this.Group.create({
        name: input.name,
        color: input.color ?? null,
        description: input.description ?? null,
        speed_limit: storeSpeedLimit(input.speed_limit ?? null),
        quota: storeQuota(input.quota ?? null),
        created_at: now,
        updated_at: now,
      });
      id = row.get('id') as number;
    } catch (err) {
      if (err instanceof UniqueConstraintError) throw nameConflict(String(input.name));
      throw err;
    }
    await this.deps.events.emit({ type: 'peer_group_created', group_id: id, name: input.name, actor: actor ?? null });
    return this.get(id);
  }

  async update(id: number, input: GroupPatch, actor?: number): Promise<GroupView> {
    const before = await this.get(id);
    const patch: Partial<PeerGroupRow> = {};
    if (input.name !== undefined && input.name !== before.name) {
      await this.assertNameFree(input.name, id);
      patch.name = input.name;
    }
    if (input.color !== undefined) patch.color = input.color;
    if (input.description !== undefined) patch.description = input.description;
    if (input.speed_limit !== undefined && storeSpeedLimit(input.speed_limit) !== storeSpeedLimit(before.speed_limit))
      patch.speed_limit = storeSpeedLimit(input.speed_limit);
    if (input.quota !== undefined && storeQuota(input.quota) !== storeQuota(before.quota)) patch.quota = storeQuota(input.quota);
    if (!Object.keys(patch).length) return before;
    try {
      await this.Group.update({ ...patch, updated_at: this.deps.clock() }, { where: { id } });
    } catch (err) {
      if (err instanceof UniqueConstraintError) throw nameConflict(String(input.name));
      throw err;
    }
    await this.deps.events.emit({
      type: 'peer_group_updated',
      group_id: id,
      name: patch.name ?? before.name,
      fields: Object.keys(patch),
      actor: actor ?? null,
    });
    return this.get(id);
  }

  /** Deletes a group; its members get group_id null. */
  async remove(id: number, actor?: number): Promise<{ id: number; name: string; peers_ungrouped: number }> {
    const before = await this.get(id);
    const s = this.deps.db.sequelize;
    const now = this.deps.clock();
    const ungrouped = await s.transaction(async (transaction) => {
      const [n] = await this.deps.db.models.Peer.update({ group_id: null, updated_at: now }, { where: { group_id: id }, transaction });
      await this.Group.destroy({ where: { id }, transaction });
      return n;
    });
    await this.deps.events.emit({ type: 'peer_group_deleted', group_id: id, name: before.name, peers_ungrouped: ungrouped, actor: actor ?? null });
    return { id, name: before.name, peers_ungrouped: ungrouped };
  }
}
