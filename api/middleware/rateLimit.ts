/**
 * Rate limits, counted in each API process's memory (`rate-limiter-flexible`): no database write
 * per request. Over a limit: 429 `rate_limited` with `Retry-After`; every response carries
 * `RateLimit-*`.
 *
 * Per key: `RATE_LIMIT_PER_MINUTE` requests per key per minute, shared by the API processes that
 * run now: each announces itself every `API_REPLICA_HEARTBEAT_MS` (H) and counts the others
 * (api/replicas.ts), and admits its share `ceil(limit / N)` of the N it last counted, in a fixed
 * 60 s window that opens with the key's first request there. The bound, per key and window:
 * - N replicas, steady: at most `N × ceil(limit / N)` (< limit + N) admitted;
 * - a replica joins: the others learn it within H and meanwhile keep their larger share, so the
 *   window it joins in admits at most `N × ceil(limit / N) + ceil(limit / (N + 1))`
 *   (< limit + N + ceil(limit / (N + 1)));
 * - a replica leaves: the others count one fewer at their next beat (a crash: after 3H); until then
 *   their share is smaller — stricter, never looser.
 * Fixed windows, as before: a burst straddling a window's end can reach twice that within 60 s.
 * A client whose requests all reach one replica (one keep-alive connection, a sticky balancer)
 * gets that replica's share: stricter, never looser. `RateLimit-Remaining` extrapolates this
 * replica's remaining share to all replicas (exact with one replica).
 * (test/integration/replicaRateLimit.test.ts starts a second API under load.)
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
  /** Counts every request of a key in its window, up to the whole limit; the share is checked on top. */
  limiter: RateLimiterMemory;
  perMinute: number;
  /** API processes running now (≥ 1). */
  replicas: () => number;
}

export function createKeyLimiter(perMinute: number, replicas: () => number = () => 1): KeyLimiter {
  return { limiter: new RateLimiterMemory({ points: perMinute, duration: 60 }), perMinute, replicas };
}

function setHeaders(ctx: Context, limit: number, remaining: number, resetSecs: number) {
  ctx.set('RateLimit-Limit', String(limit));
  ctx.set('RateLimit-Remaining', String(remaining));
  ctx.set('RateLimit-Reset', String(resetSecs));
}

const secondsUntil = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

/** Counts one request of an authenticated key; 429 over this replica's share of its limit. */
export async function enforceRateLimit(keys: KeyLimiter, ctx: Context, keyId: string): Promise<void> {
  const replicas = Math.max(1, keys.replicas());
  const share = Math.ceil(keys.perMinute / replicas);
  let res: RateLimiterRes;
  try {
    res = await keys.limiter.consume(keyId);
  } catch (e) {
    if (!(e instanceof RateLimiterRes)) throw e;
    res = e;
  }
  if (res.consumedPoints > share) {
    const retry = secondsUntil(res);
    setHeaders(ctx, keys.perMinute, 0, retry);
    throw new ApiError(429, 'rate_limited', `Rate limit of ${keys.perMinute} requests per minute exceeded; retry in ${retry}s`, undefined, {
      'Retry-After': String(retry),
    });
  }
  setHeaders(ctx, keys.perMinute, Math.min(keys.perMinute, (share - res.consumedPoints) * replicas), secondsUntil(res));
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
