/**
 * The retention purge (docs/PRIVACY.md "Retention"), started daily by the Temporal Schedule
 * `retention-<taskQueue>` (created by the worker at start, worker/schedules.ts): soft-deleted
 * contacts, finished job results and webhook delivery records past their periods. One activity
 * per store; each works in batches that commit on their own and heartbeats its counts, so a run
 * interrupted anywhere is finished by the retry (or the next run) without repeating anything.
 * The history carries counts only.
 */
import { proxyActivities } from '@temporalio/workflow';
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
}

export async function retentionWorkflow(): Promise<RetentionReport> {
  const deletedContacts = await purge.retentionPurgeDeletedContacts();
  const jobResults = await purge.retentionPurgeJobResults();
  const { webhookDeliveries } = await purge.retentionPurgeWebhookDeliveries();
  return { deletedContacts, jobResults, webhookDeliveries };
}
