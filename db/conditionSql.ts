/**
 * The one condition compiler (DESIGN §4), the SQL side of domain/conditions.ts: it turns the
 * checked trees of `parseWhere`, `pickFields`, `parseSort` and `groupByField` into parameterised
 * SQL fragments over a SQL CATALOG, the domain catalog with the column each field reads
 * (`withColumns`; the column maps are db/contactColumns.ts, db/discoveryColumns.ts,
 * db/postColumns.ts). The semantics of each operator are written beside the parser.
 *
 * Output: fragments of Kysely's `sql` tag. Client values are bound parameters (`${value}`); the
 * SQL around them is catalog text (`sql.raw(field.sql)`), which is code: a client's field name
 * only selects a catalog entry. Callers compose the fragments into a statement and compile it
 * once (db/sqlFragments.ts), which numbers the parameters.
 */
import { sql, type AliasedRawBuilder, type RawBuilder } from 'kysely';
import { invalidField } from '../domain/errors.js';
import {
  groupByField,
  outputValue,
  parseSort,
  parseWhere,
  pickFields,
  writeOutput,
  type CatalogField,
  type FieldCatalog,
  type FieldType,
  type Predicate,
  type WhereOptions,
  type WhereTree,
} from '../domain/conditions.js';

/** Where a catalog field's value is read in SQL. */
export interface FieldColumn {
  /**
   * SQL expression typed as the field type (text, numeric/int, timestamptz, boolean, text[]),
   * used in WHERE, ORDER BY and GROUP BY.
   */
  sql: string;
  /** SQL expression for the SELECT list when it differs from `sql` (e.g. a jsonb member). */
  selectSql?: string;
  /** Join keys this field needs; the caller turns them into JOIN clauses. */
  joins?: string[];
  /**
   * `false` for a NOT NULL column: predicates are emitted bare (no `coalesce(…, false)`), so
   * PostgreSQL can use an index on the column.
   */
  nullable?: boolean;
}

/** A catalog field with its column. */
export type SqlField<F extends CatalogField = CatalogField> = F & FieldColumn;

/** A field catalog whose fields carry their columns, and the SQL of the row id. */
export interface SqlCatalog<F extends CatalogField = CatalogField> extends FieldCatalog<SqlField<F>> {
  fields: SqlField<F>[];
  /** SQL of the row id (every projected item carries `id`; the last sort key). */
  idSql: string;
  /** Cast of the id for keyset comparisons (default `uuid`). */
  idCast?: string;
}

/** A SQL catalog over a fixed list of fields that carry their columns. */
export function sqlCatalogOf<F extends CatalogField>(fields: SqlField<F>[], idSql: string, idCast = 'uuid'): SqlCatalog<F> {
  const byPath = new Map(fields.map((f) => [f.path, f]));
  return { fields, idSql, idCast, get: (p) => byPath.get(p) };
}

/** The SQL catalog of a domain catalog: each field with the column `columnOf` gives it. */
export function withColumns<F extends CatalogField>(
  catalog: { fields: F[]; unknown?: FieldCatalog['unknown']; treeLimits?: FieldCatalog['treeLimits'] },
  columnOf: (f: F) => FieldColumn,
  idSql: string,
  idCast = 'uuid',
): SqlCatalog<F> {
  return { ...sqlCatalogOf(catalog.fields.map((f) => ({ ...f, ...columnOf(f) })), idSql, idCast), unknown: catalog.unknown, treeLimits: catalog.treeLimits };
}

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

export type CompileOptions = WhereOptions;

const CASTS: Record<Exclude<FieldType, 'multi'>, string> = { string: 'text', number: 'numeric', date: 'timestamptz', boolean: 'boolean', uuid: 'uuid' };

/** Parses root `conditions` AND `groupedCondition` (domain/conditions.ts) and compiles them to one boolean SQL expression. */
export function compileWhere<F extends CatalogField>(
  catalog: SqlCatalog<F>,
  input: { conditions?: unknown; groupedCondition?: unknown },
  opts: CompileOptions = {},
): CompiledWhere {
  return whereSql(parseWhere(catalog, input, opts));
}

