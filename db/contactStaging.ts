/**
 * Claim check of bulk upserts: the API COPYs the request's rows (as JSON text) into
 * `contact_ingest_staging` under a batch id and passes only that id to the workflow, whose
 * activities read the rows back in chunks and drop them when the job ends.
 */
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import type { Pool } from './pool.js';

const escape = (s: string) => s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');

export async function stageRows(pool: Pool, batchId: string, rows: unknown[]): Promise<void> {
  const client = await pool.connect();
  try {
    const stream = client.query(copyFrom(`copy contact_ingest_staging (batch_id, seq, data) from stdin`));
    async function* lines() {
      const CH = 2000;
      for (let i = 0; i < rows.length; i += CH) {
        let s = '';
        for (let j = i; j < Math.min(i + CH, rows.length); j++) s += `${batchId}\t${j}\t${escape(JSON.stringify(rows[j]))}\n`;
        yield s;
      }
    }
    await pipeline(Readable.from(lines()), stream);
  } finally {
    client.release();
  }
}

/** Rows with `from <= seq < to`, in order. */
export async function readStaged(pool: Pool, batchId: string, from: number, to: number): Promise<{ seq: number; data: unknown }[]> {
  const r = await pool.query<{ seq: number; data: string }>(
    `select seq, data from contact_ingest_staging where batch_id = $1 and seq >= $2 and seq < $3 order by seq`,
    [batchId, from, to],
  );
  return r.rows.map(({ seq, data }) => ({ seq, data: JSON.parse(data) as unknown }));
}

export async function dropStaged(pool: Pool, batchId: string): Promise<void> {
  await pool.query(`delete from contact_ingest_staging where batch_id = $1`, [batchId]);
}
