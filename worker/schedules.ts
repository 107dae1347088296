/**
 * Temporal Schedules the worker owns, created (or brought up to date) when it starts, so a fresh
 * deployment needs no extra step and a changed setting reaches the schedule with the next worker.
 *
 * Media retention is a Schedule rather than a cron workflow or a long-running loop with timers:
 * a Schedule is Temporal's successor of cron workflows, each run is a short workflow of its own
 * (a small history, nothing to continue-as-new), overlapping runs are skipped by policy, and an
 * operator can pause it, trigger it or read its last runs in the UI / `temporal schedule`.
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Config } from '../domain/config.js';
import { mediaRetentionWorkflow } from '../workflows/mediaRetention.js';
import { workspaceEventsSweepWorkflow } from '../workflows/workspaceEventsSweep.js';

/** One per task queue, so deployments (and test runs) sharing a namespace keep their own. */
export const mediaRetentionScheduleId = (config: Config) => `media-retention-${config.temporal.taskQueue}`;

/** How often the sweep runs; what it removes is decided by `MEDIA_RETENTION_HOURS`, read by the activity. */
const MEDIA_RETENTION_EVERY = '1 hour';

/** Creates the media retention Schedule, or updates an existing one to this worker's settings. Idempotent. */
export async function ensureMediaRetentionSchedule(client: Client, config: Config): Promise<string> {
  const scheduleId = mediaRetentionScheduleId(config);
  const action = {
    type: 'startWorkflow' as const,
    workflowType: mediaRetentionWorkflow,
    workflowId: scheduleId,
    taskQueue: config.temporal.taskQueue,
    args: [] as [],
  };
  const spec = { intervals: [{ every: MEDIA_RETENTION_EVERY }] };
  const note = `Removes media chunks never assembled and uploads no post references after ${config.media.retentionHours} h`;
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      state: { note },
    });
  } catch (e) {
    if (!(e instanceof ScheduleAlreadyRunning)) throw e;
    await client.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, spec, action, state: { ...prev.state, note } }));
  }
  return scheduleId;
}

export const workspaceEventsScheduleId = (config: Config) => `workspace-events-${config.temporal.taskQueue}`;

/**
 * The events sweep every 5 minutes: a grant ending within `INTEGRATION_EXPIRY_NOTICE_DAYS` is
 * announced (once per grant) well ahead, and a delivery left unstarted waits at most that long.
 */
const WORKSPACE_EVENTS_EVERY = '5 minutes';

/** Creates the workspace events sweep Schedule, or updates an existing one. Idempotent. */
export async function ensureWorkspaceEventsSchedule(client: Client, config: Config): Promise<string> {
  const scheduleId = workspaceEventsScheduleId(config);
  const action = { type: 'startWorkflow' as const, workflowType: workspaceEventsSweepWorkflow, workflowId: scheduleId, taskQueue: config.temporal.taskQueue, args: [] as [] };
  const spec = { intervals: [{ every: WORKSPACE_EVENTS_EVERY }] };
  const note = 'Sends integration.expires_soon for grants ending soon and starts event deliveries left unstarted';
  try {
    await client.schedule.create({ scheduleId, spec, action, policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '10 minutes' }, state: { note } });
  } catch (e) {
    if (!(e instanceof ScheduleAlreadyRunning)) throw e;
    await client.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, spec, action, state: { ...prev.state, note } }));
  }
  return scheduleId;
}
