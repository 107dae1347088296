/**
 * SQL of the discovery search over the global ds_* tables (raw SQL: the hot path).
 *
 * v2 searches compile `conditions` / `groupedCondition` / `fields` with the shared compiler
 * (db/conditionSql.ts) over the catalogs of db/discoveryColumns.ts, page by keyset on the
 * record id (tokens of domain/pagination.ts, bound to the query) and count exactly.
 * Verified searches rank (see VERIFIED_RANKING_DOC) and page by page number.
 */
import { sql } from 'kysely';
import { bound, compileFields, type Fragment, compileSort, compileWhere, keysetPredicate, reverseOrder, sqlCatalogOf, type Projection } from './conditionSql.js';
import { DEFAULT_FIELDS, PERSON_PREFIX, type DiscoveryEntity } from '../domain/discoveryCatalog.js';
import { JOIN_SQL, companySearchColumns, contactSearchColumns } from './discoveryColumns.js';
import { InvalidInputError } from '../domain/errors.js';
import { DATASET_SCOPE, decodeToken, pageMeta, queryFingerprint, type TokenPayload } from '../domain/pagination.js';
import type { Pool, Queryable } from './pool.js';
import type { DiscoveryConfig } from '../domain/config.js';
import { searchIds } from './discoveryOpenSearch.js';
import { compileSql } from './sqlFragments.js';
import { complementRowsOf, misestimated, readsCompany, sideRowsOf, unionOf, whereSql } from './discoveryWhere.js';
import { rootGroup } from '../domain/discoveryConditionTree.js';

export interface V2SearchInput {
  conditions?: unknown[];
  groupedCondition?: unknown;
  fields?: string[];
  limit?: number;
  paginationToken?: string;
}

export interface SearchPage {
  data: Record<string, unknown>[];
  meta: { totalRecords: number; previousToken: string; nextToken: string };
}

/** A v2 page: `totalRecordsEstimated` says whether `totalRecords` is exact (false) or an estimate. */
export interface V2SearchPage extends SearchPage {
  meta: SearchPage['meta'] & { totalRecordsEstimated: boolean };
}

export interface V2SearchOptions extends Partial<Pick<DiscoveryConfig, 'engine' | 'opensearchUrl' | 'indexPrefix'>> {
  /** Matches are counted exactly up to this number; above it `totalRecords` is estimated (PostgreSQL engine; OpenSearch counts exactly). */
  exactCountLimit: number;
}

export const V2_DEFAULT_LIMIT = 25;
export const V2_MAX_LIMIT = 1000;
/** How the exact-count limit is set (OpenAPI descriptions). */
export const V2_EXACT_COUNT_DOC = 'DISCOVERY_EXACT_COUNT_LIMIT, default 10,000';

export interface Compiled {
  entity: DiscoveryEntity;
  /** FROM of the page (with the joins the WHERE and the fields need). */
  from: string;
  /** FROM of the matches (only the joins the WHERE needs). */
  countFrom: string;
  /** FROM of the page read by its ids (only the joins the fields need, see PAGE_JOIN_SQL). */
  pageFrom: string;
  /** The WHERE. */
  where: Fragment;
  projection: Projection;
  /** The WHERE as a UNION of ids (searches with an OR group, see unionOf), else null. */
  union: Fragment | null;
  /**
   * The matches read by a plan of their own, else null: from a search-side table (skills +
   * country, technology + seniority: sideRowsOf) or as ranges (country AND NOT seniority: complementRowsOf).
   */
  rows: Fragment | null;
  /**
   * The matches as the statement whose planner estimate is the total past the exact-count limit
   * (built only then): a form of `rows` the planner sizes better (sideRowsOf, complementRowsOf), or
   * the WHERE compiled for an estimate where it misjudges the search's own (a LIKE read through a
   * look-up array: `title LIKE '%a%'` 93,800 estimated of 811,895, the column's ILIKE 834,320; a
   * negated leaf as `not (leaf)`: `NOT LIKE '%a%'` 499,864 → 165,680 of 188,105), else the matches.
   */
  estimated: () => Fragment;
}

