/**
 * SQL of the personal-data lifecycle (docs/PRIVACY.md): erasure requests (their sealed
 * identifiers, plan and report), the hard delete of a person from the workspace's tables, and the
 * suppression list of keyed hashes.
 *
 * Every statement runs in the workspace's scope (`inWorkspaceScope`): row-level security keeps it
 * to the workspace's rows and fills the workspace column in; `assertWorkspaceScope` refuses a call
 * from any other scope.
 */
import { createHmac, createSecretKey, hkdfSync, type KeyObject } from 'node:crypto';
import type { Queryable } from './pool.js';
import { scopeTransaction, type WorkspaceScope } from './scope.js';
import { assertWorkspaceScope } from './tenancy.js';
import { hash53, unpackHashes } from '../domain/hash53.js';
import { normalizeEmail, normalizeProfileUrl } from '../domain/identity.js';
import { lockForEmailWrite } from './identityLog.js';
import type { SuppressionKind, SuppressionReason } from './privacyEntities.js';

/** What an erasure request names: any mix of contact ids, emails and profile URLs. */
export interface PersonIdentifiers {
  contactIds: string[];
  emails: string[];
  profileUrls: string[];
}

/** Rows removed per table by one erasure (counts only: never the data). */
export interface DatabaseErasureReport {
  contacts: number;
  contactSources: number;
  identityLogEntries: number;
  stagedRows: number;
  idempotencyRecords: number;
  suppressionEntriesAdded: number;
}

/** Keyring context of the identifiers column: a value sealed for another use never opens here. */
export const ERASURE_IDENTIFIERS_CONTEXT = 'erasure-identifiers';


// ---------------------------------------------------------------------------------------------
// Suppression list

/** The key of suppression hashes, derived from the server secret (SERVER_SECRET): the hashes cannot be recomputed without it. */
export function suppressionKey(serverSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', serverSecret, 'suppression-list', 'hmac-sha256 v1', 32));
}

/** The normalised form of an identifier of `kind`, or null when it is not one. */
export function normalizeIdentifier(kind: SuppressionKind, raw: string): string | null {
  return kind === 'email' ? normalizeEmail(raw) : normalizeProfileUrl(raw);
}

/** Keyed hash of a normalised identifier: `kind` is part of it, so an email never matches a URL. */
export function suppressionHash(key: Buffer | KeyObject, kind: SuppressionKind, normalized: string): string {
  return createHmac('sha256', key).update(`${kind}\u0000${normalized}`).digest('hex');
}

export async function addSuppressions(db: Queryable, workspaceId: string, entries: { hash: string; kind: SuppressionKind }[], reason: SuppressionReason): Promise<number> {
  if (!entries.length) return 0;
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const r = await db.query(
    `insert into suppression_entries (identifier_hash, kind, reason)
     select h, k, $3 from unnest($1::text[], $2::text[]) as t(h, k)
     on conflict do nothing`,
    [entries.map((e) => e.hash), entries.map((e) => e.kind), reason],
  );
  return r.rowCount ?? 0;
}

/** Which of `hashes` are on the workspace's suppression list. */
export async function suppressedAmong(db: Queryable, workspaceId: string, hashes: string[]): Promise<Set<string>> {
  if (!hashes.length) return new Set();
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const r = await db.query<{ identifier_hash: string }>(`select identifier_hash from suppression_entries where identifier_hash = any($1::text[])`, [hashes]);
  return new Set(r.rows.map((x) => x.identifier_hash));
}

/** Whether the workspace's suppression list has any entry. */
export async function hasSuppressions(db: Queryable, workspaceId: string): Promise<boolean> {
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const r = await db.query<{ any: boolean }>(`select exists (select 1 from suppression_entries) as any`);
  return r.rows[0]!.any;
}

export interface SuppressionRow {
  identifierHash: string;
  kind: SuppressionKind;
  reason: SuppressionReason;
  createdAt: Date;
}

export async function listSuppressions({ db, workspaceId }: WorkspaceScope, limit: number, after: string | null): Promise<SuppressionRow[]> {
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const r = await db.query<{ identifier_hash: string; kind: SuppressionKind; reason: SuppressionReason; created_at: Date }>(
    `select identifier_hash, kind, reason, created_at from suppression_entries
     where ($1::text is null or identifier_hash > $1) order by identifier_hash limit $2`,
    [after, limit],
  );
  return r.rows.map((x) => ({ identifierHash: x.identifier_hash, kind: x.kind, reason: x.reason, createdAt: x.created_at }));
}

