/**
 * SQL of the discovery search over the global ds_* tables (raw SQL: the hot path).
 *
 * v2 searches compile `conditions` / `groupedCondition` / `fields` with the shared compiler
 * (db/conditionSql.ts) over the catalogs of db/discoveryColumns.ts, page by keyset on the
 * record id (tokens of domain/pagination.ts, bound to the query) and count exactly.
 * Verified searches rank (see VERIFIED_RANKING_DOC) and page by page number.
 */
import { sql } from 'kysely';
import { type Condition, type ConditionNode, writeOutput } from '../domain/conditions.js';
import { bound, compileFields, type Fragment, joinedBy, compileSort, compileWhere, keysetPredicate, reverseOrder, sqlCatalogOf, type Projection, type SqlCatalog } from './conditionSql.js';
import { COMPANY_PREFIX, DEFAULT_FIELDS, PERSON_PREFIX, VERIFIED_DEFAULT_FIELDS, VERIFIED_RESULT_FIELDS, type DiscoveryEntity, type VerifiedFilters } from '../domain/discoveryCatalog.js';
import { JOIN_SQL, PERSON_COPIES, SENIORITY_RANK_SQL, companySearchColumns, contactSearchColumns, personColumns, verifiedResultSql } from './discoveryColumns.js';
import { InvalidInputError } from '../domain/errors.js';
import { likeContains } from '../domain/like.js';
import { DATASET_SCOPE, decodeToken, pageMeta, queryFingerprint, type TokenPayload } from '../domain/pagination.js';
import type { Pool, Queryable } from './pool.js';
import type { DiscoveryConfig } from '../domain/config.js';
import { searchIds, searchVerifiedIds } from './discoveryOpenSearch.js';
import { compileSql } from './sqlFragments.js';

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
const isGroup = (n: unknown): n is { operator: string; conditions: unknown[] } => typeof n === 'object' && n !== null && 'conditions' in n;

/** True when every leaf under `node` is a person (`dsContact.*`) condition. */
function personOnly(node: unknown): boolean {
  if (isGroup(node)) return node.conditions.every(personOnly);
  return typeof (node as { field?: unknown }).field === 'string' && (node as { field: string }).field.startsWith(PERSON_PREFIX);
}

/** Fields whose LIKE is evaluated on a table of their distinct values (kept by the importer). */
const LIKE_LOOKUPS = new Map<string, { column: string; table: string; value: string }>([
  ['dsContact.member_job_title', { column: 'p.member_job_title', table: 'ds_people_titles', value: 'title' }],
]);

/**
 * Fields whose positive `LIKE` with a literal prefix (`'priya pat%'`) is also compared as
 * `lower(col) LIKE lower(pattern)`, which a b-tree on `lower(col)` answers as a range
 * (Migration20261124150500_discovery_arrays). The compiler's `ILIKE` stays, so the matches are the
 * same; as `(…) IS TRUE` (the same rows where a leaf is positive) it is no index condition, else the
 * planner ANDs in a trigram bitmap of every name holding the prefix's trigrams.
 */
const PREFIX_LOOKUPS = new Map<string, string>([['dsContact.member_full_name', 'p.member_full_name']]);

const normOp = (op: string) => op.trim().toUpperCase().replace(/\s+/g, ' ');

/**
 * A leaf compiled by the shared compiler, which keeps a positive leaf bare (so PostgreSQL can use
 * the trigram, b-tree and GIN indexes) and puts a negated one in negation normal form.
 */
