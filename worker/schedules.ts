/**
 * Temporal Schedules the worker owns, created (or brought up to date) when it starts, so a fresh
 * deployment needs no extra step and a changed setting reaches the schedule with the next worker.
 *
 * Media retention and the OAuth token refresh-ahead sweep are Schedules rather than a cron workflow or a long-running loop with timers:
 * a Schedule is Temporal's successor of cron workflows, each run is a short workflow of its own
 * (a small history, nothing to continue-as-new), overlapping runs are skipped by policy, and an
 * operator can pause it, trigger it or read its last runs in the UI / `temporal schedule`.
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Config } from '../domain/config.js';
import { mediaRetentionWorkflow } from '../workflows/mediaRetention.js';
import { tokenRefreshWorkflow } from '../workflows/tokenRefresh.js';
import { TOKEN_REFRESH_EVERY_MS } from '../activities/oauthTokens.js';

/** One per task queue, so deployments (and test runs) sharing a namespace keep their own. */
export const mediaRetentionScheduleId = (config: Config) => `media-retention-${config.temporal.taskQueue}`;

/** How often the sweep runs; what it removes is decided by `MEDIA_RETENTION_HOURS`, read by the activity. */
const MEDIA_RETENTION_EVERY = '1 hour';

/** Creates the media retention Schedule, or updates an existing one to this worker's settings. Idempotent. */
export async function ensureMediaRetentionSchedule(client: Client, config: Config): Promise<string> {
  return ensureSchedule(client, config, {
    scheduleId: mediaRetentionScheduleId(config),
    workflowType: mediaRetentionWorkflow,
    every: MEDIA_RETENTION_EVERY,
    note: `Removes media chunks never assembled and uploads no post references after ${config.media.retentionHours} h`,
  });
}

/** One per task queue, like the media retention Schedule. */
export const tokenRefreshScheduleId = (config: Config) => `oauth-token-refresh-${config.temporal.taskQueue}`;

/**
 * Creates the refresh-ahead Schedule of OAuth tokens (`tokenRefreshWorkflow` every 10 minutes),
 * or updates an existing one. Idempotent.
 */
export async function ensureTokenRefreshSchedule(client: Client, config: Config): Promise<string> {
  return ensureSchedule(client, config, {
    scheduleId: tokenRefreshScheduleId(config),
    workflowType: tokenRefreshWorkflow,
    every: TOKEN_REFRESH_EVERY_MS,
    note: 'Refreshes OAuth access tokens that end within the refresh margin plus two sweep periods',
  });
}

async function ensureSchedule(
  client: Client,
  config: Config,
  s: { scheduleId: string; workflowType: typeof mediaRetentionWorkflow | typeof tokenRefreshWorkflow; every: string | number; note: string },
): Promise<string> {
  const action = {
    type: 'startWorkflow' as const,
    workflowType: s.workflowType,
    workflowId: s.scheduleId,
    taskQueue: config.temporal.taskQueue,
    args: [] as [],
  };
  const spec = { intervals: [{ every: s.every }] };
  const note = s.note;
  try {
    await client.schedule.create({
      scheduleId: s.scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      state: { note },
    });
  } catch (e) {
    if (!(e instanceof ScheduleAlreadyRunning)) throw e;
    await client.schedule.getHandle(s.scheduleId).update((prev) => ({ ...prev, spec, action, state: { ...prev.state, note } }));
  }
  return s.scheduleId;
}
