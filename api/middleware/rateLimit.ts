/**
 * Per-key fixed-window rate limit kept in PostgreSQL, so every API replica shares the count.
 * Over the limit: 429 `rate_limited` with `Retry-After`; every response carries `RateLimit-*`.
 * Requests without a valid key (anonymous routes, missing or wrong keys) have a per-IP limit of
 * their own, kept in memory: it exists to keep floods off the key lookup and the database, so a
 * count per replica is enough.
 */
import type { Context } from 'koa';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from '../../domain/errors.js';
import type { Pool } from '../../db/pool.js';

export async function enforceRateLimit(pool: Pool, ctx: Context, keyId: string, perMinute: number): Promise<void> {
  const r = await pool.query<{ count: number; reset: number }>(
    `insert into rate_limit_windows (key_id, window_start, count) values ($1, date_trunc('minute', now()), 1)
     on conflict (key_id, window_start) do update set count = rate_limit_windows.count + 1
     returning count, ceil(extract(epoch from (window_start + interval '1 minute' - now())))::int as reset`,
    [keyId],
  );
  const { count, reset } = r.rows[0]!;
  const resetSecs = Math.max(1, reset);
  ctx.set('RateLimit-Limit', String(perMinute));
  ctx.set('RateLimit-Remaining', String(Math.max(0, perMinute - count)));
  ctx.set('RateLimit-Reset', String(resetSecs));
  if (count > perMinute) {
    throw new ApiError(429, 'rate_limited', `Rate limit of ${perMinute} requests per minute exceeded; retry in ${resetSecs}s`, undefined, {
      'Retry-After': String(resetSecs),
    });
  }
  // Old windows are dropped now and then by whoever happens to pass.
  if (count === 1 && Math.random() < 0.01) {
    void pool.query(`delete from rate_limit_windows where window_start < now() - interval '5 minutes'`).catch(() => {});
  }
}

export type AnonymousLimiter = RateLimiterMemory;

/** `ANON_RATE_LIMIT_PER_MINUTE` (default 120) requests per minute per client IP without a valid key. */
export function createAnonymousLimiter(env: NodeJS.ProcessEnv): AnonymousLimiter {
  const perMinute = Number(env.ANON_RATE_LIMIT_PER_MINUTE);
  return new RateLimiterMemory({ points: Number.isInteger(perMinute) && perMinute > 0 ? perMinute : 120, duration: 60 });
}

/** Counts one request without a valid key against the client's IP; 429 over the limit. */
export async function enforceAnonymousLimit(limiter: AnonymousLimiter, ctx: Context): Promise<void> {
  let res: RateLimiterRes;
  try {
    res = await limiter.consume(ctx.ip || 'unknown');
  } catch (e) {
    if (!(e instanceof RateLimiterRes)) throw e;
    const retry = Math.max(1, Math.ceil(e.msBeforeNext / 1000));
    ctx.set('RateLimit-Limit', String(limiter.points));
    ctx.set('RateLimit-Remaining', '0');
    ctx.set('RateLimit-Reset', String(retry));
    throw new ApiError(429, 'rate_limited', `Too many requests without a valid API key from this address; retry in ${retry}s`, undefined, {
      'Retry-After': String(retry),
    });
  }
  ctx.set('RateLimit-Limit', String(limiter.points));
  ctx.set('RateLimit-Remaining', String(res.remainingPoints));
  ctx.set('RateLimit-Reset', String(Math.max(1, Math.ceil(res.msBeforeNext / 1000))));
}
