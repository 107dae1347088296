/**
 * The one condition compiler (DESIGN §4), the SQL side of domain/conditions.ts. Turns `conditions` / `groupedCondition`, `fields`,
 * `sort` and `groupByField` into parameterised SQL fragments over a FIELD CATALOG: a map from a
 * field path (`contact.firstName`, `dsCompany.industry`, …) to the SQL expression that yields
 * it, its type and where its value goes in a response item. Contacts and discovery search use
 * it with their own catalogs.
 *
 * Semantics
 * - Root `conditions` are AND-ed with `groupedCondition`. Groups are `AND`, `OR`, `NOT` (NOT of
 *   several children is NOT(c1 AND c2 …)); a group's `conditions` may hold groups.
 * - A missing value matches no positive operator (`==`, `LIKE`, `IN`, `>`, `ALL` …) and every
 *   negative one (`!=`, `NOT LIKE`, `NOT IN`). NOT is pushed down to the leaves (negation normal
 *   form), so un-negated positive leaves compile to bare, index-friendly predicates.
 * - string: `==` `!=` `LIKE` `NOT LIKE` `IN` `NOT IN` `IS EMPTY` `IS NOT EMPTY`. `==`/`IN` are
 *   exact; `LIKE` is case-insensitive with `%` (any run) and `_` (one character), `\` escapes
 *   (a pattern ending in a single `\` is a 400). Empty means NULL or ''.
 * - Per query: at most `LIMITS.maxLeaves` conditions, `LIMITS.maxLikes` of them `LIKE`/`NOT LIKE`
 *   (each a scan of its column), groups `LIMITS.maxDepth` deep.
 * - Numbers must be finite and fit the operand type (`int`, `bigint` columns: whole numbers in
 *   range); dates must exist on the calendar (`2026-02-30` is a 400, not 2 March).
 * - number/date: `==` `!=` `>` `>=` `<` `<=` `BETWEEN` [min, max] (inclusive) `IN`
 *   `IS EMPTY` `IS NOT EMPTY`. Numbers may be sent as numeric strings; dates as ISO 8601.
 * - boolean: `==` `!=` `IS EMPTY` `IS NOT EMPTY`.
 * - uuid (id columns): `==` `!=` `IN` `NOT IN` `IS EMPTY` `IS NOT EMPTY`; values must be UUIDs.
 * - multi (array values): `IN` (shares any value) `ALL` (holds every value) `NOT IN` (shares
 *   none) `IS EMPTY` `IS NOT EMPTY` (empty = NULL or no element).
 * Errors are 400 `validation_failed` whose detail path is the JSON pointer of the bad member
 * (`/groupedCondition/conditions/1/operator`).
 *
 * Output: fragments of Kysely's `sql` tag. Client values are bound parameters (`${value}`); the
 * SQL around them is catalog text (`sql.raw(field.sql)`), which is code: a client's field name
 * only selects a catalog entry. Callers compose the fragments into a statement and compile it
 * once (db/sqlFragments.ts), which numbers the parameters.
 */
import { sql, type AliasedRawBuilder, type RawBuilder } from 'kysely';
import { invalidField } from '../domain/errors.js';
import { likePatternProblem } from '../domain/like.js';
import {
  GROUP_OPERATORS,
  LIMITS,
  OPERATORS_BY_TYPE,
  isObject,
  scalarValue,
  stringList,
  outputValue,
  writeOutput,
  type CatalogField,
  type FieldCatalog,
  type FieldType,
} from '../domain/conditions.js';

/** A piece of SQL whose values are bound parameters (Kysely's `sql` tag). */
export type Fragment = RawBuilder<unknown>;

/** A value bound as a parameter compared as `cast` (`$n::text`); the cast is catalog code. */
export const bound = (value: unknown, cast: string): Fragment => sql`${value}::${sql.raw(cast)}`;

/** `(a) and (b) …` / `(a) or (b) …`. */
export const joinedBy = (parts: Fragment[], conj: 'and' | 'or'): Fragment =>
  sql.join(
    parts.map((p) => sql`(${p})`),
    sql.raw(` ${conj} `),
  );

export interface CompiledWhere {
  /** A boolean SQL fragment (`true` when there is no condition). */
  sql: Fragment;
  /** Join keys needed by the fields the conditions use. */
  joins: Set<string>;
}

