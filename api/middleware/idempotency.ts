/**
 * `Idempotency-Key` on POSTs that create something or start a job (DESIGN §3): the same key and
 * body within 24 h replays the first response (`Idempotent-Replayed: true`, no second debit or
 * workflow); the same key with another body is 422; while the first is still running, 409.
 * Only successful responses are stored: a failed attempt may be retried with the same key. The
 * body is stored as the text that was sent (db/idempotency.ts), and a replay sends that text.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../domain/pagination.js';
import { invalidField } from '../../domain/errors.js';
import { conflict, unprocessable } from '../errors.js';
import {
  completeIdempotencyRecord,
  deleteExpiredIdempotencyRecords,
  deletePendingIdempotencyRecord,
  findIdempotencyRecord,
  insertIdempotencyRecord,
} from '../../db/idempotency.js';
import type { EntityManager } from '@mikro-orm/postgresql';

export interface StoredResponse {
  status: number;
  /** The body exactly as it was sent (its JSON text), null when the response had none. */
  body: string | null;
  headers: Record<string, string>;
}

/**
 * A replay's body: the JSON text the first response sent, answered as it is (not parsed and
 * serialised again), so that the replay is the first response byte for byte — key order included.
 */
export class SentJson {
  constructor(readonly text: string) {}
}

export type IdempotencyClaim = { kind: 'new' } | { kind: 'replay'; response: StoredResponse };

export function requestHash(method: string, path: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${path}\n${canonicalJson(body ?? null)}`).digest('hex');
}

export async function claimIdempotencyKey(em: EntityManager, workspaceId: string, key: string, method: string, path: string, body: unknown): Promise<IdempotencyClaim> {
  if (key.length > 255) throw invalidField('/headers/idempotency-key', 'must be at most 255 characters');
  const hash = requestHash(method, path, body);
  // Records older than 24 h no longer count (this key's among them).
  await deleteExpiredIdempotencyRecords(em, workspaceId);
  if (await insertIdempotencyRecord(em, workspaceId, key, method, path, hash)) return { kind: 'new' };
  const row = await findIdempotencyRecord(em, workspaceId, key);
  if (!row) return claimIdempotencyKey(em, workspaceId, key, method, path, body);
  if (row.requestHash !== hash) throw unprocessable('idempotency_key_reused', 'This Idempotency-Key was used with a different request body or path');
  if (row.status == null) throw conflict('A request with this Idempotency-Key is still being processed', 'idempotency_request_in_progress');
  return { kind: 'replay', response: { status: row.status, body: row.responseBody ?? null, headers: row.responseHeaders ?? {} } };
}

export async function completeIdempotencyKey(em: EntityManager, workspaceId: string, key: string, res: StoredResponse): Promise<void> {
  await completeIdempotencyRecord(em, workspaceId, key, res);
}

export async function releaseIdempotencyKey(em: EntityManager, workspaceId: string, key: string): Promise<void> {
  await deletePendingIdempotencyRecord(em, workspaceId, key);
}
