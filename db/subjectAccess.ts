/**
 * SQL of subject-access requests (issue 30 item 4, docs/PRIVACY.md): the request row (the sealed
 * identifiers while the job runs, the resolved contact ids, the result) and the read of
 * everything the workspace holds about a person, gathered into one document by the access job
 * (activities/subjectAccess.ts).
 *
 * Every statement runs in the workspace's scope (`inWorkspaceTransaction`, or the activity's):
 * row-level security keeps it to the workspace's rows and fills the workspace column in;
 * `assertWorkspaceScope` refuses a call from any other scope.
 */
import { sql } from 'kysely';
import type { Pool, Queryable } from './pool.js';
import { assertWorkspaceScope, inWorkspaceTransaction } from './tenancy.js';
import { loadContactCatalog } from './contactRead.js';
import { segmentMembershipWhere } from './segmentMembership.js';
import { compileSql } from './sqlFragments.js';
import { joinSql } from './contactColumns.js';

/** Keyring context of the identifiers column: a value sealed for another use never opens here. */
export const ACCESS_IDENTIFIERS_CONTEXT = 'access-identifiers';

export async function insertAccessRequest(db: Queryable, id: string, workspaceId: string, sealedIdentifiers: string): Promise<void> {
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  await db.query(`insert into access_requests (id, identifiers) values ($1, $2)`, [id, sealedIdentifiers]);
}

export interface AccessRequestRow {
  identifiers: string | null;
  plan: { contactIds?: string[] } | null;
  result: Record<string, unknown> | null;
}

export async function findAccessRequest(db: Queryable, workspaceId: string, id: string): Promise<AccessRequestRow | null> {
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  const r = await db.query<AccessRequestRow>(`select identifiers, plan, result from access_requests where id = $1`, [id]);
  return r.rows[0] ?? null;
}

/** Adds `part` to the request's plan or result (a jsonb merge: each step writes its own keys once). */
export async function mergeAccessRequest(db: Queryable, workspaceId: string, id: string, column: 'plan' | 'result', part: Record<string, unknown>): Promise<void> {
  assertWorkspaceScope(workspaceId);
  // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
  await db.query(`update access_requests set ${column} = coalesce(${column}, '{}'::jsonb) || $2::jsonb where id = $1`, [id, JSON.stringify(part)]);
}

/**
 * Records the link once (a retry answers the recorded one, so the job ends with the same result)
 * and drops the identifiers and the contact ids (only counts and the object's name stay);
 * returns the final result.
 */
