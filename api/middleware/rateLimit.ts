/**
 * Rate limits, counted in each API process's memory (`rate-limiter-flexible`): no database write
 * per request. Over a limit: 429 `rate_limited` with `Retry-After`; every response carries
 * `RateLimit-*`.
 *
 * Per key: `RATE_LIMIT_PER_MINUTE` requests per key per minute shared by `API_REPLICAS` API
 * processes (default 1), each allowing its share `ceil(limit / replicas)` in a fixed window that
 * opens with the key's first request there. The error bound: across N replicas a key is admitted
 * at most `N × ceil(limit / N)` (< limit + N) times per window (fixed windows: as before, a burst
 * straddling a window's end can reach twice that within 60 s); a client whose
 * requests all reach one replica (one keep-alive connection, a sticky balancer) gets its share,
 * so at worst `limit / N` — stricter, never looser. `RateLimit-Remaining` extrapolates this
 * replica's remaining share to all replicas (exact with one replica).
 *
 * Requests without a valid key (anonymous routes, missing or wrong keys) have a per-IP limit of
 * their own: it exists to keep floods off the key look-up and the database, so a count per
 * replica is enough.
 */
import type { Context } from 'koa';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from '../errors.js';

function positiveInt(raw: string | undefined, fallback: number): number {
  const n = Number(raw);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

export interface KeyLimiter {
  limiter: RateLimiterMemory;
  perMinute: number;
  replicas: number;
}

export function createKeyLimiter(perMinute: number, env: NodeJS.ProcessEnv): KeyLimiter {
  const replicas = positiveInt(env.API_REPLICAS, 1);
  return { limiter: new RateLimiterMemory({ points: Math.ceil(perMinute / replicas), duration: 60 }), perMinute, replicas };
}

function setHeaders(ctx: Context, limit: number, remaining: number, resetSecs: number) {
  ctx.set('RateLimit-Limit', String(limit));
  ctx.set('RateLimit-Remaining', String(remaining));
  ctx.set('RateLimit-Reset', String(resetSecs));
}

const secondsUntil = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

/** Counts one request of an authenticated key; 429 over its limit. */
export async function enforceRateLimit(keys: KeyLimiter, ctx: Context, keyId: string): Promise<void> {
  let res: RateLimiterRes;
  try {
    res = await keys.limiter.consume(keyId);
  } catch (e) {
    if (!(e instanceof RateLimiterRes)) throw e;
    const retry = secondsUntil(e);
    setHeaders(ctx, keys.perMinute, 0, retry);
    throw new ApiError(429, 'rate_limited', `Rate limit of ${keys.perMinute} requests per minute exceeded; retry in ${retry}s`, undefined, {
      'Retry-After': String(retry),
    });
  }
  setHeaders(ctx, keys.perMinute, Math.min(keys.perMinute, res.remainingPoints * keys.replicas), secondsUntil(res));
}

export type AnonymousLimiter = RateLimiterMemory;

/** `ANON_RATE_LIMIT_PER_MINUTE` (default 120) requests per minute per client IP without a valid key. */
export function createAnonymousLimiter(env: NodeJS.ProcessEnv): AnonymousLimiter {
  return new RateLimiterMemory({ points: positiveInt(env.ANON_RATE_LIMIT_PER_MINUTE, 120), duration: 60 });
}

/** Counts one request without a valid key against the client's IP; 429 over the limit. */
export async function enforceAnonymousLimit(limiter: AnonymousLimiter, ctx: Context): Promise<void> {
  let res: RateLimiterRes;
  try {
    res = await limiter.consume(ctx.ip || 'unknown');
  } catch (e) {
    if (!(e instanceof RateLimiterRes)) throw e;
    const retry = secondsUntil(e);
    setHeaders(ctx, limiter.points, 0, retry);
    throw new ApiError(429, 'rate_limited', `Too many requests without a valid API key from this address; retry in ${retry}s`, undefined, {
      'Retry-After': String(retry),
    });
  }
  setHeaders(ctx, limiter.points, res.remainingPoints, secondsUntil(res));
}