function leafSql(catalog: SqlCatalog, leaf: ConditionNode, negated: boolean, forEstimate: boolean): Fragment {
  const l = leaf as Condition;
  if (forEstimate) {
    // Only EXPLAINed, never run: the planner sizes `not (…)` as the complement of the positive
    // leaf, where the compiler's `not coalesce(…, false)` is a default half of the table.
    const positive = POSITIVE_OF[normOp(l.operator)];
    if (positive) return leafSql(catalog, { ...l, operator: positive } as ConditionNode, !negated, true);
    if (negated) return sql`not (${leafSql(catalog, leaf, false, true)})`;
  }
  // For an estimate, the column's own ILIKE: the look-up's array is one the planner cannot size.
  const lookup = forEstimate ? undefined : LIKE_LOOKUPS.get(l.field);
  const likeOp = normOp(l.operator);
  if (lookup && (likeOp === 'LIKE' || likeOp === 'NOT LIKE')) {
    // same ILIKE, evaluated on the distinct values (validated by the compiler pass before)
    const positive = likeOp === 'LIKE' ? !negated : negated;
    const pred = sql`${sql.raw(lookup.column)} = any(array(select ${sql.raw(lookup.value)} from ${sql.raw(lookup.table)} where ${sql.raw(lookup.value)} ilike ${bound(l.value, 'text')}))`;
    return positive ? pred : sql`not coalesce(${pred}, false)`;
  }
  const prefixColumn = PREFIX_LOOKUPS.get(l.field);
  if (prefixColumn && likeOp === 'LIKE' && !negated && typeof l.value === 'string' && /^[^%_]/.test(l.value)) {
    return sql`(${compileWhere(catalog, { conditions: [l] }).sql}) is true and lower(${sql.raw(prefixColumn)}) like lower(${bound(l.value, 'text')})`;
  }
  const input = negated ? { groupedCondition: { operator: 'NOT' as const, conditions: [l] } } : { conditions: [l] };
  return compileWhere(catalog, input).sql;
}

/**
 * WHERE of a v2 search, in negation normal form: NOT groups are pushed down to the leaves
 * (De Morgan), leaves come from the shared compiler. In a company search, the person-only
 * children of a group are evaluated against the same person:
 * `c.id in (select company_id from ds_people p where <their AND/OR>)`.
 */
function whereSql(entity: DiscoveryEntity, node: unknown, negated: boolean, forEstimate = false): Fragment {
  const catalog = entity === 'contact' ? contactSearchColumns : companySearchColumns;
  if (!isGroup(node)) {
    if (entity === 'company' && personOnly(node)) {
      const inner = leafSql(personColumns, node as ConditionNode, false, forEstimate);
      return negated ? sql`not (${peopleOf(inner)})` : peopleOf(inner);
    }
    return leafSql(catalog, node as ConditionNode, negated, forEstimate);
  }
  const op = node.operator.toUpperCase();
  // NOT (a, b) = NOT (a AND b)
  // De Morgan: AND/OR swap under a negation; NOT (a, b) = OR(¬a, ¬b), and ¬NOT (a, b) = AND(a, b)
  const conj = op === 'AND' ? !negated : negated;
  const kidNegated = op === 'NOT' ? !negated : negated;
  const parts: Fragment[] = [];
  let kids = node.conditions;
  if (entity === 'company') {
    const persons = kids.filter(personOnly);
    kids = kids.filter((k) => !personOnly(k));
    if (persons.length) {
      // inside the sub-query the persons' own group operator applies, un-negated
      const group = { operator: op === 'OR' ? 'OR' : 'AND', conditions: persons };
      // Company conditions AND-ed beside them that have a copy on ds_people (industry, size range,
      // headcount, HQ country) hold for every person of a matching company: applied to the
      // person too, they let the sub-query start from the few people of such companies.
      const copied = op === 'AND' && !negated ? kids.filter(copiedOnPeople) : [];
      const inner = whereSql('contact', copied.length ? { operator: 'AND', conditions: [group, ...copied] } : group, false, forEstimate);
      const sub = peopleOf(inner);
      parts.push(kidNegated ? sql`not (${sub})` : sub);
    }
  }
  for (const k of kids) parts.push(whereSql(entity, k, kidNegated, forEstimate));
  return joinedBy(parts, conj ? 'and' : 'or');
}

/**
 * Whether the planner misjudges a tree's WHERE as compiled: a `LIKE` / `NOT LIKE` leaf read
 * through a look-up table (an array it cannot size) or a negation (`not coalesce(…, false)`).
 */
function misestimated(node: unknown): boolean {
  if (isGroup(node)) return node.operator.toUpperCase() === 'NOT' || node.conditions.some(misestimated);
  const op = normOp(String((node as Condition).operator));
  return (LIKE_LOOKUPS.has((node as Condition).field) && op === 'LIKE') || NEGATIVE_OPS.has(op);
}

const peopleOf = (personSql: Fragment) => sql`c.id in (select p.company_id from ds_people p where p.company_id is not null and (${personSql}))`;

/**
 * Whether a person search's conditions read the company (`c.*`, so ds_companies is joined): some
 * leaf's catalog expression does (copied company columns are read on ds_people).
 */
function readsCompany(node: unknown): boolean {
  if (isGroup(node)) return node.conditions.some(readsCompany);
  const field = contactSearchColumns.get(String((node as { field?: unknown }).field));
  return field !== undefined && /\bc\./.test(field.sql);
}

