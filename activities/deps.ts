/** What activities may touch; created once per worker process. */
import type { Logger } from 'pino';
import type { Config } from '../domain/config.js';
import type { MikroORM } from '../db/orm.js';
import type { ObjectStore } from '../db/objectStore.js';
import type { Pool } from '../db/pool.js';

export interface ActivityDeps {
  config: Config;
  orm: MikroORM;
  pool: Pool;
  storage: ObjectStore;
  log: Logger;
}
