/** What the API tells running publish workflows (`publish-<postId>-<n>`, workflows/scheduling.ts). */
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import pLimit from 'p-limit';
import type { ReplacedRow } from '../db/schedules.js';
import { publishWorkflowId } from '../domain/publishing.js';
import { unscheduleUpdate } from '../workflows/contract/publishing.js';
import type { AppDeps } from './deps.js';

const UPDATE_CONCURRENCY = 16;
/** How long the API waits for a workflow to acknowledge an unschedule (a worker must take it). */
const UPDATE_DEADLINE_MS = 5_000;

/**
 * Tells the workflows of rows that no longer exist (or were cancelled) to stop waiting, with
 * bounded parallelism, as the `unscheduleRow` Update. The database is the truth: the cancelled
 * row can no longer be claimed, so the answer stays the same whatever the workflow says. A
 * refusal (the workflow waits for another row, or no longer waits) and a workflow that is not
 * running (closed, or not dispatched yet) are expected; anything else (no worker within the
 * deadline, Temporal unreachable) is logged, and the workflow ends at its claim.
 */
export async function unscheduleWaitingPublishes(deps: AppDeps, rows: ReplacedRow[]): Promise<void> {
  const limit = pLimit(UPDATE_CONCURRENCY);
  await Promise.all(
    rows.map((r) =>
      limit(async () => {
        const workflowId = publishWorkflowId(r.postId, r.n);
        await deps.temporal.connection
          .withDeadline(Date.now() + UPDATE_DEADLINE_MS, () => deps.temporal.workflow.getHandle(workflowId).executeUpdate(unscheduleUpdate, { args: [{ scheduleId: r.id }] }))
          .catch((err: unknown) => {
            if (err instanceof WorkflowUpdateFailedError || err instanceof WorkflowNotFoundError) return;
            deps.log.warn({ err, workflowId, scheduleId: r.id }, 'unschedule not acknowledged; the workflow stops at its claim');
          });
      }),
    ),
  );
}
