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
import type { IngestChunkResult, RowError } from '../activities/dbContacts.js';
import { runJob, trackJob, type JobTracker } from './job.js';
import { DATA_FAILURE } from './contract/failures.js';
import type { BulkUpsertArgs, ContactFileRef } from './contract/contacts.js';
import type { JobInput, JobResult } from './contract/jobs.js';

/** What the caller gives (the contract), and the state a continued run resumes from. */
export interface BulkUpsertInput extends BulkUpsertArgs {
  /** Set when continuing as new: where to resume and the totals so far. */
  resume?: { offset: number; totals: BulkUpsertTotals; file?: FileProgress };
}

/** How far a contacts file was read: staged rows [0, staged), the next record at byteOffset. */
export interface FileProgress {
  staged: number;
  byteOffset: number;
  done: boolean;
  /** Bytes of the file whose rows were all ingested (a record boundary). */
  bytesIngested: number;
}

export interface BulkUpsertTotals {
  created: number;
  updated: number;
  skippedDeleted: number;
  /** Rows of people on the workspace's suppression list, skipped (absent when none). */
  suppressed?: number;
  failed: number;
  errors: RowError[];
}

export interface BulkUpsertResult extends BulkUpsertTotals {
  sourceId: string;
  /** For a file still being read: the rows read so far. */
  totalRows: number;
  processedRows: number;
  /** A file import: how much of the file was read. */
  contactsFile?: { fileName: string; fileSizeInBytes: number; bytesRead: number; complete: boolean };
}

export const DEFAULT_CHUNK = 10_000;
/** Chunks processed at once. */
export const PARALLEL_CHUNKS = 2;
export const MAX_REPORTED_ERRORS = 500;

const { ingestStagedChunk, dropStagedRows, stageFileSegment } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  // ingestStagedChunk heartbeats every 2 s: a lost attempt is retried after this, not 10 minutes.
  heartbeatTimeout: '30 seconds',
  // Rides out a database failover or restart of a few minutes (2 s doubling to 30 s, 10 tries).
  retry: {
    initialInterval: '2 seconds',
    maximumInterval: '30 seconds',
    maximumAttempts: 10,
    nonRetryableErrorTypes: [DATA_FAILURE.sourceNotFound, DATA_FAILURE.stagedRowsMissing, DATA_FAILURE.contactsFileUnreadable],
  },
});

/** Chunks one run processes before it continues as new (keeps each history small). */
export const CHUNKS_PER_RUN = 200;

function addChunk(totals: BulkUpsertTotals, r: IngestChunkResult): void {
  totals.created += r.created;
  totals.updated += r.updated;
  totals.skippedDeleted += r.skipped;
  if (r.suppressed) totals.suppressed = (totals.suppressed ?? 0) + r.suppressed;
  totals.failed += r.failed;
  totals.errors.push(...r.errors.slice(0, MAX_REPORTED_ERRORS - totals.errors.length));
}

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
        addChunk(totals, f.r);
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

/** Chunks of rows one stageFileSegment call reads (they are ingested while the next segment is read). */
const FILE_SEGMENT_CHUNKS = 2;
/** Segments staged ahead of the ingest at most. */
const FILE_SEGMENTS_AHEAD = 2;

/** A file import's result so far: `totalRows` are the rows read until the file is done. */
function fileResult(input: BulkUpsertInput & { file: ContactFileRef }, state: FileProgress, offset: number, totals: BulkUpsertTotals): BulkUpsertResult {
  const { fileName, sizeBytes } = input.file;
  return {
    sourceId: input.sourceId,
    totalRows: state.staged,
    processedRows: offset,
    ...totals,
    contactsFile: { fileName, fileSizeInBytes: sizeBytes, bytesRead: state.byteOffset, complete: state.done },
  };
}

/**
 * One run of a file import: segments of the file are staged (one at a time, up to
 * FILE_SEGMENTS_AHEAD ahead) while staged chunks are ingested two at a time, until the file is
 * done or this run launched `chunksPerRun` chunks. Progress: rows ingested of the rows read so far
 * (the exact total once the file is read), percent from the bytes whose rows are ingested.
 */
