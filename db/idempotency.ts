/** The `idempotency_records` rows behind the `Idempotency-Key` middleware (api/middleware/idempotency.ts). */
import type { Queryable } from './pool.js';

export interface IdempotencyRecord {
  request_hash: string;
  /** Null while the first request is still being processed. */
  status: number | null;
  response_body: unknown;
  response_headers: Record<string, string> | null;
}

/** Removes the key's record when it is older than 24 h (it no longer counts). */
export async function deleteExpiredIdempotencyRecord(db: Queryable, workspaceId: string, key: string): Promise<void> {
  await db.query(`delete from idempotency_records where workspace_id = $1 and idempotency_key = $2 and created_at < now() - interval '24 hours'`, [workspaceId, key]);
}

/** True when this call created the record (the key was free); false when one already exists. */
export async function insertIdempotencyRecord(db: Queryable, workspaceId: string, key: string, method: string, path: string, requestHash: string): Promise<boolean> {
  const ins = await db.query(
    `insert into idempotency_records (workspace_id, idempotency_key, method, path, request_hash) values ($1, $2, $3, $4, $5)
     on conflict do nothing`,
    [workspaceId, key, method, path, requestHash],
  );
  return ins.rowCount === 1;
}

export async function findIdempotencyRecord(db: Queryable, workspaceId: string, key: string): Promise<IdempotencyRecord | null> {
  const r = await db.query<IdempotencyRecord>(
    `select request_hash, status, response_body, response_headers from idempotency_records where workspace_id = $1 and idempotency_key = $2`,
    [workspaceId, key],
  );
  return r.rows[0] ?? null;
}

export async function completeIdempotencyRecord(
  db: Queryable,
  workspaceId: string,
  key: string,
  res: { status: number; body: unknown; headers: Record<string, string> },
): Promise<void> {
  await db.query(
    `update idempotency_records set status = $3, response_body = $4, response_headers = $5, completed_at = now() where workspace_id = $1 and idempotency_key = $2`,
    [workspaceId, key, res.status, JSON.stringify(res.body ?? null), JSON.stringify(res.headers)],
  );
}

/** Frees the key of a request that did not succeed (only while it is still pending). */
export async function deletePendingIdempotencyRecord(db: Queryable, workspaceId: string, key: string): Promise<void> {
  await db.query(`delete from idempotency_records where workspace_id = $1 and idempotency_key = $2 and status is null`, [workspaceId, key]);
}
