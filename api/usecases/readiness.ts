/**
 * `GET /readyz` as one use case: whether this process can serve, from the pieces it depends on
 * (PostgreSQL with every migration of this build, Temporal, the object store). A probe of the
 * process, not a unit of work of a workspace: it has no scope and pings the pool itself.
 */
import { pingDatabase } from '../../db/pool.js';
import { pendingMigrations } from '../../db/orm.js';
import type { AppDeps } from '../deps.js';

async function timed(fn: () => Promise<unknown>) {
  const t = performance.now();
  try {
    await fn();
    return { ok: true, ms: Math.round(performance.now() - t) };
  } catch (e) {
    return { ok: false, ms: Math.round(performance.now() - t), error: e instanceof Error ? e.message : String(e) };
  }
}

export async function readiness(deps: AppDeps) {
  if (deps.shuttingDown) return { ok: false, body: { status: 'degraded' as const, checks: { shutdown: { ok: false, ms: 0, error: 'the process is shutting down: it serves what it gets until it drains' } } } };
  const checks = {
    database: await timed(() => pingDatabase(deps.pool)),
    temporal: await timed(() => deps.temporal.workflowService.getSystemInfo({})),
    objectStore: await timed(() => deps.storage.ping()),
    schema: await timed(async () => {
      const pending = await pendingMigrations(deps.orm);
      if (pending.length) throw new Error(`the database lacks ${pending.length} migration(s) of this build (${pending.join(', ')}): run npm run start:migrate (npm start migrates when it starts)`);
    }),
  };
  const ok = Object.values(checks).every((c) => c.ok);
  return { ok, body: { status: ok ? ('ready' as const) : ('degraded' as const), checks } };
}
