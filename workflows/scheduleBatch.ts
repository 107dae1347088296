/**
 * Starts the publish workflows of one bulk-schedule batch (id `schedule-batch-<batchId>`). The
 * API answers once the rows are written and this workflow is started; the dispatch activity
 * then starts (or re-signals) one publish workflow per row, earliest first, resuming from its
 * heartbeat after a crash.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { DispatchInput } from '../activities/publishing.js';

const { dispatchScheduleBatch } = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

export async function scheduleBatchWorkflow(input: DispatchInput): Promise<{ dispatched: number }> {
  return dispatchScheduleBatch(input);
}