export interface CompileOptions {
  /** JSON pointers of the two inputs (defaults `/conditions`, `/groupedCondition`). */
  conditionsPointer?: string;
  groupedPointer?: string;
}

const isGroup = (v: Record<string, unknown>) => 'conditions' in v;

const CASTS: Record<Exclude<FieldType, 'multi'>, string> = { string: 'text', number: 'numeric', date: 'timestamptz', boolean: 'boolean', uuid: 'uuid' };

/** Compiles root `conditions` AND `groupedCondition` to one boolean SQL expression. */
export function compileWhere(
  catalog: FieldCatalog,
  input: { conditions?: unknown; groupedCondition?: unknown },
  opts: CompileOptions = {},
): CompiledWhere {
  const joins = new Set<string>();
  const state = { leaves: 0, likes: 0 };
  const parts: Fragment[] = [];
  const cPtr = opts.conditionsPointer ?? '/conditions';
  const gPtr = opts.groupedPointer ?? '/groupedCondition';
  if (input.conditions !== undefined && input.conditions !== null) {
    if (!Array.isArray(input.conditions)) throw invalidField(cPtr, 'must be an array of conditions');
    input.conditions.forEach((c, i) => parts.push(compileNode(catalog, c, `${cPtr}/${i}`, joins, state, 1, false)));
  }
  if (input.groupedCondition !== undefined && input.groupedCondition !== null) {
    if (!isObject(input.groupedCondition) || !isGroup(input.groupedCondition))
      throw invalidField(gPtr, 'must be an object with operator and conditions');
    parts.push(compileNode(catalog, input.groupedCondition, gPtr, joins, state, 1, false));
  }
  return { sql: parts.length === 0 ? sql`true` : parts.length === 1 ? parts[0]! : joinedBy(parts, 'and'), joins };
}

function compileNode(
  catalog: FieldCatalog,
  node: unknown,
  ptr: string,
  joins: Set<string>,
  state: { leaves: number; likes: number },
  depth: number,
  negated: boolean,
): Fragment {
  if (!isObject(node)) throw invalidField(ptr, 'must be a condition object');
  if (isGroup(node)) {
    if (depth > LIMITS.maxDepth) throw invalidField(ptr, `groups may be nested at most ${LIMITS.maxDepth} deep`);
    for (const k of Object.keys(node))
      if (k !== 'operator' && k !== 'conditions') throw invalidField(`${ptr}/${k}`, 'is not a property of a grouped condition');
    const op = typeof node.operator === 'string' ? node.operator.toUpperCase() : node.operator;
    if (!GROUP_OPERATORS.includes(op as never))
      throw invalidField(`${ptr}/operator`, `must be one of ${GROUP_OPERATORS.join(', ')}`);
    if (!Array.isArray(node.conditions)) throw invalidField(`${ptr}/conditions`, 'must be an array');
    if (node.conditions.length === 0) throw invalidField(`${ptr}/conditions`, 'must not be empty');
    // Negation normal form: NOT is pushed down to the leaves (De Morgan), so positive leaves stay
    // bare predicates that indexes can serve; NOT of several children is NOT(c1 AND c2 …).
    const childNegated = op === 'NOT' ? !negated : negated;
    const kids = node.conditions.map((c, i) => compileNode(catalog, c, `${ptr}/conditions/${i}`, joins, state, depth + 1, childNegated));
    // Joined with OR: an un-negated OR, a negated AND (¬(a∧b) = ¬a∨¬b), an un-negated NOT (¬a∨¬b).
    const conj = op === 'AND' ? negated : !negated;
    if (kids.length === 1) return kids[0]!;
    return joinedBy(kids, conj ? 'or' : 'and');
  }
  state.leaves++;
  if (state.leaves > LIMITS.maxLeaves) throw invalidField(ptr, `at most ${LIMITS.maxLeaves} conditions are allowed`);
  return compileLeaf(catalog, node, ptr, joins, negated, state);
}

