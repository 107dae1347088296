/**
 * The audience queries of the `dataset` listening provider (activities/providers/listeningDataset.ts)
 * over the discovery dataset (`ds_posts`, `ds_people`, `ds_companies`; URLs there are stored
 * normalised).
 *
 * A `ds_posts` row is one activity of `member_pronet_url`: `interaction_type IS NULL` means they
 * authored the post at `post_url`; otherwise (`like`, `comment`, …) they interacted with a post
 * of `author_pronet_url`, and an interaction recorded under a post carries a `post_url` that
 * starts with that post's URL followed by `/`.
 *
 * Audience of a source, limited to activity posted in the pull window [since, until):
 * - pronetInbound (profile or company URL K): people who interacted with posts authored by K;
 * - pronetOutbound (K): authors of the posts K interacted with (for a company page: posts its
 *   employees interacted with);
 * - pronetPost (post URL P): the author of P and everyone whose activity is recorded under P;
 * - pronetKeywordSearch: authors of posts whose text contains `keyword` (case-insensitive),
 *   optionally only authors whose job title contains `authorTitle`;
 * - pronetJobPosting: authors of posts that mention `jobTitle` and are located in
 *   `jobLocation` (city or country; `remote`/`anywhere` match every location).
 * The source's own profile is never part of its audience. Each person appears once (their most
 * recent matching activity); pages are keyset-ordered by profile URL.
 *
 * Raw SQL (composed from `sql` fragments): the audience is a CTE over a per-type hit query,
 * `distinct on` and `any(text[])` arrays, which the query builder does not express more clearly.
 * The subject name is a Kysely statement typed from the dataset entities.
 */
import { normalizeProfileUrl } from '../domain/identity.js';
import { escapeLike as likeEscape } from '../domain/like.js';
import type { ListeningSourceType } from '../domain/sourceRules.js';
import { sql, type RawBuilder } from 'kysely';
import type { DatasetDB } from './dataset.js';
import type { Queryable } from './pool.js';
import { compileSql, runQuery, textArray, typedQueries } from './sqlFragments.js';

export interface AudienceQuery {
  sourceType: ListeningSourceType;
  sourceIdentifier: string | null;
  sourceMeta: Record<string, unknown>;
  /** Window of the pull: activity posted in [since, until). ISO 8601. */
  since: string;
  until: string;
}

export interface AudienceRow {
  member_url: string;
  interaction_type: string | null;
  post_url: string | null;
  posted_at: Date;
  member_full_name: string | null;
  member_first_name: string | null;
  member_last_name: string | null;
  member_job_title: string | null;
  member_headline: string | null;
  member_location_city: string | null;
  member_location_country: string | null;
  company_name: string | null;
  company_pronet_url: string | null;
  company_website: string | null;
  industry: string | null;
  size_range: string | null;
}

/** Stored URLs are normalised, but accept rows imported as given too. */
function urlCandidates(raw: string): string[] {
  const n = normalizeProfileUrl(raw);
  if (!n) return [];
  return [...new Set([n, raw.trim(), `https://${n}`, `https://www.${n}`, `http://${n}`, `http://www.${n}`])];
}

/**
 * The name of what a URL source listens to: the profile's person, the company page, or the
 * post's author. The dataset has no pictures. Null for keyword and job sources.
 */
export async function datasetSubjectName(db: Queryable, sourceIdentifier: string | null): Promise<string | null> {
  const urls = urlCandidates(sourceIdentifier ?? '');
  if (!urls.length) return null;
  const candidates = textArray(urls);
  const [row] = await runQuery(
    db,
    typedQueries<DatasetDB>().selectNoFrom((eb) =>
      eb.fn
        .coalesce(
          eb.selectFrom('ds_people').select('member_full_name').where('member_pronet_url', '=', eb.fn.any(candidates)).limit(1),
          eb.selectFrom('ds_companies').select('company_name').where('company_pronet_url', '=', eb.fn.any(candidates)).limit(1),
          eb
            .selectFrom('ds_posts as po')
            .innerJoin('ds_people as pe', 'pe.member_pronet_url', 'po.author_pronet_url')
            .select('pe.member_full_name')
            .where('po.post_url', '=', eb.fn.any(candidates))
            .where('po.interaction_type', 'is', null)
            .limit(1),
        )
        .as('name'),
    ),
  );
  return row?.name ?? null;
}

