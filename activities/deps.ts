/** What activities may touch; created once per worker process. */
import { RequestContext } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { Config } from '../domain/config.js';
import type { MikroORM } from '../db/orm.js';
import type { ObjectStore } from '../infra/objectStore.js';
import type { Pool } from '../db/pool.js';

export interface ActivityDeps {
  config: Config;
  orm: MikroORM;
  pool: Pool;
  storage: ObjectStore;
  /** For activities that start or signal other workflows (schedule dispatch). */
  temporal: Client;
  log: Logger;
}

/** The activity's entity manager: its RequestContext fork (worker/ormContext.ts), else a fork of its own. */
export function activityEm(deps: Pick<ActivityDeps, 'orm'>): EntityManager {
  return (RequestContext.getEntityManager(deps.orm.em.name) as EntityManager | undefined) ?? deps.orm.em.fork();
}
