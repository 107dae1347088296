/**
 * The WHERE of a v2 discovery search (db/discoverySearch.ts): a condition tree compiled over the
 * dataset catalogs, with the rewrites the planner needs — an OR group as a UNION of ids, the
 * estimate's side rows and complements.
 */
import { sql } from 'kysely';
import { type Condition, type ConditionNode } from '../domain/conditions.js';
import { childNegated, isConjunction, isGroup, normalForm, personOnly, type ConditionGroup, type NormalNode } from '../domain/discoveryConditionTree.js';
import { bound, type Fragment, joinedBy, compileWhere, type SqlCatalog } from './conditionSql.js';
import { COMPANY_PREFIX, type DiscoveryEntity } from '../domain/discoveryCatalog.js';
import { JOIN_SQL, PERSON_COPIES, companySearchColumns, contactSearchColumns } from './discoveryColumns.js';

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
 * WHERE of a v2 search under `negated`: the tree in negation normal form
 * (domain/discoveryConditionTree.ts), leaves from the shared compiler, a company search's person
 * match as `c.id in (select company_id from ds_people p where <its AND/OR>)`.
 */
export function whereSql(entity: DiscoveryEntity, node: unknown, negated: boolean, forEstimate = false): Fragment {
  return normalSql(entity, normalForm(entity, node, negated), forEstimate);
}

function normalSql(entity: DiscoveryEntity, n: NormalNode, forEstimate: boolean): Fragment {
  if (n.kind === 'leaf') return leafSql(entity === 'contact' ? contactSearchColumns : companySearchColumns, n.condition, n.negated, forEstimate);
  if (n.kind === 'people') {
    const sub = peopleOf(normalSql('contact', n.match, forEstimate));
    return n.negated ? sql`not (${sub})` : sub;
  }
  const parts = n.parts.map((p) => {
    if (p.kind !== 'people' || p.negated || n.kind !== 'and') return normalSql(entity, p, forEstimate);
    // Company conditions AND-ed beside the person match that have a copy on ds_people (industry,
    // size range, headcount, HQ country) hold for every person of a matching company: applied to
    // the person too, they let the sub-query start from the few people of such companies.
    const copied = n.parts.filter(copiedOnPeople);
    return peopleOf(normalSql('contact', copied.length ? { kind: 'and', parts: [p.match, ...copied] } : p.match, forEstimate));
  });
  return joinedBy(parts, n.kind);
}

/**
 * Whether the planner misjudges a tree's WHERE as compiled: a `LIKE` / `NOT LIKE` leaf read
 * through a look-up table (an array it cannot size) or a negation (`not coalesce(…, false)`).
 */
export function misestimated(node: unknown): boolean {
  if (isGroup(node)) return node.operator.toUpperCase() === 'NOT' || node.conditions.some(misestimated);
  const op = normOp(String((node as Condition).operator));
  return (LIKE_LOOKUPS.has((node as Condition).field) && op === 'LIKE') || NEGATIVE_OPS.has(op);
}

const peopleOf = (personSql: Fragment) => sql`c.id in (select p.company_id from ds_people p where p.company_id is not null and (${personSql}))`;

/**
 * Whether a person search's conditions read the company (`c.*`, so ds_companies is joined): some
 * leaf's catalog expression does (copied company columns are read on ds_people).
 */
export function readsCompany(node: unknown): boolean {
  if (isGroup(node)) return node.conditions.some(readsCompany);
  const field = contactSearchColumns.get(String((node as { field?: unknown }).field));
  return field !== undefined && /\bc\./.test(field.sql);
}

/** A positive `dsCompany.*` leaf on a column copied onto ds_people (PERSON_COPIES). */
function copiedOnPeople(n: NormalNode): boolean {
  if (n.kind !== 'leaf' || n.negated) return false;
  const field = n.condition.field;
  return field.startsWith(COMPANY_PREFIX) && Object.hasOwn(PERSON_COPIES, field.slice(COMPANY_PREFIX.length));
}

// ---------------------------------------------------------------------------------------------
// OR groups as a UNION of ids

/** A node with the negation it is evaluated under (negation normal form). */
interface Signed {
  node: unknown;
  negated: boolean;
}
const kidsOf = (g: ConditionGroup, negated: boolean): Signed[] => g.conditions.map((node) => ({ node, negated: childNegated(g.operator, negated) }));

/** The conjuncts of a node: AND groups (and negated OR groups …) flattened. */
function conjuncts(s: Signed): Signed[] {
  if (!isGroup(s.node) || !isConjunction(s.node.operator, s.negated)) return [s];
  return kidsOf(s.node, s.negated).flatMap(conjuncts);
}

/** The disjuncts of an OR group (or of a negated AND / a NOT of several children), else null. */
function disjuncts(s: Signed): Signed[] | null {
  if (!isGroup(s.node) || s.node.conditions.length < 2 || isConjunction(s.node.operator, s.negated)) return null;
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
  return isConjunction(s.node.operator, s.negated) ? kids.some(anchored) : kids.every(anchored);
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
export function unionOf(entity: DiscoveryEntity, root: { operator: string; conditions: unknown[] } | null): Fragment | null {
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
export function sideRowsOf(entity: DiscoveryEntity, root: { operator: string; conditions: unknown[] } | null): { rows: Fragment; estimateRows?: Fragment } | null {
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
export function complementRowsOf(entity: DiscoveryEntity, root: { operator: string; conditions: unknown[] } | null): { rows: Fragment; estimateRows: Fragment } | null {
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
