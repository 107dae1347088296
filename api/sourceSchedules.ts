/**
 * Periodic refresh of a listening source (DESIGN §4/§5): `runFrequency` on a source is a Temporal
 * Schedule `source-refresh-<sourceId>` that starts `sourceRefreshWorkflow` every
 * `periodicInterval`. Each run registers a `source-pull` job (visible at `GET /jobs/{jobId}`)
 * and runs the pull as a child workflow over the last `numberOfPastDaysToSync` days, read from
 * the source when the run starts (so an update of the days needs no schedule change).
 * Overlapping runs are skipped.
 */
import { ScheduleAlreadyRunning, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { SOURCE_WORKFLOWS, type SourceRefreshInput } from '../workflows/contract/sources.js';
import type { AppDeps } from './deps.js';
import { SA } from '../domain/searchAttributes.js';

export const sourceScheduleId = (sourceId: string) => `source-refresh-${sourceId}`;

/** Creates the source's schedule, or updates its interval when it exists. Returns the schedule id. */
export async function upsertSourceSchedule(
  deps: AppDeps,
  source: { id: string; workspaceId: string },
  intervalMs: number,
): Promise<string> {
  const scheduleId = sourceScheduleId(source.id);
  const args: [SourceRefreshInput] = [{ workspaceId: source.workspaceId, sourceId: source.id }];
  const action = {
    type: 'startWorkflow' as const,
    workflowType: SOURCE_WORKFLOWS.refresh,
    workflowId: `source-refresh-${source.id}`,
    taskQueue: deps.config.temporal.taskQueue,
    args,
    typedSearchAttributes: new TypedSearchAttributes([
      { key: SA.WorkspaceId, value: source.workspaceId },
      { key: SA.SourceId, value: source.id },
      { key: SA.JobType, value: 'source-refresh' },
    ]),
  };
  const spec = { intervals: [{ every: intervalMs }] };
  try {
    await deps.temporal.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      memo: { workspaceId: source.workspaceId, sourceId: source.id },
      state: { note: `Periodic pull of source ${source.id}` },
    });
  } catch (e) {
    if (!(e instanceof ScheduleAlreadyRunning)) throw e;
    await deps.temporal.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, spec, action }));
  }
  return scheduleId;
}

/** Deletes the schedule; a schedule that is already gone is fine. */
export async function deleteSourceSchedule(deps: AppDeps, scheduleId: string): Promise<void> {
  try {
    await deps.temporal.schedule.getHandle(scheduleId).delete();
  } catch (e) {
    if (!(e instanceof ScheduleNotFoundError)) throw e;
  }
}