export async function removeSuppression({ db, workspaceId }: WorkspaceScope, hash: string): Promise<boolean> {
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const r = await db.query(`delete from suppression_entries where identifier_hash = $1`, [hash]);
  return (r.rowCount ?? 0) > 0;
}

// ---------------------------------------------------------------------------------------------
// Erasure requests

export async function insertErasureRequest({ db, workspaceId }: WorkspaceScope, id: string, sealedIdentifiers: string): Promise<void> {
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  await db.query(`insert into erasure_requests (id, identifiers) values ($1, $2)`, [id, sealedIdentifiers]);
}

export interface ErasureRequestRow {
  identifiers: string | null;
  plan: Record<string, unknown> | null;
  report: Record<string, unknown> | null;
}

export async function findErasureRequest({ db, workspaceId }: WorkspaceScope, id: string): Promise<ErasureRequestRow | null> {
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const r = await db.query<ErasureRequestRow>(`select identifiers, plan, report from erasure_requests where id = $1`, [id]);
  return r.rows[0] ?? null;
}

/** Adds `part` to the request's plan or report (a jsonb merge: each step writes its own keys once). */
export async function mergeErasureRequest(db: Queryable, workspaceId: string, id: string, column: 'plan' | 'report', part: Record<string, unknown>): Promise<void> {
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  await db.query(`update erasure_requests set ${column} = coalesce(${column}, '{}'::jsonb) || $2::jsonb where id = $1`, [id, JSON.stringify(part)]);
}

/** Replaces the request's sealed identifiers (the widened set of erasureResolve). */
export async function setErasureIdentifiers(db: Queryable, workspaceId: string, id: string, sealedIdentifiers: string): Promise<void> {
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  await db.query(`update erasure_requests set identifiers = $2 where id = $1`, [id, sealedIdentifiers]);
}

/** The Temporal part of the request's report, with the request row locked (one step writes it once). */
export async function lockTemporalReport(db: Queryable, workspaceId: string, id: string): Promise<{ workflowExecutions: number; jobs: number } | null> {
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const r = await db.query<{ r: { workflowExecutions: number; jobs: number } | null }>(`select report->'temporal' as r from erasure_requests where id = $1 for update`, [id]);
  return r.rows[0]?.r ?? null;
}

/** The end of a request: its identifiers are dropped (only the report stays). */
export async function completeErasureRequest({ db, workspaceId }: WorkspaceScope, id: string): Promise<void> {
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  await db.query(`update erasure_requests set identifiers = null, completed_at = coalesce(completed_at, now()) where id = $1`, [id]);
}

/** Everything the workspace's contacts say identifies the person: the request's identifiers and those of every contact they match. */
export async function expandIdentifiers(db: Queryable, workspaceId: string, ids: PersonIdentifiers): Promise<PersonIdentifiers> {
  const emails = ids.emails.map((e) => normalizeEmail(e)).filter((e): e is string => !!e);
  const keys = ids.profileUrls.map((u) => normalizeProfileUrl(u)).filter((u): u is string => !!u);
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const r = await db.query<{ id: string; emails: string[]; work_email: string | null; pronet: string | null; pronet_key: string | null }>(
    `select id, emails, work_email, pronet, pronet_key from contacts
     where id = any($1::uuid[]) or emails && $2::text[] or lower(work_email) = any($2::text[]) or pronet_key = any($3::text[])`,
    [ids.contactIds, emails, keys],
  );
  const out = { contactIds: new Set(ids.contactIds), emails: new Set(emails), profileUrls: new Set([...ids.profileUrls, ...keys]) };
  for (const c of r.rows) {
    out.contactIds.add(c.id);
    for (const e of [...c.emails, c.work_email]) if (e) out.emails.add(normalizeEmail(e) ?? e);
    for (const u of [c.pronet, c.pronet_key]) if (u) out.profileUrls.add(u);
  }
  return { contactIds: [...out.contactIds], emails: [...out.emails], profileUrls: [...out.profileUrls] };
}

