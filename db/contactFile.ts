/**
 * Contacts files for bulk upserts: a CSV or JSON Lines media object is read from the object store
 * as a stream (never whole) and staged, one segment of rows at a time, into
 * `contact_ingest_staging` exactly as the rows of an inline request are (blocks of STAGING_BLOCK
 * rows, one JSON array each), so the same chunk ingest maps, resolves and reports them.
 *
 * A malformed record is staged as a row error (an object whose only key is FILE_ROW_ERROR, a key
 * no staged row can otherwise have: rows holding NUL are themselves malformed), so its row number
 * and message reach the job's errors in row order like any other bad row.
 */
import type { Readable } from 'node:stream';
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { csvRecords, csvRow, headerProblems, jsonLineRecords, type ContactFileFormat, type RawRecord } from '../domain/contactFile.js';
import { copyBlocks, FILE_ROW_ERROR, STAGING_BLOCK, type StagedBlock } from './contactStaging.js';
import type { ObjectStore } from '../infra/objectStore.js';
import { withTransaction, type Pool, type Queryable } from './pool.js';
import type { ContactIngestDB } from './contacts.js';
import { MediaObject } from './social.js';
import { runQuery, typedQueries } from './sqlFragments.js';

/** A file that no longer reads as it did when the job was accepted. */
export class ContactFileUnreadable extends Error {}

/** The file's bytes from `offset` on, as a stream from the object store. */
async function readFrom(store: ObjectStore, fileName: string, offset: number): Promise<Readable> {
  return store.client.getPartialObject(store.bucket, fileName, offset);
}

/** The records of a contacts file from byte `offset` (CSV: 0 means the header comes first). */
async function* recordsFrom(store: ObjectStore, fileName: string, format: ContactFileFormat, offset: number): AsyncGenerator<RawRecord> {
  const stream = await readFrom(store, fileName, offset);
  try {
    yield* format === 'csv' ? csvRecords(stream, offset) : jsonLineRecords(stream, offset);
  } finally {
    stream.destroy();
  }
}

/** A CSV file's header (its first record) and the offset where the data records begin. */
export async function readCsvHeader(store: ObjectStore, fileName: string): Promise<{ header?: string[]; problem?: string; end: number }> {
  for await (const r of recordsFrom(store, fileName, 'csv', 0)) {
    if (!r.cells) return { problem: `its header line ${r.error}`, end: r.end };
    const problems = headerProblems(r.cells);
    return problems.length ? { problem: `its header ${problems.join('; ')}`, end: r.end } : { header: r.cells, end: r.end };
  }
  return { problem: 'it is empty: a CSV file starts with a header line naming its columns', end: 0 };
}

/** A usable contacts file of the workspace (an uploaded or assembled media object, not a chunk). */
export async function findContactFile(db: Queryable, fileName: string): Promise<{ contentType: string; sizeBytes: number } | undefined> {
  const [row] = await runQuery(
    db,
    typedQueries<InferKyselyDB<typeof MediaObject>>()
      .selectFrom('media_objects')
      .select(['content_type', 'size_bytes'])
      .where('file_name', '=', fileName)
      .where((eb) => eb.not(eb.ref('is_chunk'))),
  );
  return row ? { contentType: row.content_type, sizeBytes: row.size_bytes } : undefined;
}

export interface StageSegmentInput {
  batchId: string;
  fileName: string;
  format: ContactFileFormat;
  /** Where the segment's first record starts (0: the start of the file). */
  byteOffset: number;
  /** Row number (staging seq) of the segment's first record. */
  seqStart: number;
  maxRows: number;
  /** Staged rows below this seq were ingested and counted: their blocks are deleted. */
  pruneBelow: number;
}

export interface StageSegmentResult {
  rows: number;
  /** Where the next segment starts. */
  nextByteOffset: number;
  /** The file has no records past this segment. */
  done: boolean;
}

/**
 * Reads up to `maxRows` records from `byteOffset` and stages them from `seqStart` on, in one
 * transaction that first deletes what an earlier attempt of the same segment staged (a retry
 * stages the same rows again). Memory holds one block of rows and the reader's buffers.
 */
export async function stageFileSegment(pool: Pool, store: ObjectStore, input: StageSegmentInput, onRows?: (rows: number) => void): Promise<StageSegmentResult> {
  let header: string[] | undefined;
  let offset = input.byteOffset;
  if (input.format === 'csv') {
    const h = await readCsvHeader(store, input.fileName);
    if (!h.header) throw new ContactFileUnreadable(`Contacts file ${input.fileName}: ${h.problem}`);
    header = h.header;
    offset = Math.max(offset, h.end);
  }
  let rows = 0;
  let nextByteOffset = offset;
  let done = true;
  const records = recordsFrom(store, input.fileName, input.format, offset);
  async function* blocks(): AsyncGenerator<StagedBlock> {
    let block: unknown[] = [];
    let blockSeq = input.seqStart;
    for await (const r of records) {
      if (rows === input.maxRows) {
        done = false; // a record remains: the next segment starts where the last staged one ended
        break;
      }
      let row: unknown;
      if (r.cells) {
        const c = csvRow(header!, r.cells);
        row = c.row ?? { [FILE_ROW_ERROR]: c.error };
      } else row = r.row ?? { [FILE_ROW_ERROR]: r.error };
      block.push(row);
      rows++;
      nextByteOffset = r.end;
      if (block.length === STAGING_BLOCK) {
        yield { seq: blockSeq, data: JSON.stringify(block) };
        onRows?.(rows);
        blockSeq += block.length;
        block = [];
      }
    }
    if (block.length) yield { seq: blockSeq, data: JSON.stringify(block) };
  }
  try {
    await withTransaction(pool, async (client) => {
      // The segment's blocks of an earlier attempt, and the blocks wholly below pruneBelow.
      await runQuery(
        client,
        typedQueries<ContactIngestDB>()
          .deleteFrom('contact_ingest_staging')
          .where('batch_id', '=', input.batchId)
          .where((eb) => eb.or([eb('seq', '>=', input.seqStart), eb(eb('seq', '+', sql<number>`${STAGING_BLOCK}::int`), '<=', input.pruneBelow)])),
      );
      await copyBlocks(client, input.batchId, blocks());
    });
  } finally {
    await records.return(undefined);
  }
  return { rows, nextByteOffset, done };
}
