// One-time download links for a peer's client config. An admin makes a link for a peer (it is shown
// once; only the SHA-256 of its token is stored) and sends it to the person who sets the peer up,
// who opens it and downloads the config: the download uses the link up, and every later visit gets
// 410 with a page that says why. Opening the link shows a page with a download button and does not
// use it up, so that a chat or mail client that fetches the link to preview it cannot spend it.
// Links expire (at most LINK_MAX_HOURS) and can be revoked; creating, using and revoking are
// events (activity log, webhooks).
import { Op } from 'sequelize';
import { msg } from '@gatehouse/common/messages/index.js';
import type { Deps } from '../deps.js';
import type { PeersService } from '../peers/service.js';
import { findRow, findRows } from '../db/define.js';
import { notFound } from '../util/errors.js';
import { sha256 } from '../util/crypto.js';
import { generateToken } from '../tokens/service.js';
import type { PeerConfigLinkRow } from './model.js';
import { LINK_DEFAULT_HOURS, LINK_TOKEN_PREFIX, type LinkView } from './schema.js';

const HOUR = 3_600_000;
const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(Number(v)).toISOString());

/** What a visit to a link finds. */
export type LinkLookup = { state: 'active'; row: PeerConfigLinkRow; peerName: string } | { state: 'used' | 'expired' | 'revoked' | 'unknown' };

export class ConfigLinksService {
  constructor(
    private readonly deps: Deps,
    private readonly peers: PeersService,
  ) {}

  private get Link() {
    return this.deps.db.models.PeerConfigLink;
  }

  private stateOf(r: PeerConfigLinkRow): LinkView['state'] {
    if (r.revoked_at !== null && r.revoked_at !== undefined) return 'revoked';
    if (r.used_at !== null && r.used_at !== undefined) return 'used';
    return Number(r.expires_at) <= this.deps.clock() ? 'expired' : 'active';
  }

  view(r: PeerConfigLinkRow): LinkView {
    return {
      id: Number(r.id),
      peer_id: Number(r.peer_id),
      note: r.note ?? null,
      state: this.stateOf(r),
      created_at: iso(r.created_at)!,
      expires_at: iso(r.expires_at)!,
      used_at: iso(r.used_at),
      used_ip: r.used_ip ?? null,
      revoked_at: iso(r.revoked_at),
    };
  }

  /** A new link for a peer (404 for an unknown peer, 409 when its config cannot be built). The token is returned once. */
  async create(peerId: number, o: { expires_in_hours?: number; note?: string | null }, actor?: number): Promise<{ link: LinkView; token: string }> {
    await this.peers.config(peerId); // the peer exists and has a config to give (404 / 409 otherwise)
    const peer = await this.peers.get(peerId);
    const token = generateToken(LINK_TOKEN_PREFIX);
    const now = this.deps.clock();
    const note = o.note ? o.note : null;
    const row = await this.Link.create({
      peer_id: peerId,
      token_hash: sha256(token),
      note,
      created_by: actor ?? null,
      created_at: now,
      expires_at: now + (o.expires_in_hours ?? LINK_DEFAULT_HOURS) * HOUR,
      used_at: null,
      used_ip: null,
      revoked_at: null,
    } as PeerConfigLinkRow);
    const link = this.view(row.get({ plain: true }) as PeerConfigLinkRow);
    await this.deps.events.emit({
      type: 'peer_config_link_created',
      peer_id: peerId,
      name: peer.name,
      link_id: link.id,
      expires_at: link.expires_at,
      note,
      actor: actor ?? null,
    });
    return { link, token };
  }

  async list(peerId: number): Promise<LinkView[]> {
    await this.peers.get(peerId);
    const rows = await findRows(this.Link, { where: { peer_id: peerId }, order: [['id', 'DESC']] });
    return rows.map((r) => this.view(r));
  }

  /** Revokes an unused link (a used, expired or revoked one stays as it is and is answered as it is). */
  async revoke(peerId: number, linkId: number, actor?: number): Promise<LinkView> {
    const peer = await this.peers.get(peerId);
    const r = await findRow(this.Link, { where: { id: linkId, peer_id: peerId } });
    if (!r) throw notFound(msg('resource.not_found', { what: 'Config link' }));
    if (this.stateOf(r) !== 'active') return this.view(r);
    const now = this.deps.clock();
    await this.Link.update({ revoked_at: now }, { where: { id: linkId, revoked_at: { [Op.is]: null }, used_at: { [Op.is]: null } } });
    await this.deps.events.emit({ type: 'peer_config_link_revoked', peer_id: peerId, name: peer.name, link_id: linkId, actor: actor ?? null });
    return this.view({ ...r, revoked_at: now });
  }

  /** What a visit to the link with this token finds (reads only: a visit does not use it up). */
  async lookup(token: string): Promise<LinkLookup> {
    const r = await findRow(this.Link, { where: { token_hash: sha256(token) } });
    if (!r) return { state: 'unknown' };
    const state = this.stateOf(r);
    if (state !== 'active') return { state };
    const peer = await this.peers.get(Number(r.peer_id)).catch(() => null);
    if (!peer) return { state: 'unknown' };
    return { state, row: r, peerName: peer.name };
  }

  /**
   * The download: uses the link up (one conditional update, so two downloads at once cannot both
   * get the config) and returns the config, or the state that refuses it.
   */
  async redeem(
    token: string,
    ip: string,
  ): Promise<{ ok: true; filename: string; text: string } | { ok: false; state: Exclude<LinkLookup['state'], 'active'> }> {
    const found = await this.lookup(token);
    if (found.state !== 'active') return { ok: false, state: found.state };
    const { row } = found;
    const now = this.deps.clock();
    const [n] = await this.Link.update(
      { used_at: now, used_ip: ip.slice(0, 64) },
      { where: { id: row.id, used_at: { [Op.is]: null }, revoked_at: { [Op.is]: null }, expires_at: { [Op.gt]: now } } },
    );
    if (n !== 1) {
      const again = await this.lookup(token);
      return { ok: false, state: again.state === 'active' ? 'used' : again.state };
    }
    let config: { filename: string; text: string };
    try {
      config = await this.peers.config(Number(row.peer_id));
    } catch (err) {
      // the config cannot be built (the peer lost its key): give the link back, and say so
      await this.Link.update({ used_at: null, used_ip: null }, { where: { id: row.id } });
      throw err;
    }
    await this.deps.events.emit({ type: 'peer_config_link_used', peer_id: Number(row.peer_id), name: found.peerName, link_id: Number(row.id), ip });
    return { ok: true, ...config };
  }
}
