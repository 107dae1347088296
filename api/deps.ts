/** Everything a request handler may touch, created once per process. */
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { ReplicaCount } from './replicas.js';
import type { Config } from '../domain/config.js';
import type { MikroORM } from '../db/orm.js';
import type { ObjectStore } from '../infra/objectStore.js';
import type { Pool } from '../db/pool.js';
import type { ApiKeyCache } from './middleware/auth.js';
import type { ContactReader } from '../db/contactRead.js';
import type { BalanceReader } from '../db/credits.js';

export interface AppDeps {
  config: Config;
  orm: MikroORM;
  /** The ORM's pool seen with pg's default types (`rawPool`), for the raw SQL left in db/ (COPY, hot reads). */
  pool: Pool;
  temporal: Client;
  storage: ObjectStore;
  log: Logger;
  /** Authenticated contexts cached in process, kept fresh by `auth_changed` notifications. */
  apiKeys: ApiKeyCache;
  /** GET /contacts/{id}: the reads of one event-loop turn batched into one statement per workspace. */
  readContact: ContactReader;
  /** GET /credits/balance: the reads of one event-loop turn batched into one statement. */
  readBalance: BalanceReader;
  /** API processes running now (api/replicas.ts): they share the per-key rate limit. Absent: one. */
  replicas?: Pick<ReplicaCount, 'count'>;
  /** Set on SIGTERM: /readyz answers 503 while the process still serves (readiness-first shutdown). */
  shuttingDown?: boolean;
}