/**
 * `fields` of a company search: company paths only. Its items are company records (API-SPEC);
 * person attributes filter them (conditions) and are never returned there, people being paid per
 * row through find-contacts-v2.
 */
function companyFields(fields: string[]): Projection {
  const person = fields.findIndex((f) => f.startsWith(PERSON_PREFIX));
  if (person >= 0) {
    throw new InvalidInputError(
      ['fields', person],
      `${fields[person]} is a person attribute: a company search returns company records only (person attributes filter them, in conditions); ask find-contacts-v2 for people`,
    );
  }
  return compileFields(companySearchColumns, fields);
}

/**
 * The joins of a page read by its ids, each a look-up per row (`offset 0` keeps the sub-query from
 * being pulled up into a join): the rows are a page's, so the plan is the same nested loop of
 * primary-key look-ups, but the planner no longer weighs join orders and paths of two tables with
 * 20 and 17 indexes (planning the page 0.45 → 0.24 ms, every contact search). The same rows: at
 * most one company per id, none for a person without one.
 */
const PAGE_JOIN_SQL: Record<string, string> = { company: 'left join lateral (select * from ds_companies c where c.id = p.company_id offset 0) c on true' };

/** Compiles a v2 search (exported for the tests: whether it is read as a UNION). */
export function compileV2(entity: DiscoveryEntity, input: V2SearchInput): Compiled {
  const catalog = entity === 'contact' ? contactSearchColumns : companySearchColumns;
  // Validation pass over the request as sent: 400s name the member by its JSON pointer.
  compileWhere(catalog, { conditions: input.conditions, groupedCondition: input.groupedCondition });
  const fields = input.fields ?? DEFAULT_FIELDS[entity];
  const projection = entity === 'company' ? companyFields(fields) : compileFields(catalog, fields);
  const root = rootGroup(input);
  const where = root ? whereSql(entity, root, false) : sql`true`;
  let from = 'ds_companies c';
  let countFrom = from;
  let pageFrom = from;
  if (entity === 'contact') {
    const joinsCompany = root !== null && readsCompany(root);
    const joins = new Set([...(joinsCompany ? ['company'] : []), ...projection.joins]);
    from = `ds_people p ${[...joins].map((j) => JOIN_SQL[j]).join(' ')}`;
    // The matches need only the joins their WHERE uses.
    countFrom = joinsCompany ? from : 'ds_people p';
    pageFrom = `ds_people p ${[...projection.joins].map((j) => PAGE_JOIN_SQL[j]).join(' ')}`;
  }
  const side = sideRowsOf(entity, root);
  const complement = side ? null : complementRowsOf(entity, root);
  const compiled: Compiled = {
    entity,
    from,
    countFrom,
    pageFrom,
    where,
    projection,
    union: unionOf(entity, root),
    rows: side?.rows ?? complement?.rows ?? null,
    estimated: () =>
      side?.estimateRows ??
      complement?.estimateRows ??
      (root && misestimated(root) ? plainMatchesSql({ entity, countFrom, where: whereSql(entity, root, false, true) }) : matchesSql(compiled)),
  };
  return compiled;
}

/** The ids (`id`) of a search's matches. */
function matchesSql(c: Compiled): Fragment {
  if (c.union) return sql`select m.id from (${c.union}) m`;
  if (c.rows) return sql`select m.id from (${c.rows}) m`;
  return plainMatchesSql(c);
}

/** The ids of a search's matches through its WHERE as compiled. */
const plainMatchesSql = (c: Pick<Compiled, 'entity' | 'countFrom' | 'where'>): Fragment => sql`select ${sql.raw(c.entity === 'contact' ? 'p.id' : 'c.id')} as id from ${sql.raw(c.countFrom)} where ${c.where}`;

