/**
 * The statements of the verified-company import (activities/dbDiscovery.ts): the verified
 * `ds_companies` chosen, their upsert into the workspace's `companies` (one transaction), and
 * the verified people of those companies ranked by seniority.
 *
 * Raw SQL: set-based `unnest` upserts with `on conflict … returning (xmax = 0)` and a `lateral`
 * top-N per company, which neither the entity manager nor the query builder expresses.
 */
import { v7 as uuidv7 } from 'uuid';
import { SENIORITY_RANK_SQL } from '../domain/discoveryCatalog.js';
import { withTransaction, type Pool, type Queryable } from './pool.js';

export interface DsCompanyRow {
  id: string;
  company_name: string | null;
  company_website: string | null;
  company_domain: string | null;
  industry: string | null;
  size_range: string | null;
  company_pronet_url: string | null;
}

export interface DsPersonRow {
  member_pronet_url: string;
  member_first_name: string | null;
  member_last_name: string | null;
  member_full_name: string | null;
  member_job_title: string | null;
  member_emails: { email: string; status: string | null }[] | null;
  company_name: string | null;
  company_website: string | null;
  industry: string | null;
  size_range: string | null;
  company_pronet_url: string | null;
}

/** The verified dataset companies among `ids`, in no particular order. */
export async function findVerifiedDsCompanies(db: Queryable, ids: string[]): Promise<DsCompanyRow[]> {
  const r = await db.query<DsCompanyRow>(
    `select id, company_name, company_website, company_domain, industry, size_range, company_pronet_url
       from ds_companies where id = any($1::uuid[]) and verified`,
    [ids],
  );
  return r.rows;
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
  return withTransaction(pool, async (client) => {
    await client.query(
      `update companies c set company_key = t.key, updated_at = now()
         from unnest($2::text[], $3::text[]) as t(key, lname)
        where c.workspace_id = $1 and c.company_key = 'n:' || t.lname and t.key like 'd:%'
          and not exists (select 1 from companies d where d.workspace_id = $1 and d.company_key = t.key)`,
      [workspaceId, keyed.map((k) => k.key), keyed.map((k) => (k.r.company_name ?? '').trim().toLowerCase())],
    );
    const up = await client.query<{ created: boolean }>(
      `insert into companies (id, workspace_id, company_key, company_name, company_website, company_domain, company_industry, company_headcount, company_pronet, created_at, updated_at)
       select t.id, $1, t.k, t.n, t.w, t.d, t.i, t.h, t.p, now(), now()
         from unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) as t(id, k, n, w, d, i, h, p)
       on conflict (workspace_id, company_key) do update set
         company_name = excluded.company_name, company_website = excluded.company_website, company_domain = excluded.company_domain,
         company_industry = excluded.company_industry, company_headcount = excluded.company_headcount, company_pronet = excluded.company_pronet,
         updated_at = now()
       returning (xmax = 0) as created`,
      [
        workspaceId,
        keyed.map(() => uuidv7()),
        keyed.map((k) => k.key),
        keyed.map((k) => k.r.company_name),
        keyed.map((k) => k.r.company_website),
        keyed.map((k) => (k.key.startsWith('d:') ? k.key.slice(2) : null)),
        keyed.map((k) => k.r.industry),
        keyed.map((k) => k.r.size_range),
        keyed.map((k) => (k.r.company_pronet_url ? `https://${k.r.company_pronet_url}` : null)),
      ],
    );
    const created = up.rows.filter((r) => r.created).length;
    return { created, updated: up.rows.length - created };
  });
}

/** Up to `perCompany` verified people of each company, most senior first (then experience, id). */
export async function verifiedPeopleOf(db: Queryable, companyIds: string[], perCompany: number): Promise<DsPersonRow[]> {
  const r = await db.query<DsPersonRow>(
    `select p.member_pronet_url, p.member_first_name, p.member_last_name, p.member_full_name, p.member_job_title, p.member_emails,
            c.company_name, c.company_website, c.industry, c.size_range, c.company_pronet_url
       from ds_companies c
       cross join lateral (
         select * from ds_people p where p.company_id = c.id and p.verified
          order by ${SENIORITY_RANK_SQL}, p.member_years_experience desc nulls last, p.id limit $2) p
      where c.id = any($1::uuid[])`,
    [companyIds, perCompany],
  );
  return r.rows;
}
