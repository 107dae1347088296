/** What activities may touch; created once per worker process. */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../domain/config.js';
import type { MikroORM } from '../db/orm.js';
import type { ObjectStore } from '../infra/objectStore.js';
import type { Pool } from '../db/pool.js';

export interface ActivityDeps {
  config: Config;
  orm: MikroORM;
  /** The ORM's pool seen with pg's default types (`rawPool`), for the raw SQL left in db/ (COPY). */
  pool: Pool;
  storage: ObjectStore;
  /** For activities that start or signal other workflows (schedule dispatch). */
  temporal: Client;
  log: Logger;
}

