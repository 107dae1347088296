/**
 * A plain `pg` pool beside the ORM, for the set-based paths the ORM does not model: COPY,
 * credit debits under a row lock, idempotency records.
 */
import pg from 'pg';

// bigint/numeric come back as strings by default; counts and balances fit in a JS number.
pg.types.setTypeParser(20, (v) => Number(v));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

export interface PoolOptions {
  max?: number;
  /** Server-side `statement_timeout` in ms for every connection of the pool (0 or absent: none). */
  statementTimeoutMs?: number;
  /** Told about connections that died (a database restart, a failover); the process goes on. */
  onConnectionError?: (err: Error) => void;
}

export function createPool(databaseUrl: string, opts: PoolOptions | number = {}): pg.Pool {
  const o = typeof opts === 'number' ? { max: opts } : opts;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: o.max ?? Number(process.env.PG_POOL_MAX ?? 10),
    idleTimeoutMillis: 30_000,
    // Sent in the startup packet, so it is the session's default (a `reset all` keeps it).
    ...(o.statementTimeoutMs ? { statement_timeout: o.statementTimeoutMs } : {}),
  });
  const onError = o.onConnectionError ?? (() => {});
  // A connection that dies emits 'error' on its client; without a listener that is an uncaught
  // exception that ends the process. pg-pool listens only while a client is idle (re-emitted
  // here as the pool's 'error'), so a checked-out client (a transaction, a COPY) needs its own
  // listener: the query in flight rejects anyway, and the pool drops the broken client on release.
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
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

/** One round trip to PostgreSQL (readiness check); rejects when the database does not answer. */
export async function pingDatabase(db: Queryable): Promise<void> {
  await db.query('select 1');
}
