/** What the API tells running publish workflows (`publish-<postId>-<n>`, workflows/scheduling.ts). */
import type { ReplacedRow } from '../db/schedules.js';
import { publishWorkflowId } from '../domain/publishing.js';
import { unscheduleSignal } from '../workflows/scheduling.js';
import type { AppDeps } from './deps.js';

const SIGNAL_CONCURRENCY = 16;

/**
 * Tells the workflows of rows that no longer exist (or were cancelled) to stop waiting, with
 * bounded parallelism. A workflow that already ended needs no signal: the database claim stops
 * it anyway, so a failed signal is ignored.
 */
export async function signalUnscheduled(deps: AppDeps, rows: ReplacedRow[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < rows.length) {
      const r = rows[next++]!;
      await deps.temporal.workflow
        .getHandle(publishWorkflowId(r.postId, r.n))
        .signal(unscheduleSignal, { scheduleId: r.id })
        .catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SIGNAL_CONCURRENCY, rows.length) }, worker));
}
