/**
 * Bulk upsert of contacts into a source (`POST /contacts/{sourceId}/bulk-upsert-contacts`).
 * The rows wait in the staging table under `batchId` (never in the workflow input); the workflow
 * ingests them chunk by chunk, reports progress through the job's status query, keeps the
 * per-row errors (good rows are saved regardless), drops the staged rows and lets `runJob`
 * deliver the webhook. Very long batches continue as new every CHUNKS_PER_RUN chunks with their
 * running totals.
 */
import { CancellationScope, continueAsNew, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { IngestChunkResult, RowError } from '../activities/db-contacts.js';
import { runJob, trackJob, type JobInput, type JobResult, type JobTracker } from './job.js';

export interface BulkUpsertInput {
  sourceId: string;
  batchId: string;
  totalRows: number;
  chunkSize?: number;
  /** Chunks one run processes before it continues as new (default CHUNKS_PER_RUN). */
  chunksPerRun?: number;
  /** Set when continuing as new: where to resume and the totals so far. */
  resume?: { offset: number; totals: BulkUpsertTotals };
}

export interface BulkUpsertTotals {
  created: number;
  updated: number;
  skippedDeleted: number;
  failed: number;
  errors: RowError[];
}

export interface BulkUpsertResult extends BulkUpsertTotals {
  sourceId: string;
  totalRows: number;
  processedRows: number;
}

export const DEFAULT_CHUNK = 10_000;
/** Chunks processed at once. */
export const PARALLEL_CHUNKS = 2;
export const MAX_REPORTED_ERRORS = 500;

const { ingestStagedChunk, dropStagedRows } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  // ingestStagedChunk heartbeats every 2 s: a lost attempt is retried after this, not 10 minutes.
  heartbeatTimeout: '30 seconds',
  // Rides out a database failover or restart of a few minutes (2 s doubling to 30 s, 10 tries).
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 10, nonRetryableErrorTypes: ['source_not_found', 'staged_rows_missing'] },
});

/** Chunks one run processes before it continues as new (keeps each history small). */
export const CHUNKS_PER_RUN = 200;

/** Ingests staged rows [offset, end) two chunks at a time; on failure the staged rows are dropped. */
async function processRange(input: BulkUpsertInput & JobInput, from: number, end: number, totals: BulkUpsertTotals, job: JobTracker): Promise<number> {
  const chunk = input.chunkSize ?? DEFAULT_CHUNK;
  let offset = from;
  const view = (): BulkUpsertResult => ({ sourceId: input.sourceId, totalRows: input.totalRows, processedRows: offset, ...totals });
  job.setProgress(offset, input.totalRows);
  try {
    // A sliding window of chunks in flight: while one chunk is written (the ingest path serialises
    // the writes of a workspace), the next is read and mapped. Totals advance in row order.
    let next = offset;
    const inflight = new Map<number, Promise<{ from: number; to: number; r: IngestChunkResult }>>();
    const finished = new Map<number, { to: number; r: IngestChunkResult }>();
    const launch = () => {
      const from = next;
      const to = Math.min(from + chunk, end);
      next = to;
      inflight.set(
        from,
        ingestStagedChunk({
          workspaceId: input.workspaceId,
          sourceId: input.sourceId,
          batchId: input.batchId,
          from,
          to,
          maxErrors: MAX_REPORTED_ERRORS,
        }).then((r) => ({ from, to, r })),
      );
    };
    while (next < end && inflight.size < PARALLEL_CHUNKS) launch();
    while (inflight.size) {
      const done = await Promise.race(inflight.values());
      inflight.delete(done.from);
      finished.set(done.from, done);
      for (let f = finished.get(offset); f; f = finished.get(offset)) {
        finished.delete(offset);
        totals.created += f.r.created;
        totals.updated += f.r.updated;
        totals.skippedDeleted += f.r.skipped;
        totals.failed += f.r.failed;
        totals.errors.push(...f.r.errors.slice(0, MAX_REPORTED_ERRORS - totals.errors.length));
        offset = f.to;
      }
      job.setProgress(offset, input.totalRows);
      job.setPartial(view());
      if (next < end) launch();
    }
  } catch (err) {
    // A failed or cancelled job leaves no staged rows behind.
    await CancellationScope.nonCancellable(() => dropStagedRows({ batchId: input.batchId }));
    throw err;
  }
  return offset;
}

export async function bulkUpsertContactsWorkflow(input: BulkUpsertInput & JobInput): Promise<JobResult<BulkUpsertResult>> {
  const chunk = input.chunkSize ?? DEFAULT_CHUNK;
  const start = input.resume?.offset ?? 0;
  const end = Math.min(input.totalRows, start + chunk * (input.chunksPerRun ?? CHUNKS_PER_RUN));
  const totals: BulkUpsertTotals = input.resume?.totals ?? { created: 0, updated: 0, skippedDeleted: 0, failed: 0, errors: [] };
  if (end >= input.totalRows) {
    // The last (often only) run: runJob reports the outcome and delivers the webhook.
    return runJob(input, async (job) => {
      const offset = await processRange(input, start, end, totals, job);
      await dropStagedRows({ batchId: input.batchId });
      return { sourceId: input.sourceId, totalRows: input.totalRows, processedRows: offset, ...totals };
    });
  }
  // An intermediate run answers the job's status query as running, then continues as new; a
  // failure is reported through runJob like any job failure.
  const tracker = trackJob({ jobStatus: 'running', progress: { completed: start, total: input.totalRows, percent: 0 }, jobResponsePayload: null, error: null });
  let offset: number;
  try {
    offset = await processRange(input, start, end, totals, tracker);
  } catch (err) {
    return runJob(input, async () => {
      throw err;
    });
  }
  return continueAsNew<typeof bulkUpsertContactsWorkflow>({ ...input, resume: { offset, totals } });
}
