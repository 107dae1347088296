/**
 * The raw `pg` side of the one pool a process holds. The pool itself is the ORM's
 * (`db/connect.ts`: `orm.em.getConnection().getNativeClient()`); `rawPool` hands it to the
 * set-based paths the ORM does not model (COPY, credit debits under a row lock, the named hot-path
 * reads) with pg's default type parsing.
 */
import pg from 'pg';

// bigint/numeric come back as strings by default; counts and balances fit in a JS number. Global:
// the ORM's pool falls back to these parsers for every type it does not override itself.
pg.types.setTypeParser(20, (v) => Number(v));

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
export type Queryable = Pick<pg.Pool, 'query'> | Pick<pg.PoolClient, 'query'>;

/** Told about connections that died (a database restart, a failover); the process goes on. */
export type ConnectionErrorListener = (err: Error) => void;

/**
 * A connection that dies emits 'error' on its client; without a listener that is an uncaught
 * exception that ends the process. pg-pool listens only while a client is idle (re-emitted as the
 * pool's 'error'), so a checked-out client (a transaction, a COPY) needs its own listener: the
 * query in flight rejects anyway, and the pool drops the broken client on release.
 */
export function reportConnectionErrors(pool: pg.Pool, onError: ConnectionErrorListener = () => {}): void {
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
}

/**
 * The ORM configures its pool to return date/time values as strings (its own hydration parses
 * them); the raw code was written against pg's defaults (Date objects). Every query made through
 * this view carries pg's default parsers (`pg.types`, with the global bigint parser above), so
 * both sides keep their types on the same connections. Anything else (counts, `end`, events)
 * is the pool itself.
 */
export function rawPool(pool: pg.Pool): pg.Pool {
  const connect = async () => rawClient(await pool.connect());
  return forwardExcept(pool, { query: rawQuery(pool), connect });
}

function rawClient(client: pg.PoolClient): pg.PoolClient {
  return forwardExcept(client, { query: rawQuery(client) });
}

/** pg's query forms: (text, values?, cb?), (config, values?, cb?), (submittable). Raw SQL: none of its own; it forwards the caller's statement with pg's types. */
function rawQuery(target: { query: (...args: any[]) => any }) {
  return (first: unknown, ...rest: unknown[]) => {
    if (typeof first === 'string') return target.query({ text: first, types: pg.types }, ...rest);
    // A Submittable (COPY stream, cursor) parses nothing through the result types.
    if (first && typeof first === 'object' && typeof (first as { submit?: unknown }).submit !== 'function' && !(first as pg.QueryConfig).types) {
      return target.query({ ...(first as pg.QueryConfig), types: pg.types }, ...rest);
    }
    return target.query(first, ...rest);
  };
}

function forwardExcept<T extends object>(target: T, own: Record<string, unknown>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (typeof prop === 'string' && Object.hasOwn(own, prop)) return own[prop];
      const v = Reflect.get(t, prop, t);
      // Methods run on the pool/client itself, never on the view (pg keeps state on `this`).
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

/** Runs `fn` in a transaction on one client of the pool. */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await inTransaction(client, fn);
  } finally {
    client.release();
  }
}

/** Runs `fn` in a transaction on a client the caller holds (and releases). Raw SQL: transaction control on a pg client. */
export async function inTransaction<T>(client: pg.PoolClient, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  await client.query('begin');
  try {
    const out = await fn(client);
    await client.query('commit');
    return out;
  } catch (e) {
    await client.query('rollback').catch(() => {});
    throw e;
  }
}

/** One round trip to PostgreSQL (readiness check); rejects when the database does not answer. Raw SQL: no table. */
export async function pingDatabase(db: Queryable): Promise<void> {
  await db.query('select 1');
}
