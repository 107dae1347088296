/**
 * Opens what every process talks to: the ORM, the plain pg pool, the object store and a Temporal
 * client (connected lazily, so tools that never start a workflow never dial Temporal).
 */
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../domain/config.js';
import { openOrm, type MikroORM } from './orm.js';
import { createPool, type Pool } from './pool.js';
import { createObjectStore, type ObjectStore } from './objectStore.js';

export interface Stores {
  orm: MikroORM;
  pool: Pool;
  storage: ObjectStore;
  temporal: Client;
  close(): Promise<void>;
}

export async function openStores(config: Config, opts: { poolMax?: number } = {}): Promise<Stores> {
  const orm = await openOrm(config.databaseUrl);
  const pool = createPool(config.databaseUrl, opts.poolMax);
  const storage = createObjectStore(config.s3);
  const connection = Connection.lazy({ address: config.temporal.address });
  const temporal = new Client({ connection, namespace: config.temporal.namespace });
  return {
    orm,
    pool,
    storage,
    temporal,
    async close() {
      await Promise.allSettled([orm.close(true), pool.end(), connection.close()]);
    },
  };
}
