/**
 * How many API processes run now, for the per-key rate limit (api/middleware/rateLimit.ts): this
 * process announces itself every `API_REPLICA_HEARTBEAT_MS` and counts the replicas seen within
 * three heartbeats (db/apiReplicas.ts). One statement pair per heartbeat, none per request. Until
 * the first heartbeat answers, and while the database does not, the last count stands (1 at
 * start). A clean shutdown removes the row, so the others count one fewer at their next beat; a
 * crashed replica stops counting after three heartbeats.
 */
import type { Logger } from 'pino';
import { v7 as uuidv7 } from 'uuid';
import { heartbeat, leave, removeStaleReplicas } from '../db/apiReplicas.js';
import type { Queryable } from '../db/pool.js';

export interface ReplicaCount {
  /** Replicas running now, this one included (≥ 1). */
  count(): number;
  stop(): Promise<void>;
}

/** Rows of replicas unseen for this long are removed by whichever replica beats. */
const STALE_ROW_SECONDS = 3600;

export function startReplicaHeartbeat(db: Queryable, opts: { intervalMs: number; log: Logger }): ReplicaCount & { ready: Promise<void> } {
  const id = uuidv7();
  const ttlSeconds = (3 * opts.intervalMs) / 1000;
  let replicas = 1;
  let beats = 0;
  let stopped = false;
  let inFlight: Promise<void> = Promise.resolve();
  const beat = async () => {
    if (stopped) return;
    try {
      replicas = await heartbeat(db, id, ttlSeconds);
      if (++beats % 100 === 1) await removeStaleReplicas(db, STALE_ROW_SECONDS);
    } catch (err) {
      opts.log.warn({ err: (err as Error).message }, 'replica heartbeat failed; the rate limit keeps the last replica count');
    }
  };
  const ready = (inFlight = beat());
  const timer = setInterval(() => void (inFlight = beat()), opts.intervalMs);
  timer.unref();
  return {
    ready,
    count: () => replicas,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      // After the beat in flight, or it would announce this replica again.
      await inFlight;
      await leave(db, id).catch(() => {});
    },
  };
}
