/** Opens the stores every process needs: the ORM, the plain pg pool and the object store. */
import type { Config } from '../domain/config.js';
import { openOrm, type MikroORM } from './orm.js';
import { createPool, type Pool } from './pool.js';
import { createObjectStore, type ObjectStore } from './objectStore.js';

export interface Stores {
  orm: MikroORM;
  pool: Pool;
  storage: ObjectStore;
  close(): Promise<void>;
}

export async function openStores(config: Config, opts: { poolMax?: number } = {}): Promise<Stores> {
  const orm = await openOrm(config.databaseUrl);
  const pool = createPool(config.databaseUrl, opts.poolMax);
  const storage = createObjectStore(config.s3);
  return {
    orm,
    pool,
    storage,
    async close() {
      await Promise.allSettled([orm.close(true), pool.end()]);
    },
  };
}
