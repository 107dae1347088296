/**
 * Dataset opt-outs (issue 30 item 3, docs/PRIVACY.md): the operator's opt-out list for the global
 * discovery dataset. Each identifier is stored as a keyed hash (HMAC-SHA256, key derived from
 * SERVER_SECRET, the same construction as the workspace suppression list under its own key):
 * no clear text. Applying the list removes the people it names from `ds_people` (the search-side
 * rows follow through their triggers) and their posts from `ds_posts`, so discovery search,
 * verified search and the `dataset` enrichment provider no longer find them; every later import
 * (db/datasetImport.ts) skips records that hash to an entry, so they stay out.
 *
 * The dataset is global (no workspace): these statements run on the tools' pool (admin CLI,
 * dataset import), which row-level security does not bind.
 */
import { hkdfSync } from 'node:crypto';
import type { Pool, Queryable } from './pool.js';
import { withTransaction } from './pool.js';
import { suppressionHash } from './privacy.js';
import type { DatasetOptOutList } from '../domain/datasetOptOut.js';
import type { DatasetOptOutKind } from './subjectAccessEntities.js';

/** The key of dataset opt-out hashes, derived from SERVER_SECRET (not the suppression list's key). */
export function datasetOptOutKey(serverSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', serverSecret, 'dataset-opt-out', 'hmac-sha256 v1', 32));
}

export const datasetOptOutHash = (key: Buffer, kind: DatasetOptOutKind, normalized: string): string => suppressionHash(key, kind, normalized);

export interface DatasetOptOutReport {
  /** New entries on the list (an identifier already on it counts once, ever). */
  entriesAdded: number;
  /** Dataset people removed now. */
  peopleRemoved: number;
  /** Dataset posts by or about them removed now. */
  postsRemoved: number;
  /** Person ids that named no dataset person (nothing to hash: the id is not kept across imports). */
  unknownPersonIds: number;
}

/**
 * Puts the identifiers on the opt-out list and removes the people they name from the dataset, in
 * one transaction. A person named by one identifier has all of theirs listed (their profile URL
 * and every email of their record), so a re-import under another of them stays out too. Idempotent.
 */
export async function applyDatasetOptOuts(
  pool: Pool,
  key: Buffer,
  list: DatasetOptOutList,
  opts: {
    /** Called once the removal is committed with the people removed (a search index drops them: DISCOVERY_ENGINE=opensearch). */
    afterRemoval?: (removed: { personIds: string[]; companyIds: string[] }) => Promise<void>;
  } = {},
): Promise<DatasetOptOutReport> {
  let removed: { id: string; company_id: string | null }[] = [];
  const report = await withTransaction(pool, async (client) => {
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const matched = await client.query<{ id: string; member_pronet_url: string; emails: string[] }>(
      `select id, member_pronet_url, coalesce(array(select lower(e->>'email') from jsonb_array_elements(member_emails) e), '{}') as emails
       from ds_people
       where id = any($1::uuid[]) or member_pronet_url = any($2::text[])
          or ($3::text[] <> '{}' and exists (select 1 from jsonb_array_elements(member_emails) e where lower(e->>'email') = any($3::text[])))
       for update`,
      [list.personIds, list.profileUrls, list.emails],
    );
    const foundIds = new Set(matched.rows.map((r) => r.id));
    const urls = [...new Set([...list.profileUrls, ...matched.rows.map((r) => r.member_pronet_url)])];
    const emails = [...new Set([...list.emails, ...matched.rows.flatMap((r) => r.emails)])];
    const entries = [...emails.map((e) => ({ kind: 'email' as const, hash: datasetOptOutHash(key, 'email', e) })), ...urls.map((u) => ({ kind: 'profileUrl' as const, hash: datasetOptOutHash(key, 'profileUrl', u) }))];
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const added = entries.length
      ? await client.query(`insert into dataset_opt_outs (identifier_hash, kind) select h, k from unnest($1::text[], $2::text[]) as t(h, k) on conflict do nothing`, [
          entries.map((e) => e.hash),
          entries.map((e) => e.kind),
        ])
      : { rowCount: 0 };
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const posts = await client.query(`delete from ds_posts where member_pronet_url = any($1::text[]) or author_pronet_url = any($1::text[])`, [urls]);
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const people = await client.query<{ id: string; company_id: string | null }>(`delete from ds_people where id = any($1::uuid[]) returning id, company_id`, [[...foundIds]]);
    removed = people.rows;
    return {
      entriesAdded: added.rowCount ?? 0,
      peopleRemoved: people.rowCount ?? 0,
      postsRemoved: posts.rowCount ?? 0,
      unknownPersonIds: list.personIds.filter((id) => !foundIds.has(id)).length,
    };
  });
  if (opts.afterRemoval && removed.length) {
    await opts.afterRemoval({ personIds: removed.map((r) => r.id), companyIds: [...new Set(removed.flatMap((r) => (r.company_id ? [r.company_id] : [])))] });
  }
  return report;
}

/** Every hash on the opt-out list (the importer tests each record against it in memory). */
export async function datasetOptOutHashes(db: Queryable): Promise<Set<string>> {
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const r = await db.query<{ identifier_hash: string }>(`select identifier_hash from dataset_opt_outs`);
  return new Set(r.rows.map((x) => x.identifier_hash));
}
