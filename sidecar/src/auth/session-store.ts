// koa-session external store: admin-UI sessions live in the `sessions` table (server-side);
// the cookie only carries the random session id.
import { Op } from 'sequelize';
import type { Models, SessionRow } from '../db/models.js';
import type { Clock } from '../util/clock.js';

export class DbSessionStore {
  constructor(private models: Models, private clock: Clock) {}

  async get(sid: string): Promise<Record<string, unknown> | undefined> {
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

  async set(sid: string, sess: Record<string, unknown>, maxAge: number | 'session' | undefined): Promise<void> {
    const ttl = typeof maxAge === 'number' ? maxAge : 86_400_000;
    const userId = typeof sess.userId === 'number' ? sess.userId : null;
    await this.models.Session.upsert({ sid, user_id: userId, data: JSON.stringify(sess), expires_at: this.clock() + ttl });
  }

  async destroy(sid: string): Promise<void> {
    await this.models.Session.destroy({ where: { sid } });
  }

  async prune(): Promise<number> {
    return this.models.Session.destroy({ where: { expires_at: { [Op.lte]: this.clock() } } });
  }
}
