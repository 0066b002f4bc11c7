// koa-session external store: admin-UI sessions live in the `sessions` table (server-side);
// the cookie only carries the random session id, and the table only its SHA-256 (storedSid), so a
// copy of the database (a backup, a dump, a stolen disk) holds no session that could be replayed.
// Rows written before this keyed by the plain id are never found again and go at their expiry.
import crypto from 'node:crypto';
import { Op } from 'sequelize';
import type { Models, SessionRow } from '../db/models.js';
import type { Clock } from '../util/clock.js';

/** The key a session is stored under: the SHA-256 (hex) of the cookie's session id. */
export const storedSid = (sid: string): string => crypto.createHash('sha256').update(sid).digest('hex');

export class DbSessionStore {
  constructor(
    private models: Models,
    private clock: Clock,
  ) {}

  async get(cookieSid: string): Promise<Record<string, unknown> | undefined> {
    const sid = storedSid(cookieSid);
    const row = (await this.models.Session.findByPk(sid, { raw: true })) as SessionRow | null;
    if (!row) return undefined;
    if (Number(row.expires_at) <= this.clock()) {
      await this.models.Session.destroy({ where: { sid } });
      return undefined;
    }
    try {
      return JSON.parse(row.data);
    } catch {
      return undefined;
    }
  }

  async set(cookieSid: string, sess: Record<string, unknown>, maxAge: number | 'session' | undefined): Promise<void> {
    const ttl = typeof maxAge === 'number' ? maxAge : 86_400_000;
    const userId = typeof sess.userId === 'number' ? sess.userId : null;
    await this.models.Session.upsert({ sid: storedSid(cookieSid), user_id: userId, data: JSON.stringify(sess), expires_at: this.clock() + ttl });
  }

  async destroy(cookieSid: string): Promise<void> {
    await this.models.Session.destroy({ where: { sid: storedSid(cookieSid) } });
  }

  async prune(): Promise<number> {
    return this.models.Session.destroy({ where: { expires_at: { [Op.lte]: this.clock() } } });
  }
}
