/**
 * Look-ups of the built-in `dataset` enrichment provider (activities/providers/enrichmentDataset.ts)
 * in the global discovery dataset (`ds_people`, `ds_companies`, `ds_posts`): each one indexed
 * statement by normalised profile URL, company domain or name. The dataset belongs to no workspace,
 * so these reads sit outside the workspace filter; they are Kysely statements typed from the
 * dataset entities, run on the raw pool (`runQuery`: pg's types, read-only).
 */
import type { NotNull } from 'kysely';
import type { Queryable } from './pool.js';
import { escapeLike } from '../domain/like.js';
import type { DatasetDB } from './dataset.js';
import { runQuery, typedQueries, type RowOf } from './sqlFragments.js';

const dataset = typedQueries<DatasetDB>();

const personByProfile = (key: string) =>
  dataset
    .selectFrom('ds_people')
    .select([
      'member_pronet_url', 'member_full_name', 'member_first_name', 'member_last_name', 'member_job_title', 'member_seniority',
      'member_headline', 'member_location_city', 'member_location_country', 'member_skills', 'member_years_experience',
    ])
    .where('member_pronet_url', '=', key);

/** The person's columns enrichment reads, typed by the `DsPerson` entity. */
export type DatasetPersonRow = RowOf<ReturnType<typeof personByProfile>>;

export async function datasetPerson(db: Queryable, key: string): Promise<DatasetPersonRow | undefined> {
  const [row] = await runQuery(db, personByProfile(key));
  return row;
}

const companyOfPerson = (key: string) =>
  dataset
    .selectFrom('ds_people as p')
    .innerJoin('ds_companies as c', (join) =>
      join.on((eb) => eb.or([eb('c.id', '=', eb.ref('p.company_id')), eb.and([eb('p.company_id', 'is', null), eb('c.company_pronet_url', '=', eb.ref('p.company_pronet_url'))])])),
    )
    .select([
      'c.company_pronet_url', 'c.company_name', 'c.company_website', 'c.industry', 'c.size_range', 'c.employee_count',
      'c.founded_year', 'c.hq_city', 'c.hq_state', 'c.hq_country', 'c.technologies',
    ])
    .where('p.member_pronet_url', '=', key)
    .limit(1);

/** The company's columns enrichment reads, typed by the `DsCompany` entity. */
export type DatasetCompanyRow = RowOf<ReturnType<typeof companyOfPerson>>;

/** The company of the person with profile `key`: by company id, else by the person's company profile URL. */
export async function datasetCompanyOfPerson(db: Queryable, key: string): Promise<DatasetCompanyRow | undefined> {
  const [row] = await runQuery(db, companyOfPerson(key));
  return row;
}

/** `member_emails` of the person with profile `key` (unparsed jsonb). */
export async function datasetEmailsByProfile(db: Queryable, key: string): Promise<unknown> {
  const [row] = await runQuery(db, dataset.selectFrom('ds_people').select('member_emails').where('member_pronet_url', '=', key));
  return row?.member_emails;
}

/** `member_emails` of the best person named so at the company of `companyDomain` (verified first). */
export async function datasetEmailsAtCompany(db: Queryable, companyDomain: string, name: { fullName: string; firstName?: string; lastName?: string }): Promise<unknown> {
  const [row] = await runQuery(
    db,
    dataset
      .selectFrom('ds_companies as c')
      .innerJoin('ds_people as p', 'p.company_id', 'c.id')
      .select('p.member_emails')
      .where('c.company_domain', '=', companyDomain)
      .where((eb) => {
        const sameText = (column: 'p.member_full_name' | 'p.member_first_name' | 'p.member_last_name', value: string) =>
          eb(eb.fn('lower', [column]), '=', eb.fn('lower', [eb.val(value)]));
        return eb.or([sameText('p.member_full_name', name.fullName), eb.and([sameText('p.member_first_name', name.firstName ?? ''), sameText('p.member_last_name', name.lastName ?? '')])]);
      })
      .orderBy('p.verified', 'desc')
      .orderBy('p.id')
      .limit(1),
  );
  return row?.member_emails;
}

/** `member_emails` of up to two people with this full name (case-insensitive): the caller needs to know whether it is unique. */
export async function datasetEmailsByName(db: Queryable, fullName: string): Promise<unknown[]> {
  const rows = await runQuery(db, dataset.selectFrom('ds_people').select('member_emails').where('member_full_name', 'ilike', escapeLike(fullName)).limit(2));
  return rows.map((row) => row.member_emails);
}

/** `member_phones` of the person with profile `key` (unparsed jsonb). */
export async function datasetPhones(db: Queryable, key: string): Promise<unknown> {
  const [row] = await runQuery(db, dataset.selectFrom('ds_people').select('member_phones').where('member_pronet_url', '=', key));
  return row?.member_phones;
}

const ownPosts = (key: string, limit: number) =>
  dataset
    .selectFrom('ds_posts')
    .select(['post_url', 'text', 'posted_at', 'likes', 'comments'])
    // The column is nullable, but the dataset import requires `post_url` (domain/datasetRecords.ts).
    .$narrowType<{ post_url: NotNull }>()
    .where('member_pronet_url', '=', key)
    .where('interaction_type', 'is', null)
    .orderBy('posted_at', (ob) => ob.desc().nullsLast())
    .limit(limit);

/** A post's columns enrichment reads, typed by the `DsPost` entity. */
export type DatasetPostRow = RowOf<ReturnType<typeof ownPosts>>;

/** The person's own posts (not interactions), newest first. */
export async function datasetPosts(db: Queryable, key: string, limit: number): Promise<DatasetPostRow[]> {
  return runQuery(db, ownPosts(key, limit));
}
