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
 * Kysely typed from the dataset entities, run on the pool (`runQuery`): the audience is a CTE
 * (`latest`, `distinct on` the profile URL) over a per-type hit query (`hits`); its row type is the
 * one Kysely infers from them (`AudienceRow`).
 */
import { normalizeProfileUrl } from '../domain/identity.js';
import { escapeLike as likeEscape, likeContains } from '../domain/like.js';
import type { ListeningSourceType } from '../domain/sourceRules.js';
import { sql, type NotNull } from 'kysely';
import type { DatasetDB } from './dataset.js';
import type { Queryable } from './pool.js';
import { runQuery, textArray, typedQueries, type RowOf } from './sqlFragments.js';

export interface AudienceQuery {
  sourceType: ListeningSourceType;
  sourceIdentifier: string | null;
  sourceMeta: Record<string, unknown>;
  /** Window of the pull: activity posted in [since, until). ISO 8601. */
  since: string;
  until: string;
}

const dataset = typedQueries<DatasetDB>();

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
    dataset.selectNoFrom((eb) =>
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

/** An ISO 8601 instant as a parameter, sent as the text it is (PostgreSQL reads it as the column's timestamptz). */
const instant = (iso: string) => sql<Date>`${iso}`;


/** The (member_url, interaction_type, post_url, posted_at) rows of the source's activity in the window. */
function hitsFor(q: AudienceQuery) {
  const meta = q.sourceMeta;
  /** Posts in the window, `member` (the person of the audience) as member_url. */
  const posts = (member: 'p.member_pronet_url' | 'p.author_pronet_url') =>
    dataset
      .selectFrom('ds_posts as p')
      .select((eb) => [eb.ref(member).as('member_url'), 'p.interaction_type', 'p.post_url', 'p.posted_at'])
      .where('p.posted_at', '>=', instant(q.since))
      .where('p.posted_at', '<', instant(q.until));
  switch (q.sourceType) {
    case 'pronetInbound': {
      const k = textArray(urlCandidates(q.sourceIdentifier ?? ''));
      return posts('p.member_pronet_url')
        .where((eb) => eb('p.author_pronet_url', '=', eb.fn.any(k)))
        .where('p.interaction_type', 'is not', null);
    }
    case 'pronetOutbound': {
      const k = textArray(urlCandidates(q.sourceIdentifier ?? ''));
      return posts('p.author_pronet_url')
        .where('p.interaction_type', 'is not', null)
        .where((eb) =>
          eb.or([
            eb('p.member_pronet_url', '=', eb.fn.any(k)),
            eb('p.member_pronet_url', 'in', eb.selectFrom('ds_people as e').select('e.member_pronet_url').where('e.company_pronet_url', '=', eb.fn.any(k))),
          ]),
        );
    }
    case 'pronetPost': {
      const k = urlCandidates(q.sourceIdentifier ?? '');
      return posts('p.member_pronet_url').where((eb) =>
        eb.or([eb('p.post_url', '=', eb.fn.any(textArray(k))), eb('p.post_url', 'like', eb.fn.any(textArray(k.map((c) => `${likeEscape(c)}/%`))))]),
      );
    }
    case 'pronetKeywordSearch': {
      const keyword = String(meta.keyword ?? '').trim();
      const authorTitle = typeof meta.authorTitle === 'string' && meta.authorTitle.trim() ? meta.authorTitle.trim() : null;
      const hits = posts('p.member_pronet_url').where('p.interaction_type', 'is', null).where('p.text', 'ilike', likeContains(keyword));
      if (!authorTitle) return hits;
      return hits.where((eb) =>
        eb.exists(
          eb
            .selectFrom('ds_people as a')
            .select(eb.lit(1).as('one'))
            .whereRef('a.member_pronet_url', '=', 'p.member_pronet_url')
            .where('a.member_job_title', 'ilike', likeContains(authorTitle)),
        ),
      );
    }
    case 'pronetJobPosting': {
      const title = String(meta.jobTitle ?? '').trim();
      const location = String(meta.jobLocation ?? '').trim();
      const anywhere = !location || /^(remote|anywhere|worldwide)$/i.test(location);
      const hits = posts('p.member_pronet_url').where('p.interaction_type', 'is', null).where('p.text', 'ilike', likeContains(title));
      if (anywhere) return hits;
      const place = likeContains(location);
      return hits.where((eb) =>
        eb.exists(
          eb
            .selectFrom('ds_people as a')
            .select(eb.lit(1).as('one'))
            .whereRef('a.member_pronet_url', '=', 'p.member_pronet_url')
            .where((a) => a.or([a('a.member_location_city', 'ilike', place), a('a.member_location_country', 'ilike', place)])),
        ),
      );
    }
  }
}

/** One page of the audience (see `datasetAudienceRows`): `latest` is each person's most recent hit. */
function audienceQuery(q: AudienceQuery, page: { after: string; limit: number }) {
  const self = textArray(urlCandidates(q.sourceIdentifier ?? ''));
  return (
    dataset
      .with('hits', () => hitsFor(q))
      .with('latest', (db) =>
        db
          .selectFrom('hits')
          .distinctOn('member_url')
          .select(['member_url', 'interaction_type', 'post_url', 'posted_at'])
          .where('member_url', 'is not', null)
          .where('member_url', '>', page.after)
          .where((eb) => eb.not(eb('member_url', '=', eb.fn.any(self))))
          .orderBy('member_url')
          .orderBy('posted_at', 'desc')
          .limit(page.limit),
      )
      .selectFrom('latest as l')
      .leftJoin('ds_people as pe', 'pe.member_pronet_url', 'l.member_url')
      .leftJoin('ds_companies as c', 'c.id', 'pe.company_id')
      .select((eb) => [
        'l.member_url', 'l.interaction_type', 'l.post_url', 'l.posted_at',
        'pe.member_full_name', 'pe.member_first_name', 'pe.member_last_name', 'pe.member_job_title', 'pe.member_headline',
        'pe.member_location_city', 'pe.member_location_country',
        'c.company_name', eb.fn.coalesce('c.company_pronet_url', 'pe.company_pronet_url').as('company_pronet_url'),
        'c.company_website', 'c.industry', 'c.size_range',
      ])
      // `latest` keeps people with a profile URL, and every hit was posted in the window.
      .$narrowType<{ member_url: NotNull; posted_at: NotNull }>()
      .orderBy('l.member_url')
  );
}

/** A person of a source's audience: their latest matching activity, their profile and their company. */
export type AudienceRow = RowOf<ReturnType<typeof audienceQuery>>;

/**
 * Up to `limit` people of the audience whose profile URL sorts after `after` (`''`: from the
 * start), each with their most recent matching activity, their profile and their company.
 */
export async function datasetAudienceRows(db: Queryable, q: AudienceQuery, page: { after: string; limit: number }): Promise<AudienceRow[]> {
  return runQuery(db, audienceQuery(q, page));
}
