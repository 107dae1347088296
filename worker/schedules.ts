/**
 * Temporal Schedules the worker owns, created (or brought up to date) when it starts, so a fresh
 * deployment needs no extra step and a changed setting reaches the schedule with the next worker.
 *
 * Media retention, the personal-data retention purge and the OAuth token refresh-ahead sweep are Schedules rather than cron workflows
 * or long-running loops with timers: a Schedule is Temporal's successor of cron workflows, each
 * run is a short workflow of its own (a small history, nothing to continue-as-new), overlapping
 * runs are skipped by policy, and an operator can pause it, trigger it or read its last runs in
 * the UI / `temporal schedule`.
 */
import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import type { Config } from '../domain/config.js';
import { TOKEN_REFRESH_EVERY_MS } from '../activities/oauthTokens.js';
import { MAINTENANCE_WORKFLOWS } from '../workflows/contract/maintenance.js';
import { MEDIA_WORKFLOWS } from '../workflows/contract/media.js';

/** One per task queue, so deployments (and test runs) sharing a namespace keep their own. */
export const mediaRetentionScheduleId = (config: Config) => `media-retention-${config.temporal.taskQueue}`;
export const retentionScheduleId = (config: Config) => `retention-${config.temporal.taskQueue}`;
export const workspaceEventsScheduleId = (config: Config) => `workspace-events-${config.temporal.taskQueue}`;

/** How often the sweep runs; what it removes is decided by `MEDIA_RETENTION_HOURS`, read by the activity. */
const MEDIA_RETENTION_EVERY = '1 hour';
/** How often the personal-data purge runs; its periods (`RETENTION_*_DAYS`) are read by its activities. */
const RETENTION_EVERY = '1 day';
/**
 * The workspace events sweep: a grant ending within `INTEGRATION_EXPIRY_NOTICE_DAYS` is announced
 * (once per grant) well ahead, and a delivery left unstarted waits at most this long.
 */
const WORKSPACE_EVENTS_EVERY = '5 minutes';

/** Creates the Schedule `scheduleId` starting `workflowType` (a workflow without arguments) every `every`, or updates an existing one. Idempotent. */
async function ensureSchedule(client: Client, config: Config, scheduleId: string, workflowType: string, every: string, note: string): Promise<string> {
  const action = {
    type: 'startWorkflow' as const,
    workflowType,
    workflowId: scheduleId,
    taskQueue: config.temporal.taskQueue,
    args: [] as [],
  };
  const spec = { intervals: [{ every }] };
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: every },
      state: { note },
    });
  } catch (e) {
    if (!(e instanceof ScheduleAlreadyRunning)) throw e;
    await client.schedule.getHandle(scheduleId).update((prev) => ({ ...prev, spec, action, state: { ...prev.state, note } }));
  }
  return scheduleId;
}

/** Creates the media retention Schedule, or updates an existing one to this worker's settings. Idempotent. */
export async function ensureMediaRetentionSchedule(client: Client, config: Config): Promise<string> {
  const note = `Removes media chunks never assembled and uploads no post references after ${config.media.retentionHours} h`;
  return ensureSchedule(client, config, mediaRetentionScheduleId(config), MEDIA_WORKFLOWS.retention, MEDIA_RETENTION_EVERY, note);
}

/** Creates the personal-data retention Schedule (docs/PRIVACY.md "Retention"), or updates it. Idempotent. */
export async function ensureRetentionSchedule(client: Client, config: Config): Promise<string> {
  const r = config.retention;
  const note = `Purges contacts deleted over ${r.deletedContactDays} d ago, job results over ${r.jobResultDays} d, webhook deliveries over ${r.webhookDeliveryDays} d`;
  return ensureSchedule(client, config, retentionScheduleId(config), MAINTENANCE_WORKFLOWS.retention, RETENTION_EVERY, note);
}

/** One per task queue, like the others. */
export const tokenRefreshScheduleId = (config: Config) => `oauth-token-refresh-${config.temporal.taskQueue}`;

/** Creates the refresh-ahead Schedule of OAuth tokens (`tokenRefreshWorkflow` every 10 minutes), or updates an existing one. Idempotent. */
export async function ensureTokenRefreshSchedule(client: Client, config: Config): Promise<string> {
  return ensureSchedule(
    client,
    config,
    tokenRefreshScheduleId(config),
    MAINTENANCE_WORKFLOWS.tokenRefresh,
    `${TOKEN_REFRESH_EVERY_MS / 60_000} minutes`,
    'Refreshes OAuth access tokens that end within the refresh margin plus two sweep periods',
  );
}

/** Creates the workspace events sweep Schedule (docs/PUBLISHING.md "Events"), or updates it. Idempotent. */
export async function ensureWorkspaceEventsSchedule(client: Client, config: Config): Promise<string> {
  const note = 'Sends integration.expires_soon for grants ending soon and starts event deliveries left unstarted';
  return ensureSchedule(client, config, workspaceEventsScheduleId(config), MAINTENANCE_WORKFLOWS.workspaceEventsSweep, WORKSPACE_EVENTS_EVERY, note);
}
