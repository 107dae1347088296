/**
 * Claim check of bulk upserts: the API stores the request's rows into `contact_ingest_staging`
 * under a batch id and passes only that id to the workflow, whose activities read the rows back
 * in chunks and drop them when the job ends.
 *
 * Rows are staged in blocks of STAGING_BLOCK, each one JSON array (its first row's index is
 * `seq`): a 100,000-row request is 100 table rows to write and index, not 100,000, and a chunk
 * is read back with a few `JSON.parse` calls instead of one per row.
 */
import type { Pool } from './pool.js';

export const STAGING_BLOCK = 1000;

/**
 * One INSERT whose blocks travel as bind parameters: unlike COPY text, a parameter needs no
 * escape pass over the request's bytes.
 */
export async function stageRows(pool: Pool, batchId: string, rows: unknown[]): Promise<void> {
  const params: unknown[] = [batchId];
  const values: string[] = [];
  for (let i = 0; i < rows.length; i += STAGING_BLOCK) {
    params.push(i, JSON.stringify(rows.slice(i, i + STAGING_BLOCK)));
    values.push(`($1, $${params.length - 1}::int, $${params.length})`);
  }
  if (values.length) await pool.query(`insert into contact_ingest_staging (batch_id, seq, data) values ${values.join(', ')}`, params);
}

/** Rows with `from <= seq < to`, in order: element i is request row `from + i`. */
export async function readStaged(pool: Pool, batchId: string, from: number, to: number): Promise<unknown[]> {
  const r = await pool.query<{ seq: number; data: string }>(
    `select seq, data from contact_ingest_staging where batch_id = $1 and seq > $2::int - $4::int and seq < $3 order by seq`,
    [batchId, from, to, STAGING_BLOCK],
  );
  const out: unknown[] = [];
  for (const block of r.rows) {
    const rows = JSON.parse(block.data) as unknown[];
    for (let i = Math.max(from - block.seq, 0); i < rows.length && block.seq + i < to; i++) out.push(rows[i]);
  }
  return out;
}

export async function dropStaged(pool: Pool, batchId: string): Promise<void> {
  await pool.query(`delete from contact_ingest_staging where batch_id = $1`, [batchId]);
}
