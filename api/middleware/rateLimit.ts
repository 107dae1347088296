/**
 * Per-key fixed-window rate limit kept in PostgreSQL, so every API replica shares the count.
 * Over the limit: 429 `rate_limited` with `Retry-After`; every response carries `RateLimit-*`.
 */
import type { Context } from 'koa';
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
