/**
 * SQL of the verified discovery searches (find-verified-companies / find-verified-contacts) over
 * the global ds_* tables: the filters of domain/verifiedSearch.ts, ranked (VERIFIED_RANKING_DOC)
 * and paged by page number.
 */
import { sql } from 'kysely';
import { writeOutput } from '../domain/conditions.js';
import { bound, type Fragment } from './conditionSql.js';
import { VERIFIED_DEFAULT_FIELDS, VERIFIED_RESULT_FIELDS, type DiscoveryEntity, type VerifiedFilters } from '../domain/discoveryCatalog.js';
import { PERSON_COPIES, SENIORITY_RANK_SQL, verifiedResultSql } from './discoveryColumns.js';
import { InvalidInputError } from '../domain/errors.js';
import { likeContains } from '../domain/like.js';
import type { Pool } from './pool.js';
import type { DiscoveryConfig } from '../domain/config.js';
import { searchVerifiedIds } from './discoveryOpenSearch.js';
import { compileSql } from './sqlFragments.js';
import { withCompanyId, type SearchPage } from './discoverySearch.js';

export interface VerifiedSearchInput {
  page: number;
  limit: number;
  fields?: string[];
  filters: VerifiedFilters;
}

function verifiedWhere(entity: DiscoveryEntity, f: VerifiedFilters): Fragment {
  const w: Fragment[] = [sql.raw(entity === 'company' ? 'c.verified' : 'p.verified')];
  // for people, the company's industry, headcount, country and technologies are read from their copies on ds_people
  const co = (column: 'industry' | 'employee_count' | 'hq_country' | 'technologies') => sql.raw(entity === 'contact' ? `p.${PERSON_COPIES[column]}` : `c.${column}`);
  if (f.industries) w.push(sql`${co('industry')} = any(${bound(f.industries, 'text[]')})`);
  if (f.headcountRanges)
    w.push(sql`(${sql.join(f.headcountRanges.map(([lo, hi]) => sql`${co('employee_count')} between ${bound(lo, 'int')} and ${bound(Math.min(hi, 2147483647), 'int')}`), sql` or `)})`);
  if (f.revenue) {
    const r: Fragment[] = [];
    if (f.revenue.min !== null) r.push(sql`c.revenue_max >= ${bound(f.revenue.min, 'bigint')}`);
    if (f.revenue.max !== null) r.push(sql`c.revenue_min <= ${bound(f.revenue.max, 'bigint')}`);
    const known = r.length ? sql.join(r, sql` and `) : sql`true`;
    w.push(f.revenue.includeUnknown ? sql`((c.revenue_min is null and c.revenue_max is null) or (${known}))` : sql`(c.revenue_min is not null and ${known})`);
  }
  const nameOrSite: Fragment[] = [];
  if (f.names) nameOrSite.push(sql`lower(c.company_name) = any(${bound(f.names, 'text[]')})`);
  if (f.domains) nameOrSite.push(sql`c.company_domain = any(${bound(f.domains, 'text[]')})`);
  // a company listed by name or by website is wanted: the two lists add up
  if (nameOrSite.length) w.push(sql`(${sql.join(nameOrSite, sql` or `)})`);
  if (f.companyCountries) w.push(sql`${co('hq_country')} = any(${bound(f.companyCountries, 'text[]')})`);
  if (f.technologies) w.push(sql`${co('technologies')} && ${bound(f.technologies, 'text[]')}`);
  if (entity === 'contact') {
    // titles containing a term: matched on the distinct titles, then looked up (see LIKE_LOOKUPS)
    if (f.titles) {
      const patterns = f.titles.map(likeContains);
      w.push(sql`p.member_job_title = any(array(select title from ds_people_titles where title ilike any(${bound(patterns, 'text[]')})))`);
    }
    if (f.seniorities) w.push(sql`p.member_seniority = any(${bound(f.seniorities, 'text[]')})`);
    if (f.countries) w.push(sql`p.member_location_country = any(${bound(f.countries, 'text[]')})`);
    // numberOfCompaniesToPull: the first N companies find-verified-companies would return for the
    // same company filters; only their people remain (the subquery's `c` is its own).
    if (f.companyPull !== undefined) {
      const companies = verifiedWhere('company', { ...f, companyPull: undefined });
      w.push(sql`p.company_id = any(array(select c.id from ds_companies c where ${companies} order by ${sql.raw(VERIFIED_ORDER.company)} limit ${bound(f.companyPull, 'int')}))`);
    }
  }
  return sql.join(w, sql` and `);
}

export const VERIFIED_ORDER: Record<DiscoveryEntity, string> = {
  company: 'c.employee_count desc nulls last, c.id',
  contact: `${SENIORITY_RANK_SQL}, p.member_years_experience desc nulls last, p.id`,
};