function compileLeaf(
  catalog: FieldCatalog,
  node: Record<string, unknown>,
  ptr: string,
  joins: Set<string>,
  negated: boolean,
  state: { likes: number },
): Fragment {
  for (const k of Object.keys(node))
    if (k !== 'field' && k !== 'operator' && k !== 'value') throw invalidField(`${ptr}/${k}`, 'is not a property of a condition');
  if (typeof node.field !== 'string') throw invalidField(`${ptr}/field`, 'must be a field path string');
  const field = catalog.get(node.field);
  if (!field) throw invalidField(`${ptr}/field`, `unknown field ${node.field}`);
  if (!field.filteringSupported) throw invalidField(`${ptr}/field`, `${node.field} does not support filtering`);
  if (typeof node.operator !== 'string') throw invalidField(`${ptr}/operator`, 'must be an operator string');
  const op = node.operator.trim().toUpperCase().replace(/\s+/g, ' ');
  const allowed = OPERATORS_BY_TYPE[field.type];
  if (!allowed.includes(op))
    throw invalidField(`${ptr}/operator`, `${node.operator} is not valid for ${field.type} field ${field.path}; use one of ${allowed.join(', ')}`);
  for (const j of field.joins ?? []) joins.add(j);
  const vPtr = `${ptr}/value`;
  const e = sql.raw(field.sql);
  const value = node.value;

  if (op === 'IS EMPTY' || op === 'IS NOT EMPTY') {
    if (value !== undefined && value !== null) throw invalidField(vPtr, `must be omitted for ${op}`);
    const empty =
      field.type === 'string' ? sql`(${e} is null or ${e} = '')` : field.type === 'multi' ? sql`coalesce(cardinality(${e}), 0) = 0` : sql`${e} is null`;
    return (op === 'IS EMPTY') !== negated ? empty : sql`not ${empty}`;
  }
  // Leaves are in negation normal form: an un-negated positive predicate stays bare (NULL acts as
  // false in AND/OR and WHERE, and indexes apply); a negated one must first turn NULL into false.
  const notNull = field.nullable === false;
  const twoValued = (pred: Fragment) => (notNull ? sql`(${pred})` : sql`coalesce(${pred}, false)`);
  const positive = (pred: Fragment) => (negated ? sql`not ${twoValued(pred)}` : pred);
  const negative = (pred: Fragment) => (negated ? pred : sql`not ${twoValued(pred)}`);

  if (field.type === 'multi') {
    const list = bound(stringList(value, vPtr), 'text[]');
    if (op === 'IN') return positive(sql`${e} && ${list}`);
    if (op === 'ALL') return positive(sql`${e} @> ${list}`);
    return negative(sql`${e} && ${list}`); // NOT IN
  }
  const cast = field.cast ?? CASTS[field.type];
  const scalar = (v: unknown, p: string) => scalarValue(field.type as Exclude<FieldType, 'multi'>, v, p, cast);
  const key = (v: unknown, p: string) => {
    const s = scalar(v, p);
    return field.matchKey && typeof s === 'string' ? field.matchKey(s) : s;
  };
  switch (op) {
    case '==':
    case '!=': {
      const pred = sql`${e} = ${bound(key(value, vPtr), cast)}`;
      return op === '==' ? positive(pred) : negative(pred);
    }
    case '>':
    case '>=':
    case '<':
    case '<=':
      return positive(sql`${e} ${sql.raw(op)} ${bound(scalar(value, vPtr), cast)}`);
    case 'BETWEEN': {
      if (!Array.isArray(value) || value.length !== 2) throw invalidField(vPtr, 'must be an array [min, max]');
      const lo = bound(scalar(value[0], `${vPtr}/0`), cast);
      const hi = bound(scalar(value[1], `${vPtr}/1`), cast);
      return positive(sql`${e} between ${lo} and ${hi}`);
    }
    case 'IN':
    case 'NOT IN': {
      if (!Array.isArray(value) || value.length === 0) throw invalidField(vPtr, 'must be a non-empty array');
      if (value.length > LIMITS.maxListItems) throw invalidField(vPtr, `must not have more than ${LIMITS.maxListItems} items`);
      const list = value.map((v, i) => key(v, `${vPtr}/${i}`));
      const pred = sql`${e} = any(${bound(list, `${cast}[]`)})`;
      return op === 'IN' ? positive(pred) : negative(pred);
    }
    case 'LIKE':
    case 'NOT LIKE': {
      state.likes++;
      if (state.likes > LIMITS.maxLikes) throw invalidField(ptr, `at most ${LIMITS.maxLikes} LIKE / NOT LIKE conditions are allowed per query`);
      const pattern = String(scalar(value, vPtr));
      const problem = likePatternProblem(pattern);
      if (problem) throw invalidField(vPtr, problem);
      const pred = sql`${e} ilike ${bound(pattern, 'text')}`;
      return op === 'LIKE' ? positive(pred) : negative(pred);
    }
  }
  /* c8 ignore next */
  throw invalidField(`${ptr}/operator`, `unsupported operator ${op}`);
}