/** The SQL of a checked condition tree, and the joins its fields need. */
export function whereSql<F extends CatalogField>(tree: WhereTree<SqlField<F>>): CompiledWhere {
  const joins = new Set<string>();
  return { sql: nodeSql(tree, joins), joins };
}

function nodeSql<F extends CatalogField>(node: WhereTree<SqlField<F>>, joins: Set<string>): Fragment {
  if (node.kind === 'and' || node.kind === 'or') {
    const kids = node.children.map((c) => nodeSql(c, joins));
    return kids.length === 0 ? sql`true` : kids.length === 1 ? kids[0]! : joinedBy(kids, node.kind);
  }
  const field = node.field;
  for (const j of field.joins ?? []) joins.add(j);
  const e = sql.raw(field.sql);
  if (node.kind === 'empty') {
    const empty =
      field.type === 'string' ? sql`(${e} is null or ${e} = '')` : field.type === 'multi' ? sql`coalesce(cardinality(${e}), 0) = 0` : sql`${e} is null`;
    return node.negate ? sql`not ${empty}` : empty;
  }
  const pred = predicateSql(e, node.predicate, field.type === 'multi' ? 'text' : (field.cast ?? CASTS[field.type]));
  if (!node.negate) return pred;
  // NULL must count as false before negation (a missing value matches every negative operator)
  return field.nullable === false ? sql`not (${pred})` : sql`not coalesce(${pred}, false)`;
}

function predicateSql(e: Fragment, p: Predicate, cast: string): Fragment {
  switch (p.op) {
    case 'overlaps':
      return sql`${e} && ${bound(p.values, 'text[]')}`;
    case 'contains':
      return sql`${e} @> ${bound(p.values, 'text[]')}`;
    case '=':
      return sql`${e} = ${bound(p.value, cast)}`;
    case '>':
    case '>=':
    case '<':
    case '<=':
      return sql`${e} ${sql.raw(p.op)} ${bound(p.value, cast)}`;
    case 'between':
      return sql`${e} between ${bound(p.low, cast)} and ${bound(p.high, cast)}`;
    case 'in':
      return sql`${e} = any(${bound(p.values, `${cast}[]`)})`;
    case 'like':
      return sql`${e} ilike ${bound(p.pattern, 'text')}`;
  }
}

// ---------------------------------------------------------------------------------------------
// fields: projection into the response shape

export interface Projection<F extends CatalogField = CatalogField> {
  /** SELECT list: `<idSql> as "id", <expr> as "f0", …`. */
  select: Fragment;
  joins: Set<string>;
  /** Builds the nested response item from a row selected with `select`. */
  shape(row: Record<string, unknown>): Record<string, unknown>;
  fields: SqlField<F>[];
}

/**
 * `fields` → select list and nesting: `company.companyName` → `{company: {companyName}}`,
 * `contact.customFields.<id>` → `{customFields: {<id>: …}}`. Every item carries `id`. An
 * unknown path is a 400 naming it (`/fields/2`).
 */
export function compileFields<F extends CatalogField>(catalog: SqlCatalog<F>, fields: unknown, pointer = '/fields'): Projection<F> {
  return projectionOf(catalog, pickFields(catalog, fields, pointer));
}

/** Projection of a known list of catalog fields (e.g. every field, for full reads). */
export function projectionOf<F extends CatalogField>(catalog: SqlCatalog<F>, picked: SqlField<F>[]): Projection<F> {
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
export function compileSort<F extends CatalogField>(catalog: SqlCatalog<F>, sort: unknown, pointer = '/sort', defaultDesc = false): CompiledSort {
  const keys: CompiledSort['keys'] = [];
  const joins = new Set<string>();
  for (const { field: f, desc } of parseSort(catalog, sort, pointer)) {
    keys.push({ sql: f.sql, type: f.type, desc, cast: castOf(f.type) });
    for (const j of f.joins ?? []) joins.add(j);
  }
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
export function compileGroupBy<F extends CatalogField>(catalog: SqlCatalog<F>, path: unknown, pointer = '/groupByField'): { sql: Fragment; field: SqlField<F>; joins: Set<string> } {
  const f = groupByField(catalog, path, pointer);
  return { sql: sql.raw(f.type === 'multi' ? `unnest(${f.sql})` : f.sql), field: f, joins: new Set(f.joins ?? []) };
}