/** A `dsCompany.*` leaf on a column copied onto ds_people (PERSON_COPIES). */
function copiedOnPeople(node: unknown): boolean {
  if (isGroup(node)) return false;
  const field = (node as { field?: unknown }).field;
  return typeof field === 'string' && field.startsWith(COMPANY_PREFIX) && Object.hasOwn(PERSON_COPIES, field.slice(COMPANY_PREFIX.length));
}

function rootGroup(input: V2SearchInput): { operator: string; conditions: unknown[] } | null {
  const kids = [...(input.conditions ?? []), ...(input.groupedCondition ? [input.groupedCondition] : [])];
  return kids.length ? { operator: 'AND', conditions: kids } : null;
}

// ---------------------------------------------------------------------------------------------
// OR groups as a UNION of ids

/** A node with the negation it is evaluated under (negation normal form). */
interface Signed {
  node: unknown;
  negated: boolean;
}
/** Whether a group is a conjunction once the negation above it is pushed down. */
const isConjunction = (op: string, negated: boolean) => (op === 'AND' ? !negated : negated);
const kidsOf = (g: { operator: string; conditions: unknown[] }, negated: boolean): Signed[] =>
  g.conditions.map((node) => ({ node, negated: g.operator.toUpperCase() === 'NOT' ? !negated : negated }));

/** The conjuncts of a node: AND groups (and negated OR groups …) flattened. */
function conjuncts(s: Signed): Signed[] {
  if (!isGroup(s.node) || !isConjunction(s.node.operator.toUpperCase(), s.negated)) return [s];
  return kidsOf(s.node, s.negated).flatMap(conjuncts);
}

/** The disjuncts of an OR group (or of a negated AND / a NOT of several children), else null. */
function disjuncts(s: Signed): Signed[] | null {
  if (!isGroup(s.node) || s.node.conditions.length < 2 || isConjunction(s.node.operator.toUpperCase(), s.negated)) return null;
  return kidsOf(s.node, s.negated);
}

const POSITIVE_OPS = new Set(['==', 'IN', 'ALL', 'LIKE', 'BETWEEN', '>', '>=', '<', '<=']);
const NEGATIVE_OPS = new Set(['!=', 'NOT IN', 'NOT LIKE']);
const POSITIVE_OF: Record<string, string> = { '!=': '==', 'NOT IN': 'IN', 'NOT LIKE': 'LIKE' };
/**
 * Whether every row the node keeps is found through some bare predicate (an index can start
 * there): a positive leaf, an AND with one, an OR of such.
 */
function anchored(s: Signed): boolean {
  if (!isGroup(s.node)) {
    const op = normOp(String((s.node as { operator?: unknown }).operator ?? ''));
    return s.negated ? NEGATIVE_OPS.has(op) : POSITIVE_OPS.has(op);
  }
  const kids = kidsOf(s.node, s.negated);
  return isConjunction(s.node.operator.toUpperCase(), s.negated) ? kids.some(anchored) : kids.every(anchored);
}

/** At most this many UNION branches (each is a scan of its own). */
const MAX_UNION_BRANCHES = 8;

/** True when some leaf under `node` is a person (`dsContact.*`) condition. */
function mentionsPerson(node: unknown): boolean {
  if (isGroup(node)) return node.conditions.some(mentionsPerson);
  return personOnly(node);
}

/**
 * A search whose conditions are `x AND (a OR b …)` as `(x AND a) UNION (x AND b) …` of record
 * ids: PostgreSQL plans an OR across different columns as a BitmapOr of BitmapAnds, which builds
 * every bitmap whole (100k rows for one common country) and visits the heap for each candidate,
 * while each branch alone is one index range (mostly index-only). Only when every branch is
 * anchored (else a branch would be a scan of the table), and for companies only without person
 * conditions (those of one group must be met by the same person, which splitting the groups
 * apart would lose). Returns the UNION (selecting `id`) or null.
 */
