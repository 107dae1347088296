/** The `idempotency_records` rows behind the `Idempotency-Key` middleware (api/middleware/idempotency.ts). */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { InferEntity } from '@mikro-orm/core';
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import { IdempotencyRecord } from './platform.js';
import { assertWorkspaceScope, inWorkspace } from './tenancy.js';

export type IdempotencyRecordRow = Pick<InferEntity<typeof IdempotencyRecord>, 'requestHash' | 'status' | 'responseBody' | 'responseHeaders'>;

/** A record counts for 24 h. */
const RECORD_TTL_MS = 24 * 3600_000;

/**
 * Removes the workspace's records older than 24 h (they no longer count), whatever their key: a
 * key never sent again would otherwise stay for ever. Run before each keyed request of the
 * workspace, it finds the few records that expired since (`idempotency_records_ws_created`); a
 * workspace that stops sending keys keeps at most its last day's.
 */
export async function deleteExpiredIdempotencyRecords(em: EntityManager, workspaceId: string): Promise<void> {
  await em.nativeDelete(IdempotencyRecord, { workspaceId, createdAt: { $lt: new Date(Date.now() - RECORD_TTL_MS) } }, inWorkspace(workspaceId));
}

/**
 * True when this call created the record (the key was free); false when one already exists.
 * `on conflict do nothing`, not a caught unique violation: a replay is expected, and a failing
 * statement would put an ERROR line with the key's values into PostgreSQL's log each time.
 */
export async function insertIdempotencyRecord(em: EntityManager, workspaceId: string, key: string, method: string, path: string, requestHash: string): Promise<boolean> {
  assertWorkspaceScope(workspaceId);
  const inserted = await em
    .getKysely<InferKyselyDB<typeof IdempotencyRecord>>()
    .insertInto('idempotency_records')
    .values({ idempotency_key: key, method, path, request_hash: requestHash, created_at: new Date() })
    .onConflict((oc) => oc.columns(['workspace_id', 'idempotency_key']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function findIdempotencyRecord(em: EntityManager, workspaceId: string, key: string): Promise<IdempotencyRecordRow | null> {
  return em.findOne(IdempotencyRecord, { workspaceId, idempotencyKey: key }, { ...inWorkspace(workspaceId), disableIdentityMap: true });
}

export async function completeIdempotencyRecord(
  em: EntityManager,
  workspaceId: string,
  key: string,
  res: { status: number; body: string | null; headers: Record<string, string> },
): Promise<void> {
  await em.nativeUpdate(
    IdempotencyRecord,
    { workspaceId, idempotencyKey: key },
    { status: res.status, responseBody: res.body, responseHeaders: res.headers, completedAt: new Date() },
    inWorkspace(workspaceId),
  );
}

/** Frees the key of a request that did not succeed (only while it is still pending). */
export async function deletePendingIdempotencyRecord(em: EntityManager, workspaceId: string, key: string): Promise<void> {
  await em.nativeDelete(IdempotencyRecord, { workspaceId, idempotencyKey: key, status: null }, inWorkspace(workspaceId));
}
