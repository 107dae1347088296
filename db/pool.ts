/**
 * A plain `pg` pool beside the ORM, for the set-based paths the ORM does not model: COPY,
 * credit debits under a row lock, idempotency records, rate-limit counters.
 */
import pg from 'pg';

// bigint/numeric come back as strings by default; counts and balances fit in a JS number.
pg.types.setTypeParser(20, (v) => Number(v));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

export function createPool(databaseUrl: string, max = Number(process.env.PG_POOL_MAX ?? 10)): pg.Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, idleTimeoutMillis: 30_000 });
  // An idle client that loses its connection must not crash the process.
  pool.on('error', () => {});
  return pool;
}

/** Runs `fn` in a transaction on one client of the pool. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const out = await fn(client);
    await client.query('commit');
    return out;
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}
