/**
 * Starts the publish workflows of one bulk-schedule batch (id `schedule-batch-<batchId>`). The
 * API answers once the rows are written and this workflow is started. Each round, the dispatch
 * activity starts (or re-signals) one publish workflow per row due within the dispatch horizon,
 * earliest first; the workflow then sleeps until the next row enters the horizon. Rows replaced
 * or unscheduled meanwhile are simply no longer found.
 */
import { continueAsNew, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { DispatchInput } from './contract/publishing.js';

const { dispatchScheduleBatch } = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** Rounds per run before continuing as new (keeps the history short). */
const ROUNDS_PER_RUN = 200;

export async function scheduleBatchWorkflow(input: DispatchInput): Promise<{ dispatched: number }> {
  let dispatched = 0;
  for (let round = 0; ; round++) {
    const r = await dispatchScheduleBatch(input);
    dispatched += r.dispatched;
    if (!r.nextDispatchAt) return { dispatched };
    if (round + 1 >= ROUNDS_PER_RUN) await continueAsNew<typeof scheduleBatchWorkflow>(input);
    const wait = Date.parse(r.nextDispatchAt) - Date.now();
    if (wait > 0) await sleep(wait);
  }
}