// ---------------------------------------------------------------------------------------------
// fields: projection into the response shape

export interface Projection {
  /** SELECT list: `<idSql> as "id", <expr> as "f0", …`. */
  select: Fragment;
  joins: Set<string>;
  /** Builds the nested response item from a row selected with `select`. */
  shape(row: Record<string, unknown>): Record<string, unknown>;
  fields: CatalogField[];
}

/**
 * `fields` → select list and nesting: `company.companyName` → `{company: {companyName}}`,
 * `contact.customFields.<id>` → `{customFields: {<id>: …}}`. Every item carries `id`. An
 * unknown path is a 400 naming it (`/fields/2`).
 */
export function compileFields(catalog: FieldCatalog, fields: unknown, pointer = '/fields'): Projection {
  if (!Array.isArray(fields) || fields.length === 0) throw invalidField(pointer, 'must be a non-empty array of field paths');
  const picked: CatalogField[] = [];
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    if (typeof f !== 'string') throw invalidField(`${pointer}/${i}`, 'must be a field path string');
    const field = catalog.get(f);
    if (!field) throw invalidField(`${pointer}/${i}`, `unknown field ${f}`);
    if (!seen.has(f)) {
      seen.add(f);
      picked.push(field);
    }
  });
  return projectionOf(catalog, picked);
}

