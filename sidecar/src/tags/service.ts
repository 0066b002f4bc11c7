// Tags: a registry of names (tags table) independent of the comma-separated lists on peers. The
// list merges both; renaming changes the name in both; deleting a name removes it from the registry and from every peer's list
// (case-insensitive, whole entries only: removing "web" leaves "webserver").
import { msg } from '@gatehouse/common/messages/index.js';
import { Op } from 'sequelize';
import type { Deps } from '../deps.js';
import type { PeerRow } from '../peers/model.js';
import type { TagRow } from './model.js';
import { AppError, notFound } from '../util/errors.js';
import { renameTag, splitTags, stripTag, tagKey } from './names.js';
import type { TagView } from './schema.js';
import { findRows, findRow } from '../db/define.js';

export class TagsService {
  constructor(private deps: Deps) {}

  private async peerTags(): Promise<Pick<PeerRow, 'id' | 'tags'>[]> {
    return await findRows(this.deps.db.models.Peer, { attributes: ['id', 'tags'], where: { tags: { [Op.ne]: '' } } });
  }

  async list(): Promise<TagView[]> {
    const [registry, peers] = await Promise.all([findRows(this.deps.db.models.Tag), this.peerTags()]);
    const byKey = new Map<string, TagView>();
    for (const t of registry) byKey.set(t.name_lower, { id: t.id, name: t.name, peer_count: 0, registered: true });
    for (const p of peers) {
      for (const name of new Set(splitTags(p.tags))) {
        const k = tagKey(name);
        const v = byKey.get(k) ?? { id: null, name, peer_count: 0, registered: false };
        v.peer_count++;
        byKey.set(k, v);
      }
    }
    return [...byKey.values()].sort((a, b) => a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }));
  }

  /** Registers a name; an existing name (any case) is left as it is (created: false). */
  async create(name: string, actor?: number): Promise<{ tag: TagView; created: boolean }> {
    const { Tag } = this.deps.db.models;
    const k = tagKey(name);
    const count = async () => (await this.peerTags()).filter((p) => splitTags(p.tags).some((t) => tagKey(t) === k)).length;
    const existing = await findRow(Tag, { where: { name_lower: k } });
    if (existing) return { tag: { id: existing.id, name: existing.name, peer_count: await count(), registered: true }, created: false };
    const [row, created] = await Tag.findOrCreate({ where: { name_lower: k }, defaults: { name, name_lower: k, created_at: this.deps.clock() } });
    const r = row.get({ plain: true }) as TagRow;
    if (created) await this.deps.events.emit({ type: 'tag_created', tag_id: r.id, name, actor: actor ?? null });
    return { tag: { id: r.id, name: r.name, peer_count: await count(), registered: true }, created };
  }

  /**
   * Renames a tag in the registry and on every peer that carries it (case-insensitive, whole names;
   * a peer keeps the tag in its place). A change of case only is allowed; a new name that another
   * tag already has is refused (409 with fields.name): delete one of them instead.
   */
  async rename(from: string, to: string, actor?: number): Promise<{ from: string; to: string; registered: boolean; peers_updated: number }> {
    const { Tag, Peer } = this.deps.db.models;
    const k = tagKey(from);
    const kTo = tagKey(to);
    const now = this.deps.clock();
    const all = await this.peerTags();
    const peers = all.filter((p) => splitTags(p.tags).some((t) => tagKey(t) === k));
    const registered = await findRow(Tag, { where: { name_lower: k } });
    if (!registered && !peers.length) throw notFound(msg('tag.not_found', { name: from }));
    if (kTo !== k) {
      const taken = (await Tag.count({ where: { name_lower: kTo } })) > 0 || all.some((p) => splitTags(p.tags).some((t) => tagKey(t) === kTo));
      if (taken) throw new AppError('conflict', msg('tag.name_taken', { name: to }), { name: msg('tag.field.name_taken') });
    }
    await this.deps.db.sequelize.transaction(async (transaction) => {
      for (const p of peers) await Peer.update({ tags: renameTag(p.tags, from, to), updated_at: now }, { where: { id: p.id }, transaction });
      if (registered) await Tag.update({ name: to, name_lower: kTo }, { where: { id: registered.id }, transaction });
    });
    await this.deps.events.emit({ type: 'tag_renamed', from, to, registered: !!registered, peers_updated: peers.length, actor: actor ?? null });
    return { from, to, registered: !!registered, peers_updated: peers.length };
  }

  /** Removes the name from the registry and from every peer; 404 when it is in neither. */
  async remove(name: string, actor?: number): Promise<{ name: string; registered: boolean; peers_updated: number }> {
    const { Tag, Peer } = this.deps.db.models;
    const k = tagKey(name);
    const now = this.deps.clock();
    const peers = (await this.peerTags()).filter((p) => splitTags(p.tags).some((t) => tagKey(t) === k));
    const s = this.deps.db.sequelize;
    const removedFromRegistry = await s.transaction(async (transaction) => {
      for (const p of peers) await Peer.update({ tags: stripTag(p.tags, name), updated_at: now }, { where: { id: p.id }, transaction });
      return Tag.destroy({ where: { name_lower: k }, transaction });
    });
    if (!removedFromRegistry && !peers.length) throw notFound(msg('tag.not_found', { name }));
    await this.deps.events.emit({ type: 'tag_deleted', name, registered: removedFromRegistry > 0, peers_updated: peers.length, actor: actor ?? null });
    return { name, registered: removedFromRegistry > 0, peers_updated: peers.length };
  }
}
