/**
 * Activities of bulk upserts: ingest one chunk of staged rows (read back from
 * `contact_ingest_staging` by batch id, mapped through the source's field mapping, checked per
 * row, written through db/contactIngest.ts) and drop the staged rows once the job ends.
 *
 * Re-running a chunk after a crash is harmless: identity resolution turns a second ingest of the
 * same rows into updates of the same contacts.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ingestContacts } from '../db/contactIngest.js';
import { loadContactCatalog } from '../db/contactRead.js';
import { dropStaged, readMappedChunk, type RowError } from '../db/contactStaging.js';
import { ContactFileUnreadable, stageFileSegment, type StageSegmentInput, type StageSegmentResult } from '../db/contactFile.js';
import { findSource } from '../db/sources.js';
import { dropSuppressed, suppressionKey } from '../db/privacy.js';
import { planFor } from '../domain/contactMapping.js';
import type { ActivityDeps } from './deps.js';
import { DATA_FAILURE } from '../workflows/contract/failures.js';

export type { RowError };

export interface IngestChunkInput {
  workspaceId: string;
  sourceId: string;
  batchId: string;
  /** Staged row range `from <= seq < to`. */
  from: number;
  to: number;
  /** At most this many row errors are returned (the count is always exact). */
  maxErrors: number;
  /** JSON pointer of the rows in errors (default `/contactsData`; `/contactsFile/rows` for a file). */
  rowPath?: string;
}

export interface IngestChunkResult {
  rows: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
  errors: RowError[];
  /** Rows of people on the suppression list, not written (docs/PRIVACY.md). */
  suppressed?: number;
}

export function createContactActivities(deps: ActivityDeps) {
  return {
    async ingestStagedChunk(input: IngestChunkInput): Promise<IngestChunkResult> {
      // Heartbeats let Temporal notice a lost attempt (a dead worker, a completion the server
      // never got while it was down) within the heartbeat timeout, not the 10-minute call limit.
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 2000);
      try {
        return await ingestChunk(input);
      } finally {
        clearInterval(beat);
      }
    },

    /** Stages the next segment of a contacts file (see db/contactFile.ts); heartbeats with the rows read. */
    async stageFileSegment(input: StageSegmentInput): Promise<StageSegmentResult> {
      const ctx = Context.current();
      let read = 0;
      const beat = setInterval(() => ctx.heartbeat(read), 2000);
      try {
        return await stageFileSegment(deps.pool, deps.storage, input, (rows) => (read = rows));
      } catch (e) {
        // The file was checked when the job was accepted; one that went missing or changed since cannot be read by a retry.
        if (e instanceof ContactFileUnreadable) throw ApplicationFailure.nonRetryable(e.message, DATA_FAILURE.contactsFileUnreadable);
        if ((e as { code?: string }).code === 'NoSuchKey') throw ApplicationFailure.nonRetryable(`Contacts file ${input.fileName} no longer exists`, DATA_FAILURE.contactsFileUnreadable);
        throw e;
      } finally {
        clearInterval(beat);
      }
    },

    async dropStagedRows(input: { batchId: string }): Promise<void> {
      await dropStaged(deps.pool, input.batchId);
    },
  };

  async function ingestChunk(input: IngestChunkInput): Promise<IngestChunkResult> {
    const source = await findSource(deps.orm.em, input.sourceId);
    if (!source) throw ApplicationFailure.nonRetryable(`Source ${input.sourceId} no longer exists`, DATA_FAILURE.sourceNotFound);
    const catalog = await loadContactCatalog(deps.pool, input.workspaceId);
    const plan = planFor(catalog, source.sourceMeta?.config?.fieldMapping);
    const { rows, inputs, failed, errors } = await readMappedChunk(deps.pool, { ...input, rowPath: input.rowPath ?? '/contactsData' }, catalog, plan);
    // Never a silent partial import: rows the stage no longer holds fail the job.
    if (rows !== input.to - input.from)
      throw ApplicationFailure.nonRetryable(`Staged rows ${input.from}..${input.to} of batch ${input.batchId}: ${rows} found`, DATA_FAILURE.stagedRowsMissing);
    const { kept, suppressed } = await dropSuppressed(deps.pool, input.workspaceId, inputs, suppressionKey(deps.config.serverSecret));
    const r = await ingestContacts(deps.pool, kept, { workspaceId: input.workspaceId, sourceId: input.sourceId, mode: 'automated' });
    return { rows, created: r.created, updated: r.updated, skipped: r.skipped, failed, errors, suppressed };
  }
}