export async function completeAccessRequest(pool: Pool, workspaceId: string, id: string, link: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  return inWorkspaceTransaction(pool, workspaceId, async (client) => {
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const row = (await client.query<{ result: Record<string, unknown> | null }>(`select result from access_requests where id = $1 for update`, [id])).rows[0];
    if (!row?.result) throw new Error(`access request ${id} has no document yet`);
    if (row.result.downloadUrl) return row.result;
    const result = { ...row.result, ...(await link()) };
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    await client.query(`update access_requests set result = $2::jsonb, identifiers = null, plan = null, completed_at = now() where id = $1`, [id, JSON.stringify(result)]);
    return result;
  });
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** Where a field's value came from: an enrichment (provider, slice, job, time) or the contact's sources. */
export type FieldOrigin =
  | { kind: 'enrichment'; provider: string; slice: string; jobId: string | null; at: string }
  | { kind: 'source'; sourceId: string; sourceType: string; sourceIdentifier: string | null; firstSeen: string; lastSeen: string };

/** Everything the workspace holds about the contacts `contactIds`, as one JSON-ready object. */
export async function subjectAccessDocument(pool: Pool, workspaceId: string, contactIds: string[]) {
  return inWorkspaceTransaction(pool, workspaceId, async (db) => {
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const contacts = await db.query<{
      id: string; status: string; first_name: string | null; last_name: string | null; full_name: string | null; title: string | null;
      pronet: string | null; emails: string[]; work_email: string | null; custom_fields: Record<string, unknown>;
      primary_company_id: string | null; company_ids: string[]; created_at: Date; updated_at: Date; deleted_at: Date | null;
    }>(
      `select id, status, first_name, last_name, full_name, title, pronet, emails, work_email, custom_fields, primary_company_id, company_ids,
              created_at, updated_at, deleted_at
       from contacts where id = any($1::uuid[]) order by id`,
      [contactIds],
    );
    const ids = contacts.rows.map((c) => c.id);
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const labels = new Map((await db.query<{ id: string; label: string }>(`select id, label from custom_field_definitions`)).rows.map((d) => [d.id, d.label]));
    const companyIds = [...new Set(contacts.rows.flatMap((c) => [...c.company_ids, ...(c.primary_company_id ? [c.primary_company_id] : [])]))];
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const companies = await db.query(
      `select id, company_name as "companyName", company_website as "companyWebsite", company_domain as "companyDomain", company_industry as "companyIndustry",
              company_headcount as "companyHeadcount", company_pronet as "companyPronet"
       from companies where id = any($1::uuid[]) order by id`,
      [companyIds],
    );
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const sources = await db.query<{ contact_id: string; source_id: string; source_type: string; source_identifier: string | null; row_key: string; origin: string | null; first_seen: Date; last_seen: Date }>(
      `select cs.contact_id, cs.source_id, s.source_type, s.source_identifier, cs.row_key, cs.origin, cs.first_seen, cs.last_seen
       from contact_sources cs join sources s on s.id = cs.source_id
       where cs.contact_id = any($1::uuid[]) order by cs.first_seen, cs.source_id`,
      [ids],
    );
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const enrichments = await db.query<{ contact_id: string; slice: string; provider: string; job_id: string | null; enriched_at: Date; fields: string[]; data: unknown }>(
      `select contact_id, slice, provider, job_id, enriched_at, fields, data from contact_enrichments
       where contact_id = any($1::uuid[]) order by enriched_at, slice`,
      [ids],
    );
    // Charges: ledger entries whose idempotency key names the contact (bulk enrichment charges
    // `bulk-enrich:<job>:<contact>:<slice>`), and the bulk-enrichment rows' credits.
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const ledger = await db.query<{ id: string; contact_id: string; amount: string; kind: string; reason: string; job_id: string | null; created_at: Date }>(
      `select t.id, c.id as contact_id, t.amount, t.kind, t.reason, t.job_id, t.created_at
       from credit_transactions t join unnest($1::text[]) as c(id) on t.idempotency_key like '%' || c.id || '%'
       order by t.created_at, t.id`,
      [ids],
    );
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const bulkRows = await db.query<{ contact_id: string; job_id: string; status: string; credits: number; settled_at: Date | null }>(
      `select contact_id, job_id, status, credits, settled_at from bulk_enrichment_rows where contact_id = any($1::uuid[]) order by job_id, seq`,
      [ids],
    );

    // Segments: each segment's membership rule evaluated on the person's contacts.
    const catalog = await loadContactCatalog(db, workspaceId);
    // raw SQL: not yet ported to typed Kysely (open work of issue 30, named in docs/PRIVACY.md).
    const segments = await db.query<{ id: string; name: string; is_default: boolean; segment_sources: string[]; conditions: unknown[] | null; grouped_condition: unknown }>(
      `select id, name, is_default, segment_sources, conditions, grouped_condition from segments order by id`,
    );
    const membership = new Map<string, { segmentId: string; name: string }[]>();
    for (const s of segments.rows) {
      let where;
      try {
        where = segmentMembershipWhere({ isDefault: s.is_default, segmentSources: s.segment_sources, conditions: s.conditions, groupedCondition: s.grouped_condition ?? undefined }, catalog);
      } catch {
        continue; // a stored condition the catalog no longer has: the segment matches nobody
      }
      const q = compileSql(sql`select c.id from contacts c ${sql.raw(joinSql(where.joins))} where c.id = any(${ids}::uuid[]) and (${where.sql})`);
      // raw SQL: composed of the condition compiler's fragments (db/conditionSql.ts).
      for (const r of (await db.query<{ id: string }>(q.text, q.values)).rows) {
        membership.set(r.id, [...(membership.get(r.id) ?? []), { segmentId: s.id, name: s.name }]);
      }
    }

    const companyById = new Map(companies.rows.map((c) => [c.id as string, c]));
    const records = contacts.rows.map((c) => {
      const own = {
        sources: sources.rows.filter((s) => s.contact_id === c.id),
        enrichments: enrichments.rows.filter((e) => e.contact_id === c.id),
      };
      const fromSources: FieldOrigin[] = own.sources.map((s) => ({
        kind: 'source', sourceId: s.source_id, sourceType: s.source_type, sourceIdentifier: s.source_identifier, firstSeen: iso(s.first_seen)!, lastSeen: iso(s.last_seen)!,
      }));
      const fields: Record<string, unknown> = {
        firstName: c.first_name, lastName: c.last_name, fullName: c.full_name, title: c.title, pronet: c.pronet, emails: c.emails, workEmail: c.work_email,
        ...Object.fromEntries(Object.entries(c.custom_fields ?? {}).map(([k, v]) => [`customFields.${labels.get(k) ?? k}`, v])),
      };
      // A field an enrichment wrote names its provider; any other came in through the contact's
      // sources (the ingest keeps no per-field source, so every source of the contact is named).
      const fieldOrigins = Object.fromEntries(
        Object.entries(fields)
          .filter(([, v]) => v !== null && !(Array.isArray(v) && v.length === 0))
          .map(([name, value]) => {
            const enriched: FieldOrigin[] = own.enrichments
              .filter((e) => e.fields.includes(name))
              .map((e) => ({ kind: 'enrichment', provider: e.provider, slice: e.slice, jobId: e.job_id, at: iso(e.enriched_at)! }));
            return [name, { value, origins: [...enriched, ...(enriched.length && name !== 'emails' ? [] : fromSources)] }];
          }),
      );
      return {
        contactId: c.id,
        status: c.status,
        createdAt: iso(c.created_at),
        updatedAt: iso(c.updated_at),
        deletedAt: iso(c.deleted_at),
        fields: fieldOrigins,
        companies: [...new Set([...(c.primary_company_id ? [c.primary_company_id] : []), ...c.company_ids])].map((id) => ({ primary: id === c.primary_company_id, ...(companyById.get(id) ?? { id }) })),
        sources: own.sources.map((s) => ({ sourceId: s.source_id, sourceType: s.source_type, sourceIdentifier: s.source_identifier, rowKey: s.row_key, origin: s.origin, firstSeen: iso(s.first_seen), lastSeen: iso(s.last_seen) })),
        enrichments: own.enrichments.map((e) => ({ provider: e.provider, slice: e.slice, jobId: e.job_id, enrichedAt: iso(e.enriched_at), fields: e.fields, data: e.data })),
        segments: membership.get(c.id) ?? [],
        charges: [
          ...ledger.rows.filter((t) => t.contact_id === c.id).map((t) => ({ ledgerEntryId: t.id, amount: Number(t.amount), kind: t.kind, reason: t.reason, jobId: t.job_id, at: iso(t.created_at) })),
        ],
        bulkEnrichmentRows: bulkRows.rows.filter((r) => r.contact_id === c.id).map((r) => ({ jobId: r.job_id, status: r.status, credits: r.credits, settledAt: iso(r.settled_at) })),
      };
    });
    return { contacts: records };
  });
}