/** A contact item's `company` gets its id; a person without a company has `company: null`, as a Contact does. */
export function withCompanyId(item: Record<string, unknown>, companyId: unknown): void {
  if (!item.company || typeof item.company !== 'object') return;
  item.company = companyId == null ? null : { ...(item.company as Record<string, unknown>), id: companyId };
}

/** The planner's estimate of the number of matches (a search with more than the exact-count limit). Raw SQL: `explain` of the compiled match query. */
async function estimateMatches(db: Queryable, c: Compiled): Promise<number> {
  const plan = (await db.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(compileSql(sql`explain (format json) ${c.estimated()}`))).rows[0]!['QUERY PLAN'];
  return Math.round(plan[0].Plan['Plan Rows']);
}

/**
 * A search the planner sizes past this many times the exact-count limit is read as a broad one
 * (bare count beside the walk, see searchV2). The planner's estimates of the bench's shapes at 10M
 * ran from 34% under to 33% over the exact count (docs/PERFORMANCE.md), so twice the cap is
 * rarely a wrong guess, and a wrong guess costs time, never a wrong answer.
 */
const BROAD_ESTIMATE_FACTOR = 2;

/** Keyset order of the materialised match ids (`m.id`). */
const matchIdSort = compileSort(sqlCatalogOf([], 'm.id'), undefined);

