/**
 * The ingest lock and the identity log of contact ingests (db/contactIngest.ts), and the two
 * entry points for writers outside the ingest path that change a contact's emails.
 */
import { sql } from 'kysely';
import { packHashes, unpackHashes } from '../domain/hash53.js';
import type { PoolClient } from './pool.js';
import type { ContactIngestDB } from './contacts.js';
import { runQuery, typedQueries } from './sqlFragments.js';

const q = typedQueries<ContactIngestDB>();

/** Raised by the optimistic pass when another ingest committed an identity the batch did not see. */
export class IngestConflict extends Error {}

/** Unique violation, deadlock: a concurrent ingest wrote the same identity. */
export const isConflict = (e: unknown) => e instanceof IngestConflict || ['23505', '40P01'].includes((e as { code?: string }).code ?? '');

export const ingestLock = (client: PoolClient, workspaceId: string) =>
  // raw SQL: an advisory lock, a function call on no table.
  client.query(`select pg_advisory_xact_lock(hashtextextended('contact-ingest:' || $1, 0))`, [workspaceId]);

/**
 * The identity log (`contact_identity_log`): every ingest, under the workspace's ingest lock and
 * so in commit order, appends (hashes of) the emails and row keys it wrote. An optimistic ingest
 * notes the log's end before its look-ups; before it commits it reads what was appended since,
 * and any email or row key (of its source) in common means another ingest may have written a
 * contact it did not see: it is redone under the lock (as after a hash collision, harmlessly).
 * Entries are kept LOG_KEEP_MS; a batch that spent more than LOG_TRUST_MS between look-up and
 * check does not trust the log and is redone.
 */
const LOG_KEEP_MS = 15 * 60_000;
const LOG_TRUST_MS = 5 * 60_000;

export interface LogPosition {
  seq: number;
  at: number;
}

/** A batch's identities as the log stores them. */
export interface IdentityHashes {
  emails: Buffer;
  rowKeys: Buffer;
}

export async function identityLogPosition(client: PoolClient, workspaceId: string): Promise<LogPosition> {
  const [r] = await runQuery(
    client,
    q
      .selectFrom('contact_identity_log')
      .select((eb) => eb.fn.coalesce(eb.fn.max('seq'), eb.lit(0)).as('seq')),
  );
  return { seq: r!.seq, at: Date.now() };
}

export async function checkIdentityLog(client: PoolClient, since: LogPosition, workspaceId: string, sourceId: string, mine: IdentityHashes): Promise<void> {
  if (Date.now() - since.at > LOG_TRUST_MS) throw new IngestConflict('the batch took too long to trust the identity log');
  const recent = await runQuery(
    client,
    q
      .selectFrom('contact_identity_log')
      .select((eb) => [eb('source_id', 'is not distinct from', sourceId).$castTo<boolean>().as('same_source'), 'email_hashes', 'row_key_hashes'])
      .where('seq', '>', since.seq),
  );
  if (!recent.length) return;
  const emails = new Set(unpackHashes(mine.emails));
  const rowKeys = new Set(unpackHashes(mine.rowKeys));
  for (const r of recent)
    if (unpackHashes(r.email_hashes).some((h) => emails.has(h)) || (r.same_source && unpackHashes(r.row_key_hashes).some((h) => rowKeys.has(h))))
      throw new IngestConflict('a concurrent ingest wrote an identity of this batch');
}

/** Appends the identities this transaction wrote; the caller holds the ingest lock. */
export async function logIdentities(client: PoolClient, workspaceId: string, sourceId: string | null, written: IdentityHashes): Promise<void> {
  await runQuery(
    client,
    q
      .with('expired', (db) =>
        db
          .deleteFrom('contact_identity_log')
          .where('logged_at', '<', sql<Date>`clock_timestamp() - ${LOG_KEEP_MS}::int * interval '1 millisecond'`),
      )
      .insertInto('contact_identity_log')
      .values({ source_id: sourceId, email_hashes: written.emails, row_key_hashes: written.rowKeys }),
  );
}

/**
 * For writers outside the ingest path that change a contact's emails (PATCH): takes the ingest
 * lock (before any row lock: ingests take it before writing contacts). Call logEmailWrite under it.
 */
export async function lockForEmailWrite(client: PoolClient, workspaceId: string): Promise<void> {
  await ingestLock(client, workspaceId);
}

/**
 * Logs emails added to or removed from a contact, so that an ingest in flight that looked them up
 * earlier is redone. The caller holds the lock (lockForEmailWrite).
 */
export async function logEmailWrite(client: PoolClient, workspaceId: string, emails: string[]): Promise<void> {
  if (emails.length) await logIdentities(client, workspaceId, null, { emails: packHashes(emails), rowKeys: packHashes([]) });
}
