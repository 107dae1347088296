import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities.js';
import { migrationsList } from './migrations/index.js';

export type { MikroORM } from '@mikro-orm/postgresql';

/**
 * `statementTimeoutMs` becomes the server-side `statement_timeout` of every ORM connection. The
 * ORM's pool already listens for 'error' on its clients (PostgreSqlConnection.handlePoolErrors),
 * so a connection that dies fails its query without ending the process.
 */
export function ormOptions(databaseUrl: string, extra: Partial<Options> = {}, statementTimeoutMs = 0): Options {
  return {
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    // Hand-written migrations: no schema snapshot files are written into the tree.
    migrations: { migrationsList, transactional: true, allOrNothing: true, snapshot: false, snapshotOnMigrate: false },
    // Entities are fetched per request; nothing relies on lazy global identity maps.
    allowGlobalContext: false,
    debug: false,
    pool: { min: 0, max: Number(process.env.DB_POOL_MAX ?? 10) },
    // Passed to pg.Pool, which sends it in each connection's startup packet.
    ...(statementTimeoutMs ? { driverOptions: { statement_timeout: statementTimeoutMs } } : {}),
    ...extra,
  };
}

export async function openOrm(databaseUrl: string, extra: Partial<Options> = {}, statementTimeoutMs = 0): Promise<MikroORM> {
  return MikroORM.init(ormOptions(databaseUrl, extra, statementTimeoutMs));
}

export async function migrate(orm: MikroORM): Promise<void> {
  await orm.migrator.up();
}