function unionOf(entity: DiscoveryEntity, root: { operator: string; conditions: unknown[] } | null): Fragment | null {
  if (!root || (entity === 'company' && mentionsPerson(root))) return null;
  const parts = conjuncts({ node: root, negated: false });
  const at = parts.findIndex((p) => {
    const d = disjuncts(p);
    return d !== null && d.length <= MAX_UNION_BRANCHES;
  });
  if (at < 0) return null;
  const others = parts.filter((_, i) => i !== at);
  const branches = disjuncts(parts[at]!)!.map((d) => [...others, d]);
  if (!branches.every((b) => b.some(anchored))) return null;
  const common = others.map((o) => whereSql(entity, o.node, o.negated));
  return sql.join(
    branches.map((b) => {
      const d = b[b.length - 1]!;
      const where = joinedBy([...common, whereSql(entity, d.node, d.negated)], 'and');
      if (entity === 'company') return sql`select c.id from ds_companies c where ${where}`;
      return sql`select p.id from ds_people p ${sql.raw(b.some((x) => readsCompany(x.node)) ? JOIN_SQL.company! : '')} where ${where}`;
    }),
    sql` union `,
  );
}

/** The two leaves of a contact search whose conditions are exactly two positive leaves (root or nested AND groups), else null. */
function twoLeaves(entity: DiscoveryEntity, root: { operator: string; conditions: unknown[] } | null): Condition[] | null {
  if (entity !== 'contact' || !root) return null;
  const parts = conjuncts({ node: root, negated: false });
  if (parts.length !== 2 || parts.some((x) => x.negated || isGroup(x.node))) return null;
  return parts.map((x) => x.node as Condition);
}

const leafOf = (leaves: Condition[], field: string, ops: string[]) => leaves.find((l) => l.field === field && ops.includes(normOp(l.operator)));
/** A leaf's operands as the compiler binds them (validated before): strings, numbers as strings, each once. */
const operands = (v: unknown) => [...new Set((Array.isArray(v) ? v : [v]).map(String))];
/** `col = x` for one value (a range the planner knows is ordered by the index's next key), else `col = any(…)`. */
const oneOf = (column: string, values: string[]) => (values.length === 1 ? sql`${sql.raw(column)} = ${bound(values[0], 'text')}` : sql`${sql.raw(column)} = any(${bound(values, 'text[]')})`);

/**
 * The matches of a contact search whose conditions are exactly two leaves that a search-side
 * table answers with index ranges, or null:
 * - `dsContact.member_skills IN (…)` and `dsContact.member_location_country == / IN …`: a range of
 *   ds_people_by_skill's primary key (skill, country, person; kept by triggers on ds_people,
 *   Migration20261125230000_people_by_skill), index-only, where the people of the country had
 *   their skills array filtered one by one. A person matches once per listed skill they have,
 *   hence `distinct` beyond one skill.
 * - `dsCompany.technologies IN (…)` and `dsContact.member_seniority == / IN …`: the people of that
 *   seniority (`ds_people_seniority_company`, in company order) whose company is in a range of
 *   ds_companies_by_technology's primary key (technology, company; kept by triggers on
 *   ds_companies, Migration20261126020000_companies_by_technology): for one technology and one
 *   seniority one index-only range of the seniority checked against the companies' ids (an array),
 *   else a join, where the seniority's people had the copied `company_technologies` filtered one
 *   by one. The same rows: the copy is the company's array.
 */
function sideRowsOf(entity: DiscoveryEntity, root: { operator: string; conditions: unknown[] } | null): { rows: Fragment; estimateRows?: Fragment } | null {
  const leaves = twoLeaves(entity, root);
  if (!leaves) return null;
  const skills = leafOf(leaves, 'dsContact.member_skills', ['IN']);
  const country = leafOf(leaves, 'dsContact.member_location_country', ['==', 'IN']);
  if (skills && country) {
    const names = operands(skills.value);
    const rows = sql`s.person_id as id from ds_people_by_skill s where s.skill = any(${bound(names, 'text[]')}) and s.country = any(${bound(operands(country.value), 'text[]')})`;
    return { rows: names.length > 1 ? sql`select distinct ${rows}` : sql`select ${rows}` };
  }
  const technologies = leafOf(leaves, 'dsCompany.technologies', ['IN']);
  const seniority = leafOf(leaves, 'dsContact.member_seniority', ['==', 'IN']);
  if (technologies && seniority) {
    const techs = operands(technologies.value);
    const levels = operands(seniority.value);
    const companies = sql`select t.company_id from ds_companies_by_technology t where ${oneOf('t.technology', techs)}`;
    const joined = sql`select p.id from ds_people p where ${oneOf('p.member_seniority', levels)} and p.company_id in (${companies})`;
    // Several values keep the join (the array of several technologies' companies was slower: 41
    // vs 37 ms for three).
    if (techs.length > 1 || levels.length > 1) return { rows: joined };
    // One of each: the companies as an array bound into the seniority's range, which the b-tree
    // walks once and checks in the index, so only the matches reach the index-only scan's
    // visibility-map look-up (bench: 16,250 → 1,799 buffers, 17.7 → 13.6 ms for the statement);
    // the merge join checked every entry of the seniority. The planner cannot size the array (87
    // matches estimated of 136,665 in the bench), so a total past the exact-count limit is the
    // join's estimate.
    return { rows: sql`select p.id from ds_people p where ${oneOf('p.member_seniority', levels)} and p.company_id = any(array(${companies}))`, estimateRows: joined };
  }
  return null;
}