/** find-contacts-v2 / find-companies-v2: one page plus the total (exact up to `exactCountLimit`). Raw SQL: composed of the condition compiler's fragments over the discovery catalog. */
export async function searchV2(pool: Pool, secret: string, entity: DiscoveryEntity, input: V2SearchInput, opts: V2SearchOptions): Promise<V2SearchPage> {
  const limit = input.limit ?? V2_DEFAULT_LIMIT;
  const c = compileV2(entity, input);
  const catalog = entity === 'contact' ? contactSearchColumns : companySearchColumns;
  const sort = compileSort(catalog, undefined);
  const fingerprint = queryFingerprint(DATASET_SCOPE, {
    search: `${entity}-v2`,
    conditions: input.conditions ?? null,
    groupedCondition: input.groupedCondition ?? null,
    fields: input.fields ?? null,
  });
  const from: TokenPayload | undefined = input.paginationToken ? decodeToken(secret, fingerprint, input.paginationToken) : undefined;
  const companyId = entity === 'contact' ? ', p.company_id as "companyId"' : '';
  const dir = from?.dir === 'prev' ? 'desc' : 'asc';
  const cap = Math.max(0, Math.trunc(opts.exactCountLimit));
  // A search not read as broad (below) is counted and paged in one statement (one round trip,
  // under the pool's statement_timeout, API_STATEMENT_TIMEOUT_MS). The matches' ids are read
  // once, up to cap + 1, through the filter's indexes (which carry `id`: mostly index-only), into
  // one aggregate: their number is the total, and up to the cap they are every match, so the page
  // is the next `limit` of them in id order (the sorted array's first `limit + 1` past the
  // keyset), whose rows alone are read by primary key; past the cap there is no page here. One
  // pass over the ids: a materialised CTE read twice (count, then a top-N) cost 1.7 ms more for
  // the bench's 9,456 matches of `headcount + title LIKE` (13.8 vs 12.1 ms) and 0.6 ms for 3,442
  // (`seniority IN + country`).
  const take = bound(limit + 1, 'int');
  const selectFrom = (tables: string) => sql`select ${c.projection.select}, ${sort.select}${sql.raw(companyId)} from ${sql.raw(tables)}`;
  const keyset = from ? keysetPredicate(matchIdSort, from.after, from.dir) : sql`true`;
  const fromMatches = sql`${selectFrom(c.pageFrom)}
    where ${sql.raw(catalog.idSql)} = any((select case when n <= ${sql.lit(cap)} then ids end from total)::uuid[])`;
  const statement = sql`with total as materialized (select count(*)::int as n, (array_agg(m.id order by m.id ${sql.raw(dir)}) filter (where ${keyset}))[1:${take}] as ids
    from (${matchesSql(c)} limit ${sql.lit(cap + 1)}) m)
    select total.n as "totalMatches", page.* from total left join (${fromMatches}) page on true order by page.id ${sql.raw(dir)}`;
  if (opts.engine === 'opensearch') {
    // The engine finds the page's ids and the exact total; the rows are read here by id as above
    // (the same projection), so items, tokens and credits are the PostgreSQL path's.
    if (!opts.opensearchUrl || !opts.indexPrefix) throw new Error('DISCOVERY_ENGINE=opensearch needs opensearchUrl and indexPrefix');
    const found = await searchIds({ opensearchUrl: opts.opensearchUrl, indexPrefix: opts.indexPrefix }, entity, input, { take: limit + 1, after: from ? String(from.after[0]) : undefined, dir });
    const byIds = sql`${selectFrom(c.pageFrom)} where ${sql.raw(catalog.idSql)} = any(${bound(found.ids, 'uuid[]')}) order by ${sql.raw(catalog.idSql)} ${sql.raw(dir)}`;
    // raw SQL: the page's rows by id, composed from the same fragments.
    const rows = found.ids.length ? (await pool.query<Record<string, unknown>>(compileSql(byIds))).rows : [];
    return shapePage(rows, found.total, false);
  }
  // Past the cap the page walks the primary key in id order through the WHERE (a broad search
  // fills a page after a few rows) and the total is the planner's estimate (at least cap + 1): an
  // exact count of a broad search reads every match, far more than the page does. The walk is a
  // statement of its own, not a second branch of the first: planning that branch cost every
  // search about 0.45 ms (1.09 vs 0.62 ms, the bench's `seniority IN + country`) for the few that
  // need it.
  const walk = () =>
    // raw SQL: the walk is composed from the same fragments.
    pool.query<Record<string, unknown>>(
      compileSql(sql`${selectFrom(c.from)} where (${c.where}) and (${from ? keysetPredicate(sort, from.after, from.dir) : sql`true`})
      order by ${from?.dir === 'prev' ? reverseOrder(sort) : sort.orderBy} limit ${take}`),
    );
  // The planner's estimate first (planning only, no execution): a search it sizes far past the cap
  // is almost surely broad, so its cap is checked by a bare count (no ids gathered and sorted: 4.3
  // of the 7.1 ms of `title LIKE vp of sales`'s count-and-page) while the walk reads the page on a
  // second connection. A wrong guess (the count stays within the cap) falls through to the
  // count-and-page below, exact as ever.
  const estimate = cap < Number.MAX_SAFE_INTEGER ? await estimateMatches(pool, c) : 0;
  if (estimate > BROAD_ESTIMATE_FACTOR * cap) {
    // raw SQL: a bare count of the matches up to the cap, from the same fragments.
    const counted = sql`select count(*)::int as n from (${matchesSql(c)} limit ${sql.lit(cap + 1)}) m`;
    const [count, walked] = await Promise.all([pool.query<{ n: number }>(compileSql(counted)), walk()]);
    if (count.rows[0]!.n > cap) return shapePage(walked.rows, Math.max(estimate, cap + 1), true);
  }
  // raw SQL: the count-and-page CTE is composed from the condition compiler's fragments (compileSql).
  const result = (await pool.query<Record<string, unknown>>(compileSql(statement))).rows;
  const n = Number(result[0]!.totalMatches);
  if (n > cap) return shapePage((await walk()).rows, Math.max(estimate, cap + 1), true);
  return shapePage(
    result.filter((r) => r.id !== null),
    n,
    false,
  );

  function shapePage(rows: Record<string, unknown>[], totalRecords: number, estimated: boolean): V2SearchPage {
    const page = pageMeta({ secret, fingerprint, rows, limit, totalRecords, keyOf: (r) => sort.keyOf(r), from });
    const data = page.data.map((r) => {
      const item = c.projection.shape(r);
      if (entity === 'contact') withCompanyId(item, r.companyId);
      return item;
    });
    return { data, meta: { ...page.meta, totalRecordsEstimated: estimated } };
  }
}
