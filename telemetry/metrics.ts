/**
 * The process's Prometheus metrics (prom-client): one registry per process, the series every part
 * of the service reports into, and `observePool` for database pool usage. Served by
 * `telemetry/metricsServer.ts` on the operator port (`METRICS_PORT`), never on the API's port.
 * Label values come from small fixed sets (route templates, job types, providers, outcomes),
 * never from ids or raw paths, so the number of series stays bounded.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Pool } from 'pg';

export const registry = new Registry();

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'API request duration by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const jobsStarted = new Counter({
  name: 'jobs_started_total',
  help: 'Jobs whose workflow the API started, by job type',
  labelNames: ['type'] as const,
  registers: [registry],
});

export const jobsCompleted = new Counter({
  name: 'jobs_completed_total',
  help: 'Jobs that ended completed, by job type (counted by the worker that ran the final step)',
  labelNames: ['type'] as const,
  registers: [registry],
});

export const jobsFailed = new Counter({
  name: 'jobs_failed_total',
  help: 'Jobs that ended failed, by job type',
  labelNames: ['type'] as const,
  registers: [registry],
});

export const jobsCancelled = new Counter({
  name: 'jobs_cancelled_total',
  help: 'Jobs that ended cancelled, by job type',
  labelNames: ['type'] as const,
  registers: [registry],
});

export const creditsDebited = new Counter({
  name: 'credits_debited_total',
  help: 'Credits charged (committed debits, replays excluded), by reason',
  labelNames: ['reason'] as const,
  registers: [registry],
});

export const webhookDeliveries = new Counter({
  name: 'webhook_deliveries_total',
  help: 'Job webhook delivery attempts by outcome: delivered (2xx), rejected (another status), failed (no answer: network, blocked, invalid)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const publishOutcomes = new Counter({
  name: 'publish_outcomes_total',
  help: 'Publishing steps by provider and outcome: published, or the provider failure kind',
  labelNames: ['provider', 'outcome'] as const,
  registers: [registry],
});

/** Pools reported by `db_pool_connections`, by the role of the process part that opened them. */
const pools = new Map<Pool, string>();

new Gauge({
  name: 'db_pool_connections',
  help: 'PostgreSQL pool connections by role (api, worker, tool) and state (total, idle, waiting requests)',
  labelNames: ['role', 'state'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const [pool, role] of pools) {
      this.inc({ role, state: 'total' }, pool.totalCount);
      this.inc({ role, state: 'idle' }, pool.idleCount);
      this.inc({ role, state: 'waiting' }, pool.waitingCount);
    }
  },
});

/** Reports `pool` under `role`; the returned function stops it (call it when the pool ends). */
export function observePool(pool: Pool, role: string): () => void {
  pools.set(pool, role);
  return () => void pools.delete(pool);
}

let defaultsCollected = false;
/** Node process metrics (CPU, memory, event-loop lag, GC), once per process that serves metrics. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: registry });
}
