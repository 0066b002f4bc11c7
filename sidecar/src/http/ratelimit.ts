// Per-IP rate limits (rate-limiter-flexible). Every response of a limited scope carries
// Ratelimit-Limit, Ratelimit-Remaining and Ratelimit-Reset (seconds); over the limit: 429.
// One node counts in memory. The nodes of a cluster (GATEHOUSE_CLUSTER) count in the shared
// PostgreSQL database (RateLimiterPostgres on the table rate_limits, migration 084): a client's
// requests count against one limit whichever node answers them.
import type Koa from 'koa';
import type { Sequelize } from 'sequelize';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { msg } from '@gatehouse/common/messages/index.js';
import { AppError } from '../util/errors.js';
import type { RateLimitName } from './registry.js';

export interface RateLimitSpec {
  points: number;
  /** seconds */
  duration: number;
}

export class RateLimits {
  private limiters = new Map<RateLimitName, { limiter: RateLimiterAbstract; spec: RateLimitSpec }>();
  /** shared: the cluster's database (PostgreSQL), where every node counts; absent: this process's memory. */
  constructor(specs: Record<RateLimitName, RateLimitSpec>, shared?: { sequelize: Sequelize }) {
    for (const [name, spec] of Object.entries(specs) as [RateLimitName, RateLimitSpec][]) {
      const opts = { points: spec.points, duration: spec.duration, keyPrefix: name };
      const limiter = shared
        ? new RateLimiterPostgres({ ...opts, storeClient: shared.sequelize, storeType: 'sequelize', tableName: 'rate_limits', tableCreated: true })
        : new RateLimiterMemory(opts);
      this.limiters.set(name, { limiter, spec });
    }
  }

  /**
   * Sets a scope's headers without counting the request (GET /login only shows the form; counting it
   * would spend sign-in attempts on page loads).
   */
  async peek(name: RateLimitName, ctx: Koa.Context): Promise<void> {
    const entry = this.limiters.get(name);
    if (!entry) throw new Error(`unknown rate limit ${name}`);
    const res = await entry.limiter.get(ctx.state.clientIp as string);
    ctx.set('Ratelimit-Limit', String(entry.spec.points));
    ctx.set('Ratelimit-Remaining', String(res ? Math.max(0, entry.spec.points - res.consumedPoints) : entry.spec.points));
    ctx.set('Ratelimit-Reset', String(res ? Math.ceil(res.msBeforeNext / 1000) : entry.spec.duration));
  }

  middleware(name: RateLimitName): Koa.Middleware {
    const entry = this.limiters.get(name);
    if (!entry) throw new Error(`unknown rate limit ${name}`);
    const { limiter, spec } = entry;
    return async (ctx, next) => {
      const key = ctx.state.clientIp as string;
      let res: RateLimiterRes;
      try {
        res = await limiter.consume(key, 1);
      } catch (rej) {
        if (!(rej instanceof RateLimiterRes)) throw rej;
        const reset = Math.ceil(rej.msBeforeNext / 1000);
        ctx.set('Ratelimit-Limit', String(spec.points));
        ctx.set('Ratelimit-Remaining', '0');
        ctx.set('Ratelimit-Reset', String(reset));
        ctx.set('Retry-After', String(reset));
        throw new AppError('rate_limited', msg('request.rate_limited'));
      }
      ctx.set('Ratelimit-Limit', String(spec.points));
      ctx.set('Ratelimit-Remaining', String(res.remainingPoints));
      ctx.set('Ratelimit-Reset', String(Math.ceil(res.msBeforeNext / 1000)));
      await next();
    };
  }
}