/**
 * At most this many excluded values are read as ranges: a range per value, each ordering the list
 * (1,000 values took 6 s); the seniorities are 8, and a longer list is filtered by the plain WHERE.
 */
const COMPLEMENT_MAX_VALUES = 10;

/**
 * `dsContact.member_location_country == / IN …` AND NOT `dsContact.member_seniority IN / ==` (or
 * `NOT IN` / `!=`), root or nested groups, as the ranges of the other seniorities: a UNION ALL of
 * index-only ranges of `ds_people(member_location_country, member_seniority)` (NULL, below the
 * least excluded value, between consecutive ones, above the greatest), where the country's every
 * entry was read and filtered (bench `NOT group`: 29,671 entries for 10,001 matches). The
 * excluded values are ordered by PostgreSQL (init-plans over the list, the column's own
 * comparison), so the ranges hold under any collation; the same rows as `NOT coalesce(s IN (…),
 * false)`: NULL matches, the listed values do not. Returns the ids or null.
 */
function complementRowsOf(entity: DiscoveryEntity, root: { operator: string; conditions: unknown[] } | null): { rows: Fragment; estimateRows: Fragment } | null {
  if (entity !== 'contact' || !root) return null;
  // a group of one child is that child (negated under a NOT)
  const flat = (x: Signed): Signed[] => (isGroup(x.node) && x.node.conditions.length === 1 ? conjuncts(kidsOf(x.node, x.negated)[0]!).flatMap(flat) : [x]);
  const parts = conjuncts({ node: root, negated: false }).flatMap(flat);
  if (parts.length !== 2 || parts.some((x) => isGroup(x.node))) return null;
  const op = (x: Signed) => normOp(String((x.node as Condition).operator));
  const country = parts.find((x) => !x.negated && (x.node as Condition).field === 'dsContact.member_location_country' && ['==', 'IN'].includes(op(x)));
  const excluded = parts.find(
    (x) => x !== country && (x.node as Condition).field === 'dsContact.member_seniority' && (x.negated ? ['==', 'IN'] : ['!=', 'NOT IN']).includes(op(x)),
  );
  if (!country || !excluded) return null;
  const values = operands((excluded.node as Condition).value);
  if (values.length > COMPLEMENT_MAX_VALUES) return null;
  const list = () => bound(values, 'text[]');
  const nth = (i: number) => sql`(select v from unnest(${list()}) v group by v order by v offset ${sql.lit(i)} limit 1)`;
  const col = sql.raw('p.member_seniority');
  const ranges = [
    sql`${col} is null`,
    sql`${col} < (select min(v) from unnest(${list()}) v)`,
    // between consecutive distinct values (an offset past the last one is NULL: no rows)
    ...values.slice(1).map((_, i) => sql`${col} > ${nth(i)} and ${col} < ${nth(i + 1)}`),
    sql`${col} > (select max(v) from unnest(${list()}) v)`,
  ];
  const at = oneOf('p.member_location_country', operands((country.node as Condition).value));
  return {
    rows: sql.join(
      ranges.map((r) => sql`select p.id from ds_people p where ${at} and ${r}`),
      sql` union all `,
    ),
    // The planner sizes this form from the seniority's statistics (bench: 12,420 estimated for
    // 12,307 matches); the ranges' estimates add up to far more (288,735), and the WHERE's
    // `not coalesce(… in …, false)` gets a default half of the country (207,227).
    estimateRows: sql`select p.id from ds_people p where ${at} and (${col} is null or ${col} <> all(${list()}))`,
  };
}

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
function withCompanyId(item: Record<string, unknown>, companyId: unknown): void {
  if (!item.company || typeof item.company !== 'object') return;
  item.company = companyId == null ? null : { ...(item.company as Record<string, unknown>), id: companyId };
}

