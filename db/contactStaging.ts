/**
 * Claim check of bulk upserts: the API COPYs the request's rows into `contact_ingest_staging`
 * under a batch id and passes only that id to the workflow, whose activities read the rows back
 * in chunks and drop them when the job ends.
 *
 * Rows are staged in blocks of STAGING_BLOCK, each one JSON array (its first row's index is
 * `seq`): a 100,000-row request is 100 table rows to write and index, not 100,000, and a chunk
 * is read back with a few `JSON.parse` calls instead of one per row.
 */
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import type { Pool } from './pool.js';

export const STAGING_BLOCK = 1000;

/** COPY text escaping of JSON text: JSON escapes every control character, so only backslashes remain. */
const escape = (json: string) => (json.includes('\\') ? json.replace(/\\/g, '\\\\') : json);

export async function stageRows(pool: Pool, batchId: string, rows: unknown[]): Promise<void> {
  const client = await pool.connect();
  try {
    const stream = client.query(copyFrom(`copy contact_ingest_staging (batch_id, seq, data) from stdin`));
    async function* blocks() {
      for (let i = 0; i < rows.length; i += STAGING_BLOCK) yield `${batchId}\t${i}\t${escape(JSON.stringify(rows.slice(i, i + STAGING_BLOCK)))}\n`;
    }
    await pipeline(Readable.from(blocks()), stream);
  } finally {
    client.release();
  }
}

/**
 * Calls `visit` with each staged row `from <= seq < to`, in order. Blocks are parsed one at a
 * time, so a block's raw rows are garbage before the next is parsed.
 */
export async function readStaged(pool: Pool, batchId: string, from: number, to: number, visit: (row: unknown, seq: number) => void): Promise<number> {
  const r = await pool.query<{ seq: number; data: string }>(
    `select seq, data from contact_ingest_staging where batch_id = $1 and seq > $2::int - $4::int and seq < $3 order by seq`,
    [batchId, from, to, STAGING_BLOCK],
  );
  let count = 0;
  for (const block of r.rows) {
    const rows = JSON.parse(block.data) as unknown[];
    for (let i = Math.max(from - block.seq, 0); i < rows.length && block.seq + i < to; i++, count++) visit(rows[i], block.seq + i);
  }
  return count;
}

export async function dropStaged(pool: Pool, batchId: string): Promise<void> {
  await pool.query(`delete from contact_ingest_staging where batch_id = $1`, [batchId]);
}
