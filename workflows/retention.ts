/**
 * The retention purge (docs/PRIVACY.md "Retention"), started daily by the Temporal Schedule
 * `retention-<taskQueue>` (created by the worker at start, worker/schedules.ts): soft-deleted
 * contacts, finished job results, webhook delivery records and subject-access export documents
 * past their periods. One activity
 * per store; each works in batches that commit on their own and heartbeats its counts, so a run
 * interrupted anywhere is finished by the retry (or the next run) without repeating anything.
 * The history carries counts only.
 */
import { patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { PersonRowsRemoved } from '../db/privacy.js';
import type { JobResultsPurged } from '../activities/retention.js';

const purge = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes', maximumAttempts: 5 },
});

export interface RetentionReport {
  deletedContacts: PersonRowsRemoved;
  jobResults: JobResultsPurged;
  webhookDeliveries: number;
  /** Subject-access export documents removed (absent from runs recorded before that step existed). */
  accessExports?: number;
}

export async function retentionWorkflow(): Promise<RetentionReport> {
  const deletedContacts = await purge.retentionPurgeDeletedContacts();
  const jobResults = await purge.retentionPurgeJobResults();
  const { webhookDeliveries } = await purge.retentionPurgeWebhookDeliveries();
  if (!patched('access-exports')) return { deletedContacts, jobResults, webhookDeliveries };
  const { accessExports } = await purge.retentionPurgeAccessExports();
  return { deletedContacts, jobResults, webhookDeliveries, accessExports };
}