/** Most rows page `page` of a verified search can hold: `limit`, capped by the pull number (what a request can cost). */
export function verifiedPageRows(page: number, limit: number, pull: number | undefined): number {
  return Math.max(0, Math.min(limit, (pull ?? Number.MAX_SAFE_INTEGER) - (page - 1) * limit));
}

/** find-verified-*: ranked page `page` (1-based) of `limit` rows, capped by the pull number. Raw SQL: composed of the condition compiler's fragments over the discovery catalog. */
export async function searchVerified(
  pool: Pool,
  entity: DiscoveryEntity,
  input: VerifiedSearchInput,
  engine: Partial<Pick<DiscoveryConfig, 'engine' | 'opensearchUrl' | 'indexPrefix'>> = {},
): Promise<SearchPage & { idsReturned: string[] }> {
  const known = VERIFIED_RESULT_FIELDS[entity];
  const fields = input.fields ?? VERIFIED_DEFAULT_FIELDS[entity];
  const picked = fields.map((f, i) => {
    // own keys only: `constructor` or `__proto__` are names a client may send, not fields
    const def = Object.hasOwn(known, f) ? known[f] : undefined;
    if (!def) throw new InvalidInputError(['fields', i], `unknown field ${f}; one of ${Object.keys(known).join(', ')}`);
    return { name: f, ...def, sql: verifiedResultSql(def) };
  });
  const where = verifiedWhere(entity, input.filters);
  const whereReadsCompany = /\bc\./.test(compileSql(where).text);
  const offset = (input.page - 1) * input.limit;
  const take = verifiedPageRows(input.page, input.limit, input.filters.pull);
  const from = entity === 'company' ? 'ds_companies c' : 'ds_people p left join ds_companies c on c.id = p.company_id';
  const companyJoinNeeded = entity === 'contact' && (whereReadsCompany || picked.some((p) => p.sql.startsWith('c.')));
  const fromSql = entity === 'contact' && !companyJoinNeeded ? 'ds_people p' : from;
  const idSql = entity === 'company' ? 'c.id' : 'p.id';
  const select = [`${idSql} as id`, ...picked.map((p, i) => `${p.sql} as "f${i}"`), ...(entity === 'contact' ? ['p.company_id as "companyId"'] : [])].join(', ');
  const pageSql = sql`select ${sql.raw(select)} from ${sql.raw(fromSql)} where ${where} order by ${sql.raw(VERIFIED_ORDER[entity])} limit ${bound(take, 'int')} offset ${bound(offset, 'int')}`;
  const countFrom = entity === 'contact' && !whereReadsCompany ? 'ds_people p' : from;
  const countSql = sql`select count(*)::int as n from ${sql.raw(countFrom)} where ${where}`;
  let rows: Record<string, unknown>[];
  let matches: number;
  if (engine.engine === 'opensearch') {
    // The engine ranks and counts; the page's rows are read here by id (the same columns), in its order.
    if (!engine.opensearchUrl || !engine.indexPrefix) throw new Error('DISCOVERY_ENGINE=opensearch needs opensearchUrl and indexPrefix');
    const found = await searchVerifiedIds({ opensearchUrl: engine.opensearchUrl, indexPrefix: engine.indexPrefix }, entity, input.filters, { from: offset, size: take });
    const fromIds = entity === 'contact' && !picked.some((p) => p.sql.startsWith('c.')) ? 'ds_people p' : from;
    // raw SQL: the picked columns' SQL of the ranked ids.
    const byId = found.ids.length ? (await pool.query<Record<string, unknown>>(compileSql(sql`select ${sql.raw(select)} from ${sql.raw(fromIds)} where ${sql.raw(idSql)} = any(${bound(found.ids, 'uuid[]')})`))).rows : [];
    const at = new Map<string, Record<string, unknown>>(byId.map((r) => [String(r.id), r]));
    rows = found.ids.flatMap((id) => { const r = at.get(id); return r ? [r] : []; });
    matches = found.total;
  } else {
    // raw SQL: page and count composed from the verified filters' fragments and the picked columns' SQL.
    const [page, count] = await Promise.all([
      take > 0 ? pool.query(compileSql(pageSql)) : Promise.resolve({ rows: [] as Record<string, unknown>[] }),
      pool.query<{ n: number }>(compileSql(countSql)),
    ]);
    rows = page.rows;
    matches = count.rows[0]!.n;
  }
  const data = rows.map((r) => {
    const item: Record<string, unknown> = { id: r.id };
    picked.forEach((p, i) => writeOutput(item, p, r[`f${i}`]));
    withCompanyId(item, r.companyId);
    return item;
  });
  return {
    data,
    idsReturned: rows.map((r) => String(r.id)),
    meta: { totalRecords: Math.min(matches, input.filters.pull ?? Number.MAX_SAFE_INTEGER), previousToken: '', nextToken: '' },
  };
}