/** Projection of a known list of catalog fields (e.g. every field, for full reads). */
export function projectionOf(catalog: FieldCatalog, picked: CatalogField[]): Projection {
  const joins = new Set<string>();
  const cols = [`${catalog.idSql} as "id"`];
  picked.forEach((f, i) => {
    cols.push(`${f.selectSql ?? f.sql} as "f${i}"`);
    for (const j of f.joins ?? []) joins.add(j);
  });
  return {
    select: sql.raw(cols.join(', ')),
    joins,
    fields: picked,
    shape(row) {
      const out: Record<string, unknown> = { id: row.id };
      picked.forEach((f, i) => writeOutput(out, f, row[`f${i}`]));
      return out;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// sort + keyset pagination

export interface CompiledSort {
  /** Sort keys in order, the row id last (unique tiebreak). */
  keys: { sql: string; type: FieldType; desc: boolean; cast: string }[];
  orderBy: Fragment;
  /** SELECT items `<expr> as "s0"…` to read each row's sort key for tokens. */
  select: Fragment;
  /** The same items one by one, for a typed query builder's `select`. */
  selections: AliasedRawBuilder<unknown, `s${number}`>[];
  joins: Set<string>;
  /** Reads a row's sort key from a row selected with `select` plus `id`. */
  keyOf(row: Record<string, unknown>): unknown[];
}

/** `sort` → ORDER BY (ASC NULLS LAST / DESC NULLS FIRST), ending with the id. */
export function compileSort(catalog: FieldCatalog, sort: unknown, pointer = '/sort', defaultDesc = false): CompiledSort {
  const items = sort === undefined || sort === null ? [] : sort;
  if (!Array.isArray(items)) throw invalidField(pointer, 'must be an array of {field, direction}');
  if (items.length > 5) throw invalidField(pointer, 'must not have more than 5 items');
  const keys: CompiledSort['keys'] = [];
  const joins = new Set<string>();
  items.forEach((s, i) => {
    if (!isObject(s) || typeof s.field !== 'string') throw invalidField(`${pointer}/${i}/field`, 'must be a field path string');
    const f = catalog.get(s.field);
    if (!f) throw invalidField(`${pointer}/${i}/field`, `unknown field ${s.field}`);
    if (f.type === 'multi' || f.sortable === false) throw invalidField(`${pointer}/${i}/field`, `${s.field} cannot be sorted on`);
    const dir = s.direction === undefined ? 'asc' : String(s.direction).toLowerCase();
    if (dir !== 'asc' && dir !== 'desc') throw invalidField(`${pointer}/${i}/direction`, 'must be asc or desc');
    keys.push({ sql: f.sql, type: f.type, desc: dir === 'desc', cast: castOf(f.type) });
    for (const j of f.joins ?? []) joins.add(j);
  });
  const lastDesc = keys.length ? keys[keys.length - 1]!.desc : defaultDesc;
  keys.push({ sql: catalog.idSql, type: 'string', desc: lastDesc, cast: catalog.idCast ?? 'uuid' });
  const idIndex = keys.length - 1;
  const keyText = (k: CompiledSort['keys'][number], i: number) => (i === idIndex || k.type === 'date' ? `${k.sql}::text` : k.sql);
  // Ids and timestamps travel in tokens as PostgreSQL text: exact to the microsecond (a JS Date
  // keeps milliseconds, and a truncated boundary would repeat rows across pages).
  const selections = keys.map((k, i) => sql.raw(keyText(k, i)).as(`s${i}`));
  return {
    keys,
    joins,
    orderBy: sql.raw(keys.map((k) => `${k.sql} ${k.desc ? 'desc nulls first' : 'asc nulls last'}`).join(', ')),
    select: sql.join(selections),
    selections,
    keyOf: (row) => keys.map((k, i) => (k.type === 'date' ? (row[`s${i}`] ?? null) : outputValue(k.type, row[`s${i}`]))),
  };
}

/**
 * Predicate for rows strictly after (`next`) or before (`prev`) the boundary key in the sort
 * order, NULL-aware. For `prev` pages the caller also reverses `orderBy` (see `reverseOrder`).
 */
export function keysetPredicate(sort: CompiledSort, after: unknown[], dir: 'next' | 'prev', pointer = '/paginationToken'): Fragment {
  if (!Array.isArray(after) || after.length !== sort.keys.length) throw invalidField(pointer, 'does not match this query');
  const ors: Fragment[] = [];
  for (let i = 0; i < sort.keys.length; i++) {
    const eqs: Fragment[] = [];
    for (let j = 0; j < i; j++) {
      const k = sort.keys[j]!;
      const v = after[j];
      eqs.push(v === null ? sql`${sql.raw(k.sql)} is null` : sql`${sql.raw(k.sql)} = ${bound(v, k.cast)}`);
    }
    const k = sort.keys[i]!;
    const key = sql.raw(k.sql);
    const v = after[i];
    // Moving forward in ASC NULLS LAST / DESC NULLS FIRST order, or backward for `prev`.
    const forwardGreater = k.desc ? dir === 'prev' : dir === 'next';
    const nullsAfter = k.desc ? dir === 'prev' : dir === 'next'; // nulls lie ahead of every value in that direction
    let step: Fragment | null;
    if (v === null) step = nullsAfter ? null : sql`${key} is not null`;
    else {
      const cmp = sql`${key} ${sql.raw(forwardGreater ? '>' : '<')} ${bound(v, k.cast)}`;
      step = nullsAfter ? sql`(${cmp} or ${key} is null)` : cmp;
    }
    if (step === null) continue;
    ors.push(sql.join([...eqs, step], sql` and `));
  }
  return ors.length ? joinedBy(ors, 'or') : sql`false`;
}

export function reverseOrder(sort: CompiledSort): Fragment {
  return sql.raw(sort.keys.map((k) => `${k.sql} ${k.desc ? 'asc nulls last' : 'desc nulls first'}`).join(', '));
}

function castOf(t: FieldType): string {
  return t === 'multi' ? 'text[]' : t === 'string' ? 'text' : CASTS[t];
}

// ---------------------------------------------------------------------------------------------
// group by (unique values)

/** `groupByField` → expression of one value per row (multi fields unnest to one per element). */
export function compileGroupBy(catalog: FieldCatalog, path: unknown, pointer = '/groupByField'): { sql: Fragment; field: CatalogField; joins: Set<string> } {
  if (typeof path !== 'string') throw invalidField(pointer, 'must be a field path string');
  const f = catalog.get(path);
  if (!f) throw invalidField(pointer, `unknown field ${path}`);
  return { sql: sql.raw(f.type === 'multi' ? `unnest(${f.sql})` : f.sql), field: f, joins: new Set(f.joins ?? []) };
}