async function processFile(input: BulkUpsertInput & JobInput & { file: ContactFileRef }, state: FileProgress, offset: number, totals: BulkUpsertTotals, job: JobTracker): Promise<number> {
  const file = input.file;
  const chunk = input.chunkSize ?? DEFAULT_CHUNK;
  const segmentRows = chunk * FILE_SEGMENT_CHUNKS;
  const runChunks = input.chunksPerRun ?? CHUNKS_PER_RUN;
  /** Staged segments not yet ingested: [seq end, byte end]. */
  const segmentEnds: [number, number][] = [];
  const report = () => {
    while (segmentEnds.length && segmentEnds[0]![0] <= offset) state.bytesIngested = segmentEnds.shift()![1];
    const complete = state.done && offset === state.staged;
    job.setProgress(offset, state.staged, complete ? 100 : Math.floor((100 * state.bytesIngested) / Math.max(file.sizeBytes, 1)));
    job.setPartial(fileResult(input, state, offset, totals));
  };
  report();
  let launched = 0;
  let next = offset;
  let staging: Promise<void> | undefined;
  const inflight = new Map<number, Promise<void>>();
  const finished = new Map<number, { to: number; r: IngestChunkResult }>();
  try {
    for (;;) {
      if (!staging && !state.done && launched < runChunks && state.staged - next < FILE_SEGMENTS_AHEAD * segmentRows) {
        staging = stageFileSegment({
          batchId: input.batchId,
          fileName: file.fileName,
          format: file.format,
          byteOffset: state.byteOffset,
          seqStart: state.staged,
          maxRows: segmentRows,
          pruneBelow: offset,
        }).then((r) => {
          state.staged += r.rows;
          state.byteOffset = r.nextByteOffset;
          state.done = r.done;
          segmentEnds.push([state.staged, r.nextByteOffset]);
          staging = undefined;
        });
      }
      // A chunk is launched once it is staged whole (or the file ended).
      while (inflight.size < PARALLEL_CHUNKS && launched < runChunks && next < state.staged && (next + chunk <= state.staged || state.done)) {
        const from = next;
        const to = Math.min(from + chunk, state.staged);
        next = to;
        launched++;
        inflight.set(
          from,
          ingestStagedChunk({ workspaceId: input.workspaceId, sourceId: input.sourceId, batchId: input.batchId, from, to, maxErrors: MAX_REPORTED_ERRORS, rowPath: '/contactsFile/rows' }).then(
            (r) => {
              inflight.delete(from);
              finished.set(from, { to, r });
            },
          ),
        );
      }
      if (!staging && !inflight.size) break;
      await Promise.race(staging ? [staging, ...inflight.values()] : inflight.values());
      for (let f = finished.get(offset); f; f = finished.get(offset)) {
        finished.delete(offset);
        addChunk(totals, f.r);
        offset = f.to;
      }
      report();
    }
  } catch (err) {
    // A failed or cancelled job leaves no staged rows behind.
    await CancellationScope.nonCancellable(() => dropStagedRows({ batchId: input.batchId }));
    throw err;
  }
  return offset;
}

/** A file import: every run goes through runJob (whether it is the last is known only at its end). */
async function importFile(input: BulkUpsertInput & JobInput & { file: ContactFileRef }): Promise<JobResult<BulkUpsertResult>> {
  const totals: BulkUpsertTotals = input.resume?.totals ?? { created: 0, updated: 0, skippedDeleted: 0, failed: 0, errors: [] };
  const state: FileProgress = input.resume?.file ?? { staged: 0, byteOffset: 0, done: false, bytesIngested: 0 };
  return runJob(input, async (job) => {
    const offset = await processFile(input, state, input.resume?.offset ?? 0, totals, job);
    if (!state.done || offset < state.staged) return continueAsNew<typeof bulkUpsertContactsWorkflow>({ ...input, resume: { offset, totals, file: state } });
    await dropStagedRows({ batchId: input.batchId });
    return fileResult(input, state, offset, totals);
  });
}

export async function bulkUpsertContactsWorkflow(input: BulkUpsertInput & JobInput): Promise<JobResult<BulkUpsertResult>> {
  if (input.file) return importFile(input as BulkUpsertInput & JobInput & { file: ContactFileRef });
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
