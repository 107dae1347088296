/**
 * The statements of the verified-company import (activities/dbDiscovery.ts): the verified
 * `ds_companies` chosen, their upsert into the workspace's `companies` (one transaction), and
 * the verified people of those companies ranked by seniority.
 *
 * Kysely typed from the entities (set-based `unnest` upserts with `on conflict … returning
 * (xmax = 0)` and a `lateral` top-N per company, which the entity manager does not express), run on
 * the activity's pg pool and transaction (`runQuery`).
 */
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { SENIORITY_RANK_SQL } from './discoveryColumns.js';
import { Company } from './contacts.js';
import { DsCompany, DsPerson } from './dataset.js';
import { withTransaction, type Pool, type Queryable } from './pool.js';
import { runQuery, typedQueries, uuidArray, type RowOf } from './sqlFragments.js';
import { assertWorkspaceScope } from './tenancy.js';

const db = typedQueries<InferKyselyDB<typeof DsCompany | typeof DsPerson | typeof Company>>();

const verifiedCompanies = (ids: string[]) =>
  db
    .selectFrom('ds_companies')
    .select(['id', 'company_name', 'company_website', 'company_domain', 'industry', 'size_range', 'company_pronet_url'])
    .where((eb) => eb.and([eb('id', '=', eb.fn.any(uuidArray(ids))), eb.ref('verified')]));

/** A verified dataset company as the import reads it, typed by the `DsCompany` entity. */
export type DsCompanyRow = RowOf<ReturnType<typeof verifiedCompanies>>;

/** The verified dataset companies among `ids`, in no particular order. */
export async function findVerifiedDsCompanies(q: Queryable, ids: string[]): Promise<DsCompanyRow[]> {
  return runQuery(q, verifiedCompanies(ids));
}

/** A dataset company with its workspace identity key (`d:<domain>` or `n:<lower-case name>`). */
export interface KeyedDsCompany {
  key: string;
  r: DsCompanyRow;
}

/**
 * Upserts the companies into the workspace by identity key, in one transaction; a company first
 * known by name only takes the domain key first. Returns how many rows were created and updated.
 */
export async function upsertCompaniesFromDataset(pool: Pool, workspaceId: string, keyed: KeyedDsCompany[]): Promise<{ created: number; updated: number }> {
  assertWorkspaceScope(workspaceId);
  return withTransaction(pool, async (client) => {
    const renames = sql<{ key: string; lname: string }>`unnest(${keyed.map((k) => k.key)}::text[], ${keyed.map((k) => (k.r.company_name ?? '').trim().toLowerCase())}::text[])`.as<'t'>(
      sql`t(key, lname)`,
    );
    await runQuery(
      client,
      db
        .updateTable('companies as c')
        .from(renames)
        .set((eb) => ({ company_key: eb.ref('t.key'), updated_at: sql`now()` }))
        .where('c.company_key', '=', sql<string>`'n:' || t.lname`)
        .where('t.key', 'like', 'd:%')
        .where((eb) =>
          eb.not(eb.exists(eb.selectFrom('companies as d').select(eb.lit(1).as('one')).whereRef('d.company_key', '=', 't.key'))),
        ),
    );
    type Incoming = { id: string; k: string; n: string | null; w: string | null; d: string | null; i: string | null; h: string | null; p: string | null };
    const incoming = sql<Incoming>`unnest(${keyed.map(() => uuidv7())}::uuid[], ${keyed.map((k) => k.key)}::text[], ${keyed.map((k) => k.r.company_name)}::text[],
      ${keyed.map((k) => k.r.company_website)}::text[], ${keyed.map((k) => (k.key.startsWith('d:') ? k.key.slice(2) : null))}::text[],
      ${keyed.map((k) => k.r.industry)}::text[], ${keyed.map((k) => k.r.size_range)}::text[],
      ${keyed.map((k) => (k.r.company_pronet_url ? `https://${k.r.company_pronet_url}` : null))}::text[])`.as<'t'>(sql`t(id, k, n, w, d, i, h, p)`);
    const up = await runQuery(
      client,
      db
        .insertInto('companies')
        .columns(['id', 'company_key', 'company_name', 'company_website', 'company_domain', 'company_industry', 'company_headcount', 'company_pronet', 'created_at', 'updated_at'])
        .expression((eb) =>
          eb
            .selectFrom(incoming)
            .select(['t.id', 't.k', 't.n', 't.w', 't.d', 't.i', 't.h', 't.p', sql<Date>`now()`.as('created_at'), sql<Date>`now()`.as('updated_at')]),
        )
        .onConflict((oc) =>
          oc.columns(['workspace_id', 'company_key']).doUpdateSet((eb) => ({
            company_name: eb.ref('excluded.company_name'),
            company_website: eb.ref('excluded.company_website'),
            company_domain: eb.ref('excluded.company_domain'),
            company_industry: eb.ref('excluded.company_industry'),
            company_headcount: eb.ref('excluded.company_headcount'),
            company_pronet: eb.ref('excluded.company_pronet'),
            updated_at: sql`now()`,
          })),
        )
        .returning(sql<boolean>`xmax = 0`.as('created')),
    );
    const created = up.filter((r) => r.created).length;
    return { created, updated: up.length - created };
  });
}

const verifiedPeople = (companyIds: string[], perCompany: number) =>
  db
    .selectFrom('ds_companies as c')
    .crossJoinLateral((eb) =>
      eb
        .selectFrom('ds_people as p')
        .selectAll('p')
        .whereRef('p.company_id', '=', 'c.id')
        .where((w) => w.ref('p.verified'))
        // The expression of the `ds_people_verified_rank` index (domain/discoveryCatalog.ts).
        .orderBy(sql.raw(SENIORITY_RANK_SQL))
        .orderBy('p.member_years_experience', (ob) => ob.desc().nullsLast())
        .orderBy('p.id')
        .limit(perCompany)
        .as('p'),
    )
    .select([
      'p.member_pronet_url', 'p.member_first_name', 'p.member_last_name', 'p.member_full_name', 'p.member_job_title', 'p.member_emails',
      'c.company_name', 'c.company_website', 'c.industry', 'c.size_range', 'c.company_pronet_url',
    ])
    // The entity types the jsonb as unknown[]; the dataset import writes these objects (domain/datasetRecords.ts).
    .$narrowType<{ member_emails: Array<{ email: string; status: string | null }> }>()
    .where((eb) => eb('c.id', '=', eb.fn.any(uuidArray(companyIds))));

/** A verified person and their company as the import reads them, typed by the `DsPerson` and `DsCompany` entities. */
export type DsPersonRow = RowOf<ReturnType<typeof verifiedPeople>>;

/** Up to `perCompany` verified people of each company, most senior first (then experience, id). */
export async function verifiedPeopleOf(q: Queryable, companyIds: string[], perCompany: number): Promise<DsPersonRow[]> {
  return runQuery(q, verifiedPeople(companyIds, perCompany));
}
