/**
 * Claim check of bulk upserts: the API COPYs (binary) the request's rows into `contact_ingest_staging`
 * under a batch id and passes only that id to the workflow, whose activities read the rows back
 * in chunks and drop them when the job ends.
 *
 * Rows are staged in blocks of STAGING_BLOCK, each one JSON array (its first row's index is
 * `seq`): a 100,000-row request is 100 table rows to write and index, not 100,000, and a chunk
 * is read back with a few `JSON.parse` calls instead of one per row.
 */
import { pipeline } from 'node:stream/promises';
import { setImmediate as yieldToIo } from 'node:timers/promises';
import { Readable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import { sql } from 'kysely';
import type { Pool, PoolClient } from './pool.js';
import type { ContactIngestDB } from './contacts.js';
import { runQuery, typedQueries } from './sqlFragments.js';
import { mapRow, type ContactInput, type MappingPlan } from '../domain/contactMapping.js';
import type { ContactCatalog } from '../domain/contactCatalog.js';
import { timed, type PhaseTimes } from './phaseTimes.js';
import { BINARY_COPY_TRAILER, binaryCopyHeader } from './copyBinary.js';

export const STAGING_BLOCK = 1000;

const q = typedQueries<ContactIngestDB>();

/** Key of a staged row that stands for a malformed record of a contacts file; its value is the message. */
export const FILE_ROW_ERROR = '\u0000';

/**
 * One tuple (batch_id uuid, seq int4, data text) of binary COPY: each block travels as its bytes,
 * which the server stores without the per-byte parsing and unescaping of the text format (25 MB
 * of blocks: 165–185 ms instead of 225–340 ms through psql), and the API makes no escaping pass.
 */
function binaryTuple(batchId: Buffer, seq: number, data: string): Buffer {
  const len = Buffer.byteLength(data);
  const b = Buffer.allocUnsafe(2 + 4 + 16 + 4 + 4 + 4 + len);
  let o = b.writeInt16BE(3, 0);
  o = b.writeInt32BE(16, o);
  o += batchId.copy(b, o);
  o = b.writeInt32BE(4, o);
  o = b.writeInt32BE(seq, o);
  o = b.writeInt32BE(len, o);
  b.write(data, o);
  return b;
}

export async function stageRows(pool: Pool, batchId: string, rows: unknown[]): Promise<void> {
  const client = await pool.connect();
  try {
    await copyBlocks(client, batchId, (function* () {
      for (let i = 0; i < rows.length; i += STAGING_BLOCK) yield { seq: i, data: JSON.stringify(rows.slice(i, i + STAGING_BLOCK)) };
    })());
  } finally {
    client.release();
  }
}

/** Binary COPY of staged blocks (`data`: a JSON array whose first row is `seq`) under `batchId`. */
export async function copyBlocks(client: PoolClient, batchId: string, blocks: Iterable<StagedBlock> | AsyncIterable<StagedBlock>): Promise<void> {
  const id = Buffer.from(batchId.replace(/-/g, ''), 'hex');
  // raw SQL: a COPY stream.
  const stream = client.query(copyFrom(`copy contact_ingest_staging (batch_id, seq, data) from stdin with (format binary)`));
  async function* tuples() {
    yield binaryCopyHeader();
    for await (const b of blocks) yield binaryTuple(id, b.seq, b.data);
    yield BINARY_COPY_TRAILER;
  }
  await pipeline(Readable.from(tuples()), stream);
}

export interface StagedBlock {
  seq: number;
  data: string;
}

/** A row that could not be mapped: its index in the request and the JSON pointer of the problem. */
export interface RowError {
  row: number;
  path: string;
  message: string;
}

export interface StagedChunk {
  batchId: string;
  /** Staged row range `from <= seq < to`. */
  from: number;
  to: number;
  /** At most this many row errors are returned (the count is always exact). */
  maxErrors: number;
  /** JSON pointer of the rows in errors. */
  rowPath: string;
}

export interface MappedChunk {
  /** Staged rows found in the range. */
  rows: number;
  inputs: ContactInput[];
  failed: number;
  errors: RowError[];
}

/**
 * Reads the staged rows of a chunk and maps them through the source's plan. Blocks are parsed
 * one at a time, so a block's raw rows are garbage before the next is parsed.
 */
export async function readMappedChunk(pool: Pool, chunk: StagedChunk, catalog: ContactCatalog, plan: MappingPlan, phases?: PhaseTimes): Promise<MappedChunk> {
  const { batchId, from, to, maxErrors, rowPath } = chunk;
  // The blocks that hold rows of the range: the one holding `from` starts at most a block before it.
  const blocks = await timed(phases, 'staging read', () =>
    runQuery(
      pool,
      q
        .selectFrom('contact_ingest_staging')
        .select(['seq', 'data'])
        .where('batch_id', '=', batchId)
        .where('seq', '>', sql<number>`${from}::int - ${STAGING_BLOCK}::int`)
        .where('seq', '<', to)
        .orderBy('seq'),
    ),
  );
  const out: MappedChunk = { rows: 0, inputs: [], failed: 0, errors: [] };
  for (const [b, block] of blocks.entries()) {
    // Between blocks the event loop runs: mapping a chunk is 100–150 ms of JavaScript, and the
    // other chunk in flight, holding the workspace's write turn, waits for its COPYs' completions.
    if (b) await yieldToIo();
    const rows = await timed(phases, 'JSON parse', () => JSON.parse(block.data) as unknown[]);
    await timed(phases, 'mapping', () => {
      for (let i = Math.max(from - block.seq, 0); i < rows.length && block.seq + i < to; i++, out.rows++) mapStagedRow(out, rows[i], block.seq + i);
    });
  }
  return out;

  function mapStagedRow(out: MappedChunk, row: unknown, seq: number): void {
    // A malformed record of a contacts file, staged as its message.
    const unreadable = row && typeof row === 'object' && Object.hasOwn(row, FILE_ROW_ERROR) ? (row as Record<string, string>)[FILE_ROW_ERROR] : undefined;
    if (unreadable !== undefined) {
      out.failed++;
      if (out.errors.length < maxErrors) out.errors.push({ row: seq, path: `${rowPath}/${seq}`, message: unreadable });
      return;
    }
    const m = mapRow(row, catalog, plan, `${rowPath}/${seq}`);
    if (m.input) out.inputs.push(m.input);
    else {
      out.failed++;
      for (const e of m.errors) if (out.errors.length < maxErrors) out.errors.push({ row: seq, path: e.path, message: e.message });
    }
  }
}

export async function dropStaged(pool: Pool, batchId: string): Promise<void> {
  await runQuery(pool, q.deleteFrom('contact_ingest_staging').where('batch_id', '=', batchId));
}