/** SQL selecting (member_url, interaction_type, post_url, posted_at) rows of the source's activity in the window. */
function hitsFor(q: AudienceQuery): RawBuilder<unknown> {
  const meta = q.sourceMeta;
  const window = sql`p.posted_at >= ${q.since} and p.posted_at < ${q.until}`;
  switch (q.sourceType) {
    case 'pronetInbound': {
      const k = urlCandidates(q.sourceIdentifier ?? '');
      return sql`select p.member_pronet_url as member_url, p.interaction_type, p.post_url, p.posted_at
                from ds_posts p where p.author_pronet_url = any(${k}::text[]) and p.interaction_type is not null and ${window}`;
    }
    case 'pronetOutbound': {
      const k = urlCandidates(q.sourceIdentifier ?? '');
      return sql`select p.author_pronet_url as member_url, p.interaction_type, p.post_url, p.posted_at
                from ds_posts p
               where p.interaction_type is not null and ${window}
                 and (p.member_pronet_url = any(${k}::text[])
                      or p.member_pronet_url in (select e.member_pronet_url from ds_people e where e.company_pronet_url = any(${k}::text[])))`;
    }
    case 'pronetPost': {
      const k = urlCandidates(q.sourceIdentifier ?? '');
      return sql`select p.member_pronet_url as member_url, p.interaction_type, p.post_url, p.posted_at
                from ds_posts p
               where (p.post_url = any(${k}::text[]) or p.post_url like any(${k.map((c) => `${likeEscape(c)}/%`)}::text[])) and ${window}`;
    }
    case 'pronetKeywordSearch': {
      const keyword = String(meta.keyword ?? '').trim();
      const authorTitle = typeof meta.authorTitle === 'string' && meta.authorTitle.trim() ? meta.authorTitle.trim() : null;
      return sql`select p.member_pronet_url as member_url, p.interaction_type, p.post_url, p.posted_at
                from ds_posts p
               where p.interaction_type is null and p.text ilike ${`%${likeEscape(keyword)}%`} and ${window}
                 ${authorTitle ? sql`and exists (select 1 from ds_people a where a.member_pronet_url = p.member_pronet_url and a.member_job_title ilike ${`%${likeEscape(authorTitle)}%`})` : sql``}`;
    }
    case 'pronetJobPosting': {
      const title = String(meta.jobTitle ?? '').trim();
      const location = String(meta.jobLocation ?? '').trim();
      const anywhere = !location || /^(remote|anywhere|worldwide)$/i.test(location);
      const place = `%${likeEscape(location)}%`;
      return sql`select p.member_pronet_url as member_url, p.interaction_type, p.post_url, p.posted_at
                from ds_posts p
               where p.interaction_type is null and p.text ilike ${`%${likeEscape(title)}%`} and ${window}
                 ${anywhere ? sql`` : sql`and exists (select 1 from ds_people a where a.member_pronet_url = p.member_pronet_url
                                        and (a.member_location_city ilike ${place} or a.member_location_country ilike ${place}))`}`;
    }
  }
}

/**
 * Up to `limit` people of the audience whose profile URL sorts after `after` (`''`: from the
 * start), each with their most recent matching activity, their profile and their company.
 */
export async function datasetAudienceRows(db: Queryable, q: AudienceQuery, page: { after: string; limit: number }): Promise<AudienceRow[]> {
  const self = urlCandidates(q.sourceIdentifier ?? '');
  const statement = sql`
    with hits as (${hitsFor(q)}),
    latest as (
      select distinct on (member_url) member_url, interaction_type, post_url, posted_at
        from hits
       where member_url is not null and member_url > ${page.after} and member_url <> all(${self}::text[])
       order by member_url, posted_at desc
       limit ${page.limit})
    select l.member_url, l.interaction_type, l.post_url, l.posted_at,
           pe.member_full_name, pe.member_first_name, pe.member_last_name, pe.member_job_title, pe.member_headline,
           pe.member_location_city, pe.member_location_country,
           c.company_name, coalesce(c.company_pronet_url, pe.company_pronet_url) as company_pronet_url,
           c.company_website, c.industry, c.size_range
      from latest l
      left join ds_people pe on pe.member_pronet_url = l.member_url
      left join ds_companies c on c.id = pe.company_id
     order by l.member_url`;
  // Raw SQL: see the module's note (a CTE over the per-type hit query, `distinct on`, keyset on the URL).
  const r = await db.query<AudienceRow>(compileSql(statement));
  return r.rows;
}