/** The planner's estimate of the number of matches (a search with more than the exact-count limit). Raw SQL: `explain` of the compiled match query. */
async function estimateMatches(db: Queryable, c: Compiled): Promise<number> {
  const plan = (await db.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(compileSql(sql`explain (format json) ${c.estimated()}`))).rows[0]!['QUERY PLAN'];
  return Math.round(plan[0].Plan['Plan Rows']);
}

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
  // Count and page in one statement (one round trip, under the pool's statement_timeout,
  // API_STATEMENT_TIMEOUT_MS). The matches' ids are read once, up to cap + 1, through the
  // filter's indexes (which carry `id`: mostly index-only), into one aggregate: their number is
  // the total, and up to the cap they are every match, so the page is the next `limit` of them in
  // id order (the sorted array's first `limit + 1` past the keyset), whose rows alone are read by
  // primary key; past the cap there is no page here. One pass over the ids: a materialised CTE
  // read twice (count, then a top-N) cost 1.7 ms more for the bench's 9,456 matches of
  // `headcount + title LIKE` (13.8 vs 12.1 ms) and 0.6 ms for 3,442 (`seniority IN + country`).
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
  // raw SQL: the count-and-page CTE is composed from the condition compiler's fragments (compileSql).
  let result = (await pool.query<Record<string, unknown>>(compileSql(statement))).rows;
  const n = Number(result[0]!.totalMatches);
  // Past the cap the page walks the primary key in id order through the WHERE (a broad search
  // fills a page after a few rows) and the total is the planner's estimate (at least cap + 1): an
  // exact count of a broad search reads every match, far more than the page does. Both at once,
  // on two connections. The walk is a statement of its own, not a second branch of the first:
  // planning that branch cost every search about 0.45 ms (1.09 vs 0.62 ms, the bench's
  // `seniority IN + country`) for the few that need it.
  let total = { n, estimated: false };
  if (n > cap) {
    const walk = sql`${selectFrom(c.from)} where (${c.where}) and (${from ? keysetPredicate(sort, from.after, from.dir) : sql`true`})
      order by ${from?.dir === 'prev' ? reverseOrder(sort) : sort.orderBy} limit ${take}`;
    // raw SQL: the walk is composed from the same fragments.
    const [walked, estimate] = await Promise.all([pool.query<Record<string, unknown>>(compileSql(walk)), estimateMatches(pool, c)]);
    result = walked.rows;
    total = { n: Math.max(estimate, cap + 1), estimated: true };
  }
  return shapePage(
    result.filter((r) => r.id !== null),
    total.n,
    total.estimated,
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

// ---------------------------------------------------------------------------------------------
// verified

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

// ---------------------------------------------------------------------------------------------
// options and suggestions

/** Distinct values of a ds column, most frequent first, optionally containing `q`. Raw SQL: the column is a catalog entry's (`sql.raw` of code), unnested when `multi`. */
export async function distinctValues(
  pool: Pool,
  table: 'ds_people' | 'ds_companies',
  column: string,
  opts: { q?: string; multi?: boolean; limit?: number },
): Promise<{ value: string; count: number }[]> {
  const limit = sql.lit(opts.limit ?? 100);
  // the table and the column are the catalog's, never client input
  const col = sql.raw(column);
  const expr = opts.multi ? sql`unnest(${col})` : col;
  let statement: Fragment;
  if (opts.q) {
    const pattern = likeContains(opts.q);
    // sample the matching rows through the trigram/GIN index instead of grouping the whole table
    statement = opts.multi
      ? sql`select v as value, count(*)::int as count from (select ${expr} as v from ${sql.raw(table)}) s where v ilike ${pattern} group by v order by count desc, v limit ${limit}`
      : sql`select value, count(*)::int as count from (select ${col} as value from ${sql.raw(table)} where ${col} ilike ${pattern} limit 20000) s group by value order by count desc, value limit ${limit}`;
  } else {
    statement = sql`select v as value, count(*)::int as count from (select ${expr} as v from ${sql.raw(table)}) s where v is not null and v <> '' group by v order by count desc, v limit ${limit}`;
  }
  // raw SQL: the grouped values of a catalog column named by its SQL (compileSql).
  const r = await pool.query<{ value: string; count: number }>(compileSql(statement));
  return r.rows;
}
