/**
 * Bulk enrichment (`POST /contacts/bulk-enrichment`, issue 32). The API recorded the job and its
 * rows in PostgreSQL (db/bulkEnrichment.ts); this workflow carries only the job's ids, row
 * numbers and counts (claim check: no contact data ever enters its history) and walks the rows
 * in batches of `batchRows`, one activity per batch (activities/providers/bulkEnrichment.ts),
 * continuing as new every `batchesPerRun` batches so each run's history stays small.
 *
 * - `pause` (signal) cancels the batch in flight and moves the job to `paused` (its generation
 *   bumped under the job's lock, so the interrupted activity settles nothing more); `resume`
 *   moves it back to `running` and the batch runs again from its first pending row.
 * - Cancelling the job (`POST /jobs/{jobId}/cancel` or the bulk endpoint) moves it to
 *   `cancelled` under the same lock at once: rows settled before are done, the others cancelled.
 * - A batch stopped by the budget (`max_credits`) or the balance ends the job as completed with
 *   the rows not reached counted as such.
 * The result (`jobResponsePayload`) is the job's counts (`bulkEnrichSummary`).
 */
import { CancellationScope, condition, continueAsNew, isCancellation, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { BulkBatchResult } from '../activities/providers/bulkEnrichment.js';
import type { BulkEnrichmentSummary } from '../domain/bulkEnrichment.js';
import { jobFailure, runJob } from './job.js';
import { DATA_FAILURE } from './contract/failures.js';
import type { JobInput, JobResult } from './contract/jobs.js';
import { bulkEnrichmentPauseSignal, bulkEnrichmentResumeSignal, type BulkEnrichmentInput } from './contract/enrichment.js';

export const BATCH_ROWS = 500;
export const BATCHES_PER_RUN = 40;

const { bulkEnrichBatch } = proxyActivities<Activities>({
  startToCloseTimeout: '2 hours',
  // The batch heartbeats every second: a killed worker's batch is retried after this.
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', nonRetryableErrorTypes: [DATA_FAILURE.bulkJobNotFound] },
});

const local = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 milliseconds', maximumInterval: '5 seconds', nonRetryableErrorTypes: [DATA_FAILURE.bulkJobNotFound] },
});

export async function bulkEnrichmentWorkflow(input: BulkEnrichmentInput & JobInput): Promise<JobResult<BulkEnrichmentSummary>> {
  const ids = { workspaceId: input.workspaceId, jobId: input.jobId };
  const batchRows = input.batchRows ?? BATCH_ROWS;
  const batchesPerRun = input.batchesPerRun ?? BATCHES_PER_RUN;
  let paused = false;
  let inFlight: CancellationScope | undefined;
  setHandler(bulkEnrichmentPauseSignal, () => {
    if (paused) return;
    paused = true;
    inFlight?.cancel();
  });
  setHandler(bulkEnrichmentResumeSignal, () => void (paused = false));

  return runJob(input, async (job) => {
    let from = input.resume?.from ?? 0;
    let generation = input.resume?.generation ?? 0;
    job.setProgress(from, input.total);
    try {
      for (let batches = 0; from < input.total; ) {
        if (paused) {
          generation = await local.bulkEnrichControl({ ...ids, state: 'paused' });
          await condition(() => !paused);
          generation = await local.bulkEnrichControl({ ...ids, state: 'running' });
          continue;
        }
        if (batches >= batchesPerRun) return await continueAsNew<typeof bulkEnrichmentWorkflow>({ ...input, resume: { from, generation } });
        const to = Math.min(from + batchRows, input.total);
        let r: BulkBatchResult;
        inFlight = new CancellationScope();
        try {
          r = await inFlight.run(() => bulkEnrichBatch({ ...ids, from, to, generation }));
        } catch (err) {
          // Paused mid-batch: the batch runs again once resumed (its settled rows stay done).
          if (paused && isCancellation(err) && !CancellationScope.current().consideredCancelled) continue;
          throw err;
        } finally {
          inFlight = undefined;
        }
        batches++;
        if (r.stoppedBy === 'max_credits' || r.stoppedBy === 'insufficient_credits') break;
        // A batch that met a pause committed meanwhile runs again after the resume.
        if (r.stoppedBy === 'paused') continue;
        if (r.stoppedBy === 'superseded') throw jobFailure('bulk_job_superseded', 'Another run of this job holds it');
        from = to;
        job.setProgress(from, input.total);
      }
      await local.bulkEnrichControl({ ...ids, state: 'finished' });
      const summary = await local.bulkEnrichSummary(ids);
      job.setProgress(summary.done + summary.notReached + summary.cancelled, input.total);
      return summary;
    } catch (err) {
      // Cancelled: the job's lock stops every settlement now, whatever activity still runs.
      if (isCancellation(err)) await CancellationScope.nonCancellable(() => local.bulkEnrichControl({ ...ids, state: 'cancelled' }));
      throw err;
    }
  });
}
