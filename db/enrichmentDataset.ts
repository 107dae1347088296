/**
 * Look-ups of the built-in `dataset` enrichment provider (activities/providers/enrichmentDataset.ts)
 * in the global discovery dataset (`ds_people`, `ds_companies`, `ds_posts`): each one indexed
 * statement by normalised profile URL, company domain or name. The dataset belongs to no workspace,
 * so these reads sit outside the workspace filter; they stay plain parameterised SQL on the raw
 * pool (one named column list each, read-only).
 */
import type { Queryable } from './pool.js';
import { escapeLike } from '../domain/like.js';

export interface DatasetPersonRow {
  member_pronet_url: string;
  member_full_name: string | null;
  member_first_name: string | null;
  member_last_name: string | null;
  member_job_title: string | null;
  member_seniority: string | null;
  member_headline: string | null;
  member_location_city: string | null;
  member_location_country: string | null;
  member_skills: string[];
  member_years_experience: number | null;
}

export interface DatasetCompanyRow {
  company_pronet_url: string;
  company_name: string | null;
  company_website: string | null;
  industry: string | null;
  size_range: string | null;
  employee_count: number | null;
  founded_year: number | null;
  hq_city: string | null;
  hq_state: string | null;
  hq_country: string | null;
  technologies: string[];
}

export interface DatasetPostRow {
  post_url: string;
  text: string | null;
  posted_at: Date | null;
  likes: number | null;
  comments: number | null;
}

export async function datasetPerson(db: Queryable, key: string): Promise<DatasetPersonRow | undefined> {
  const r = await db.query<DatasetPersonRow>(
    `select member_pronet_url, member_full_name, member_first_name, member_last_name, member_job_title, member_seniority,
            member_headline, member_location_city, member_location_country, member_skills, member_years_experience
       from ds_people where member_pronet_url = $1`,
    [key],
  );
  return r.rows[0];
}

/** The company of the person with profile `key`: by company id, else by the person's company profile URL. */
export async function datasetCompanyOfPerson(db: Queryable, key: string): Promise<DatasetCompanyRow | undefined> {
  const r = await db.query<DatasetCompanyRow>(
    `select c.company_pronet_url, c.company_name, c.company_website, c.industry, c.size_range, c.employee_count,
            c.founded_year, c.hq_city, c.hq_state, c.hq_country, c.technologies
       from ds_people p
       join ds_companies c on c.id = p.company_id or (p.company_id is null and c.company_pronet_url = p.company_pronet_url)
      where p.member_pronet_url = $1
      limit 1`,
    [key],
  );
  return r.rows[0];
}

/** `member_emails` of the person with profile `key` (unparsed jsonb). */
export async function datasetEmailsByProfile(db: Queryable, key: string): Promise<unknown> {
  const r = await db.query<{ member_emails: unknown }>(`select member_emails from ds_people where member_pronet_url = $1`, [key]);
  return r.rows[0]?.member_emails;
}

/** `member_emails` of the best person named so at the company of `companyDomain` (verified first). */
export async function datasetEmailsAtCompany(db: Queryable, companyDomain: string, name: { fullName: string; firstName?: string; lastName?: string }): Promise<unknown> {
  const r = await db.query<{ member_emails: unknown }>(
    `select p.member_emails
       from ds_companies c
       join ds_people p on p.company_id = c.id
      where c.company_domain = $1
        and (lower(p.member_full_name) = lower($2)
             or (lower(p.member_first_name) = lower($3) and lower(p.member_last_name) = lower($4)))
      order by p.verified desc, p.id
      limit 1`,
    [companyDomain, name.fullName, name.firstName ?? '', name.lastName ?? ''],
  );
  return r.rows[0]?.member_emails;
}

/** `member_emails` of up to two people with this full name (case-insensitive): the caller needs to know whether it is unique. */
export async function datasetEmailsByName(db: Queryable, fullName: string): Promise<unknown[]> {
  const r = await db.query<{ member_emails: unknown }>(`select member_emails from ds_people where member_full_name ilike $1 limit 2`, [escapeLike(fullName)]);
  return r.rows.map((row) => row.member_emails);
}

/** `member_phones` of the person with profile `key` (unparsed jsonb). */
export async function datasetPhones(db: Queryable, key: string): Promise<unknown> {
  const r = await db.query<{ member_phones: unknown }>(`select member_phones from ds_people where member_pronet_url = $1`, [key]);
  return r.rows[0]?.member_phones;
}

/** The person's own posts (not interactions), newest first. */
export async function datasetPosts(db: Queryable, key: string, limit: number): Promise<DatasetPostRow[]> {
  const r = await db.query<DatasetPostRow>(
    `select post_url, text, posted_at, likes, comments
       from ds_posts
      where member_pronet_url = $1 and interaction_type is null
      order by posted_at desc nulls last
      limit $2`,
    [key, limit],
  );
  return r.rows;
}
