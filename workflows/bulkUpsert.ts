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
import { runJob, type JobInput } from './job.js';

export interface BulkUpsertInput {
  sourceId: string;
  batchId: string;
  totalRows: number;
  chunkSize?: number;
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
  retry: { initialInterval: '2 seconds', maximumAttempts: 5, nonRetryableErrorTypes: ['source_not_found'] },
});

/** Chunks one run processes before it continues as new (keeps each history small). */
export const CHUNKS_PER_RUN = 200;

export async function bulkUpsertContactsWorkflow(input: BulkUpsertInput & JobInput): Promise<BulkUpsertResult> {
  const chunk = input.chunkSize ?? DEFAULT_CHUNK;
  const start = input.resume?.offset ?? 0;
  const end = Math.min(input.totalRows, start + chunk * CHUNKS_PER_RUN);
  const last = end >= input.totalRows;
  let offset = start;
  const totals: BulkUpsertTotals = input.resume?.totals ?? { created: 0, updated: 0, skippedDeleted: 0, failed: 0, errors: [] };
  const view = (): BulkUpsertResult => ({ sourceId: input.sourceId, totalRows: input.totalRows, processedRows: offset, ...totals });
  // An intermediate run answers the status query like the job but leaves the webhook to the last run.
  const result = await runJob(last ? input : { ...input, webhook: null }, async (job) => {
    job.setProgress(offset, input.totalRows);
    try {
      while (offset < end) {
        // Two chunks in flight: one is read and mapped while the other is written (the ingest path
        // serialises writes of a workspace itself).
        const wave: { from: number; to: number }[] = [];
        for (let from = offset; from < end && wave.length < PARALLEL_CHUNKS; from += chunk) wave.push({ from, to: Math.min(from + chunk, end) });
        const results: IngestChunkResult[] = await Promise.all(
          wave.map((w) =>
            ingestStagedChunk({
              workspaceId: input.workspaceId,
              sourceId: input.sourceId,
              batchId: input.batchId,
              from: w.from,
              to: w.to,
              maxErrors: MAX_REPORTED_ERRORS - totals.errors.length,
            }),
          ),
        );
        for (const r of results) {
          totals.created += r.created;
          totals.updated += r.updated;
          totals.skippedDeleted += r.skipped;
          totals.failed += r.failed;
          totals.errors.push(...r.errors.slice(0, MAX_REPORTED_ERRORS - totals.errors.length));
        }
        offset = wave[wave.length - 1]!.to;
        job.setProgress(offset, input.totalRows);
        job.setPartial(view());
      }
    } catch (err) {
      // A failed or cancelled job leaves no staged rows behind.
      await CancellationScope.nonCancellable(() => dropStagedRows({ batchId: input.batchId }));
      throw err;
    }
    if (last) await dropStagedRows({ batchId: input.batchId });
    return view();
  });
  if (!last) return continueAsNew<typeof bulkUpsertContactsWorkflow>({ ...input, resume: { offset, totals } });
  return result;
}