/** The strings whose presence in a stored value means it carries the person (case-insensitive matching). */
export function needlesOf(ids: PersonIdentifiers): string[] {
  const all = [...ids.contactIds, ...ids.emails, ...ids.profileUrls, ...ids.profileUrls.map((u) => normalizeProfileUrl(u) ?? u)];
  return [...new Set(all.map((s) => s.toLowerCase()).filter((s) => s.length >= 5))];
}

/** `%needle%` patterns for `ilike any(...)`, with LIKE's wildcards escaped. */
const likePatterns = (needles: string[]) => needles.map((n) => `%${n.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);

/** Rows removed with a person (or a purged contact): counts per table. */
export type PersonRowsRemoved = Omit<DatabaseErasureReport, 'suppressionEntriesAdded'>;

/**
 * Deletes contacts `ids.contactIds` and everything hanging off them or carrying `ids`' emails and
 * profile URLs: source links, identity-log entries, staged rows (blanked), stored idempotent
 * responses. Runs in the caller's workspace transaction, which holds the ingest lock
 * (`lockForEmailWrite`). Shared by the erasure and the retention purge (db/retention.ts).
 */
export async function deletePersonRows(client: Queryable, workspaceId: string, ids: PersonIdentifiers): Promise<PersonRowsRemoved> {
  const needles = needlesOf(ids);
  const patterns = likePatterns(needles);
  assertWorkspaceScope(workspaceId);

  // Source links: by contact, and by row key (a source's key of the row may be the email or URL).
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const links = await client.query(
    `delete from contact_sources cs using sources s
     where s.id = cs.source_id and (cs.contact_id = any($1::uuid[]) or lower(cs.row_key) = any($2::text[]))`,
    [ids.contactIds, needles],
  );
  // The contact rows: emails, phones, custom fields, company links and segment membership live on them.
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const contacts = await client.query(`delete from contacts where id = any($1::uuid[])`, [ids.contactIds]);

  // The identity log holds 53-bit hashes of emails: entries with one of the person's go.
  const emailHashes = new Set(ids.emails.map((e) => hash53(e)));
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const log = await client.query<{ seq: string; email_hashes: Buffer }>(`select seq, email_hashes from contact_identity_log`);
  const logSeqs = log.rows.filter((r) => unpackHashes(r.email_hashes).some((h) => emailHashes.has(h))).map((r) => r.seq);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  if (logSeqs.length) await client.query(`delete from contact_identity_log where seq = any($1::bigint[])`, [logSeqs]);

  // Staged rows of the workspace's jobs still in flight: the person's rows are blanked in place
  // (an empty row keeps the block's row numbering; it ends as a row error without data).
  let stagedRows = 0;
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const blocks = await client.query<{ batch_id: string; seq: number; data: string }>(
    `select st.batch_id, st.seq, st.data from contact_ingest_staging st join jobs j on j.id = st.batch_id
     where st.data ilike any($1::text[])`,
    [patterns],
  );
  for (const b of blocks.rows) {
    const rows = JSON.parse(b.data) as unknown[];
    const kept = rows.map((row) => {
      const text = JSON.stringify(row).toLowerCase();
      if (!needles.some((n) => text.includes(n))) return row;
      stagedRows++;
      return {};
    });
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    await client.query(`update contact_ingest_staging set data = $3 where batch_id = $1 and seq = $2`, [b.batch_id, b.seq, JSON.stringify(kept)]);
  }

  // Stored responses replayed for an Idempotency-Key (a contact's POST answer carries the contact).
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const idem = await client.query(`delete from idempotency_records where response_body ilike any($1::text[])`, [patterns]);

  return {
    contacts: contacts.rowCount ?? 0,
    contactSources: links.rowCount ?? 0,
    identityLogEntries: logSeqs.length,
    stagedRows,
    idempotencyRecords: idem.rowCount ?? 0,
  };
}

/**
 * Hard-deletes the person from the workspace's tables in one transaction and puts the person's
 * emails and profile URLs on the suppression list, under the workspace's ingest lock (so no
 * ingest in flight interleaves). Idempotent: a second run finds nothing left to delete.
 */
export async function eraseFromDatabase(scope: WorkspaceScope, requestId: string, ids: PersonIdentifiers, key: Buffer): Promise<DatabaseErasureReport> {
  const { workspaceId } = scope;
  return scopeTransaction(scope, async (client) => {
    await lockForEmailWrite(client, workspaceId);
    // A retry after a crash answers what the first run removed: the report commits with the deletes.
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const done = (await client.query<{ r: DatabaseErasureReport | null }>(`select report->'database' as r from erasure_requests where id = $1 for update`, [requestId])).rows[0]?.r;
    if (done) return done;
    const removed = await deletePersonRows(client, workspaceId, ids);
    const profileKeys = [...new Set(ids.profileUrls.map((u) => normalizeProfileUrl(u)).filter((u): u is string => !!u))];

    const entries = [
      ...ids.emails.map((e) => ({ kind: 'email' as const, hash: suppressionHash(key, 'email', e) })),
      ...profileKeys.map((u) => ({ kind: 'profileUrl' as const, hash: suppressionHash(key, 'profileUrl', u) })),
    ];
    const added = await addSuppressions(client, workspaceId, entries, 'erasure');
    const report: DatabaseErasureReport = { ...removed, suppressionEntriesAdded: added };
    await mergeErasureRequest(client, workspaceId, requestId, 'report', { database: report });
    return report;
  });
}

/** The jobs rows (and their webhook delivery records) of workflows the erasure deleted from Temporal. */
export async function deleteJobsByWorkflowIds(db: Queryable, workspaceId: string, workflowIds: string[]): Promise<number> {
  if (!workflowIds.length) return 0;
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  await db.query(`delete from webhook_deliveries where job_id in (select id from jobs where workflow_id = any($1::text[]))`, [workflowIds]);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const r = await db.query(`delete from jobs where workflow_id = any($1::text[])`, [workflowIds]);
  return r.rowCount ?? 0;
}

export async function deleteMediaRows(db: Queryable, workspaceId: string, fileNames: string[]): Promise<void> {
  if (!fileNames.length) return;
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  await db.query(`delete from media_objects where file_name = any($1::text[])`, [fileNames]);
}

/**
 * Splits ingest inputs into those to write and the count of suppressed ones (any of the row's
 * emails or its profile URL on the workspace's suppression list): every import path calls this
 * before db/contactIngest.ts, so a suppressed person is never written again.
 */
export async function dropSuppressed<T extends { emails?: string[]; workEmail?: string; pronetKey?: string }>(
  db: Queryable,
  workspaceId: string,
  inputs: T[],
  key: Buffer,
): Promise<{ kept: T[]; suppressed: number }> {
  if (!inputs.length) return { kept: inputs, suppressed: 0 };
  // Most workspaces suppress no one: one look at the list spares a batch its keyed hashes (an HMAC
  // per email and profile URL was 3 of the worker's 11 CPU seconds per 100,000 rows).
  if (!(await hasSuppressions(db, workspaceId))) return { kept: inputs, suppressed: 0 };
  const secret = createSecretKey(key);
  const hashed = new Map<string, string>();
  const hashOnce = (kind: SuppressionKind, normalized: string) => {
    const k = `${kind}\u0000${normalized}`;
    let h = hashed.get(k);
    if (h === undefined) hashed.set(k, (h = suppressionHash(secret, kind, normalized)));
    return h;
  };
  const hashesOf = (i: T) => [
    ...[...(i.emails ?? []), ...(i.workEmail ? [i.workEmail] : [])].map((e) => hashOnce('email', normalizeEmail(e) ?? e)),
    ...(i.pronetKey ? [hashOnce('profileUrl', i.pronetKey)] : []),
  ];
  const per = inputs.map(hashesOf);
  const hit = await suppressedAmong(db, workspaceId, [...new Set(hashed.values())]);
  if (!hit.size) return { kept: inputs, suppressed: 0 };
  const kept = inputs.filter((_, i) => !per[i]!.some((h) => hit.has(h)));
  return { kept, suppressed: inputs.length - kept.length };
}

/** Whether a person named by an email and/or profile URL is on the workspace's suppression list. */
export async function isSuppressed(db: Queryable, workspaceId: string, who: { email?: string | null; profileUrl?: string | null }, key: Buffer): Promise<boolean> {
  const email = normalizeEmail(who.email);
  const profile = normalizeProfileUrl(who.profileUrl);
  const hashes = [...(email ? [suppressionHash(key, 'email', email)] : []), ...(profile ? [suppressionHash(key, 'profileUrl', profile)] : [])];
  return (await suppressedAmong(db, workspaceId, hashes)).size > 0;
}
