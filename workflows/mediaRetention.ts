/**
 * Media retention, started by the Temporal Schedule `media-retention-<taskQueue>` (created by
 * the worker at start, worker/schedules.ts): removes chunks never assembled and uploads no post
 * references once they are older than `MEDIA_RETENTION_HOURS`.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ExpiredMediaCounts } from '../db/media.js';

const { removeExpiredMedia } = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  // The sweep heartbeats after every batch.
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes', maximumAttempts: 5 },
});

export async function mediaRetentionWorkflow(): Promise<ExpiredMediaCounts> {
  return removeExpiredMedia();
}
