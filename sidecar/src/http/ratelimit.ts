// Per-IP rate limits (rate-limiter-flexible, in memory). Every response of a limited scope carries
// Ratelimit-Limit, Ratelimit-Remaining and Ratelimit-Reset (seconds); over the limit: 429.
import type Koa from 'koa';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { msg } from '@gatehouse/common/messages/index.js';
import { AppError } from '../util/errors.js';
import type { RateLimitName } from './registry.js';

export interface RateLimitSpec {
  points: number;
  /** seconds */
  duration: number;
}

export class RateLimits {
  private limiters = new Map<RateLimitName, { limiter: RateLimiterMemory; spec: RateLimitSpec }>();
  constructor(specs: Record<RateLimitName, RateLimitSpec>) {
    for (const [name, spec] of Object.entries(specs) as [RateLimitName, RateLimitSpec][]) {
      this.limiters.set(name, { limiter: new RateLimiterMemory({ points: spec.points, duration: spec.duration, keyPrefix: name }), spec });
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
