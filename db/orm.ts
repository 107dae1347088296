import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type pg from 'pg';
import { entities } from './entities.js';
import { migrationsList } from './migrations/index.js';
import { rawPool, reportConnectionErrors, type ConnectionErrorListener } from './pool.js';
import { pgTls } from './pgConnection.js';
import { enforceTenancy } from './tenancy.js';

export type { MikroORM } from '@mikro-orm/postgresql';

/** The process's one connection pool: the ORM's, shared with the raw `pg` paths (`openDatabase`). */
export interface PoolSettings {
  /** Connections at most (default 10). */
  max?: number;
  /** Server-side `statement_timeout` in ms of every connection (0 or absent: none). */
  statementTimeoutMs?: number;
  /**
   * How long getting a connection may take, opening one included (default 10 s): a database that
   * accepts the TCP connection and then stalls fails requests and `/readyz` instead of hanging them.
   */
  connectionTimeoutMs?: number;
  /** Told about connections that died (a database restart, a failover); the process goes on. */
  onConnectionError?: ConnectionErrorListener;
  /**
   * 'enforced' (the API and the worker, `openStores`): every connection runs as `app_tenant` in the
   * scope of the code that checks it out (`db/tenancy.ts`), bound by row-level security. Absent:
   * the connecting role's own session, for the tools that own the schema (migrations, the admin
   * CLI, the dataset import, test and bench fixtures).
   */
  tenancy?: 'enforced';
}

export const DEFAULT_CONNECTION_TIMEOUT_MS = 10_000;

export function ormOptions(databaseUrl: string, extra: Partial<Options> = {}, pool: PoolSettings = {}): Options {
  return {
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    // Hand-written migrations: no schema snapshot files are written into the tree.
    migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false, snapshotOnMigrate: false },
    // Entities are fetched inside a RequestContext (per request, per activity) or an explicit fork.
    allowGlobalContext: false,
    // Relations between entities exist to declare the FKs (`mapToPk`: the property is the id); the
    // workspace filter applies to each queried entity's own `workspace_id`, so joining a parent
    // only to filter it again (the default) would cost a join per relation and add nothing.
    filtersOnRelations: false,
    autoJoinRefsForFilters: false,
    debug: false,
    pool: { min: 0, max: pool.max ?? 10, idleTimeoutMillis: 30_000 },
    driverOptions: {
      // TLS as DATABASE_URL's sslmode/sslrootcert (or PGSSL*) say: the ORM reads only host, port, user and database from the URL.
      ssl: pgTls(databaseUrl).ssl,
      // Passed to pg.Pool, which sends it in each connection's startup packet: the session's
      // default, which a `reset all` keeps.
      ...(pool.statementTimeoutMs ? { statement_timeout: pool.statementTimeoutMs } : {}),
      // pg.Pool's acquire bound: waiting for a free connection or for a new one to be ready.
      connectionTimeoutMillis: pool.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
      // The ORM already keeps a dying connection from ending the process (it logs at debug
      // level only); the process's own listener reports it.
      onPoolCreated: (created: pg.Pool) => {
        reportConnectionErrors(created, pool.onConnectionError);
        if (pool.tenancy === 'enforced') enforceTenancy(created);
      },
    },
    ...extra,
  };
}

export async function openOrm(databaseUrl: string, extra: Partial<Options> = {}, pool: PoolSettings = {}): Promise<MikroORM> {
  return MikroORM.init(ormOptions(databaseUrl, extra, pool));
}

export interface Database {
  orm: MikroORM;
  /** The ORM's own pool, seen with pg's default type parsing (`rawPool`), for the raw `pg` code. */
  pool: pg.Pool;
  close(): Promise<void>;
}

/** The ORM and the raw view of its pool: one pool per process. */
export async function openDatabase(databaseUrl: string, pool: PoolSettings = {}, extra: Partial<Options> = {}): Promise<Database> {
  const orm = await openOrm(databaseUrl, extra, pool);
  const native = await orm.em.getConnection().getNativeClient();
  return { orm, pool: rawPool(native), close: () => orm.close(true) };
}

export async function migrate(orm: MikroORM): Promise<void> {
  await orm.migrator.up();
}

/** Names of this build's migrations the database has not applied (readiness; `npm run start:migrate` applies them). */
export async function pendingMigrations(orm: MikroORM): Promise<string[]> {
  return (await orm.migrator.getPending()).map((m) => m.name);
}
