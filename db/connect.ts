/**
 * Opens what every process talks to: the ORM with its pool (the process's only one; `pool` is the
 * raw `pg` view of it), the object store and a Temporal client (connected lazily, so tools that
 * never start a workflow never dial Temporal).
 */
import { Client, isGrpcDeadlineError, isGrpcServiceError } from '@temporalio/client';
import type { Config } from '../domain/config.js';
import { openDatabase, type MikroORM } from './orm.js';
import type { Pool } from './pool.js';
import { createObjectStore, type ObjectStore } from '../infra/objectStore.js';
import { dataConverterOf } from '../domain/payloadCodec.js';
import { observePool } from '../telemetry/metrics.js';
import { requestIdClientInterceptor } from '../telemetry/correlation.js';
import { tracingClientInterceptors } from '../telemetry/tracing.js';
import { lazyTemporalConnection } from '../infra/temporalConnection.js';

export interface Stores {
  orm: MikroORM;
  /** The ORM's pool, with pg's default type parsing, for the raw `pg` code (COPY, debits, hot reads). */
  pool: Pool;
  storage: ObjectStore;
  temporal: Client;
  close(): Promise<void>;
}

export interface StoreOptions {
  poolMax?: number;
  /** Which process opens them: picks its `statement_timeout` (none for scripts and tools). */
  role?: 'api' | 'worker';
  /** Told about database connections that died; the process goes on (the query in flight fails). */
  onConnectionError?: (err: Error) => void;
}

export async function openStores(config: Config, opts: StoreOptions = {}): Promise<Stores> {
  const statementTimeoutMs = opts.role ? config.statementTimeoutMs[opts.role] : 0;
  const { orm, pool, close: closeDatabase } = await openDatabase(config.databaseUrl, { max: opts.poolMax, statementTimeoutMs, onConnectionError: opts.onConnectionError, tenancy: 'enforced' });
  const storage = createObjectStore(config.s3);
  const unobservePool = observePool(pool, opts.role ?? 'tool');
  const connection = lazyTemporalConnection(config);
  // Payloads are sealed before they reach Temporal (domain/payloadCodec.ts); the worker uses the same codec.
  // Every workflow started inside a request or an activity carries its request id (telemetry/correlation.ts)
  // and, when tracing is on, its trace context (telemetry/tracing.ts).
  const interceptors = { workflow: [requestIdClientInterceptor, ...tracingClientInterceptors()] };
  const temporal = new Client({ connection, namespace: config.temporal.namespace, dataConverter: dataConverterOf(config), interceptors });
  return {
    orm,
    pool,
    storage,
    temporal,
    async close() {
      unobservePool();
      await Promise.allSettled([closeDatabase(), connection.close()]);
    },
  };
}

/**
 * The Temporal server cannot be reached (restarting, down): the client gave up with gRPC
 * UNAVAILABLE, or its deadline passed. Worth retrying once it is back.
 */
export function isTemporalUnavailable(err: unknown): boolean {
  for (let e = err as { cause?: unknown } | undefined, i = 0; e && typeof e === 'object' && i < 4; e = e.cause as typeof e, i++) {
    if (isGrpcServiceError(e) && e.code === 14) return true;
  }
  return isGrpcDeadlineError(err);
}
