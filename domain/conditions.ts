/**
 * Conditions, fields and sort over a FIELD CATALOG (DESIGN §4): a map from a field path
 * (`contact.firstName`, `dsCompany.industry`, …) to its type, its operators and where its value
 * goes in a response item. This module holds what is pure: the catalog and condition shapes, the
 * operators each type admits, the limits, the parsing of a request's `conditions` /
 * `groupedCondition`, `fields`, `sort` and `groupByField` into a checked, typed tree
 * (`parseWhere`, `pickFields`, `parseSort`, `groupByField`), and the parsing of operand values and
 * of stored values into response values. The column each field reads and the SQL of the tree are
 * db/ code (db/conditionSql.ts and the column maps beside it).
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
 * - Tree size: only what the request's JSON Schema states ({@link TreeLimits}): each `conditions`
 *   list at most `LIMITS.maxLeaves` items (the catalogs compiled to PostgreSQL: contacts, posts,
 *   sources), or each list by the depth of its group (the discovery catalogs).
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
 */
import { DATE_RANGE_RULE, parseIsoDate } from './dates.js';
import { invalidField } from './errors.js';
import { isUuid } from './ids.js';
import { likePatternProblem } from './like.js';

export type FieldType = 'string' | 'number' | 'date' | 'boolean' | 'uuid' | 'multi';

export interface CatalogField {
  /** The `writeAccessPath` (what `fields`, `field`, `sort.field` and `groupByField` name). */
  path: string;
  type: FieldType;
  /** Where the value sits in a response item: `['company', 'companyName']`. */
  output: string[];
  /** The response value from the stored one (a stored `host/path` profile → `https://host/path`). */
  present?: (value: unknown) => unknown;
  /** A second response property derived from the same stored value (`emailStatuses` beside `emails`). */
  also?: { output: string[]; present: (value: unknown) => unknown };
  /**
   * Normalises the operands of `==` `!=` `IN` `NOT IN` for a column stored normalised (profile
   * URLs are matched on their `host/path` form, whatever form the client sends).
   */
  matchKey?: (value: string) => string;
  filteringSupported: boolean;
  /** Multi-value fields are never sortable; others are unless set to false. */
  sortable?: boolean;
  label?: string;
  /**
   * Integer type of the operands compared with this field (`smallint`, `int`, `bigint`), which
   * bounds them; numbers are otherwise any finite value up to MAX_NUMERIC.
   */
  cast?: string;
}

export interface FieldCatalog<F extends CatalogField = CatalogField> {
  /** Looks a path up; undefined when the path is not in the catalog. */
  get(path: string): F | undefined;
  /**
   * The error for a path the catalog does not have, when it is not the default 400: a well-formed
   * reference to a workspace's own field (a custom field id) it does not have is a 404.
   */
  unknown?(path: string, pointer: string): Error | undefined;
  /** Absent: only each `conditions` list is bounded ({@link TreeLimits}). */
  treeLimits?: TreeLimits;
}

/**
 * How a catalog bounds a condition tree beyond its lists (issue 27 item 21: what the document
 * calls valid, the server accepts, so a bound is one JSON Schema states: a list's `maxItems`, a
 * depth). Every catalog bounds each `conditions` list to `LIMITS.maxLeaves` items; one without
 * `treeLimits` bounds nothing more (nesting by MAX_JSON_DEPTH like every input, a query's cost by
 * the statement timeout: the catalogs compiled to PostgreSQL, contacts, posts, sources). With
 * `{groupItems}`: a group at depth d (`groupedCondition` is 1) at most `groupItems[d - 1]` items,
 * and no group deeper than `groupItems.length`. So a query holds at most {@link maxConditionsOf}
 * conditions, a bound an engine with its own clause limit needs (the discovery catalogs:
 * OpenSearch counts every clause of a query against 1024).
 */
export interface TreeLimits {
  groupItems: readonly number[];
}

/** The most conditions a tree within `{groupItems}` holds: the root list, and full groups at every depth. */
export const maxConditionsOf = (groupItems: readonly number[]): number => LIMITS.maxLeaves + groupItems.reduce((a, b) => a * b, 1);

/** The error for `path`, which `catalog` does not have, named at `pointer`. */
const unknownField = (catalog: FieldCatalog, path: string, pointer: string) => catalog.unknown?.(path, pointer) ?? invalidField(pointer, `unknown field ${path}`);

/** A catalog over a fixed list of fields. */
export function catalogOf<F extends CatalogField>(fields: F[]): FieldCatalog<F> & { fields: F[] } {
  const byPath = new Map(fields.map((f) => [f.path, f]));
  return { fields, get: (p) => byPath.get(p) };
}

export interface Condition {
  field: string;
  operator: string;
  value?: unknown;
}
export interface GroupedCondition {
  operator: string;
  conditions: (Condition | GroupedCondition)[];
}
export type ConditionNode = Condition | GroupedCondition;

export const GROUP_OPERATORS = ['AND', 'OR', 'NOT'] as const;
export const OPERATORS_BY_TYPE: Record<FieldType, readonly string[]> = {
  string: ['==', '!=', 'LIKE', 'NOT LIKE', 'IN', 'NOT IN', 'IS EMPTY', 'IS NOT EMPTY'],
  number: ['==', '!=', '>', '>=', '<', '<=', 'BETWEEN', 'IN', 'IS EMPTY', 'IS NOT EMPTY'],
  date: ['==', '!=', '>', '>=', '<', '<=', 'BETWEEN', 'IN', 'IS EMPTY', 'IS NOT EMPTY'],
  boolean: ['==', '!=', 'IS EMPTY', 'IS NOT EMPTY'],
  uuid: ['==', '!=', 'IN', 'NOT IN', 'IS EMPTY', 'IS NOT EMPTY'],
  multi: ['IN', 'ALL', 'NOT IN', 'IS EMPTY', 'IS NOT EMPTY'],
};
export const LIMITS = { maxLeaves: 100, maxListItems: 1000, maxStringLength: 1000 };

/** Operand ranges of the integer casts a catalog may ask for (numeric/float take any finite number). */
const INTEGER_RANGES: Record<string, [number, number]> = {
  smallint: [-32768, 32767],
  int: [-2147483648, 2147483647],
  integer: [-2147483648, 2147483647],
  // bigint reaches ±9.2e18; a JS number is exact only up to 2^53
  bigint: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

export function stringList(value: unknown, ptr: string): string[] {
  const arr = Array.isArray(value) ? value : typeof value === 'string' ? [value] : null;
  if (!arr || arr.length === 0) throw invalidField(ptr, 'must be a non-empty array of strings');
  if (arr.length > LIMITS.maxListItems) throw invalidField(ptr, `must not have more than ${LIMITS.maxListItems} items`);
  return arr.map((v, i) => {
    if (typeof v !== 'string' && typeof v !== 'number') throw invalidField(`${ptr}/${i}`, 'must be a string');
    return String(v);
  });
}

/**
 * Checks and normalises one scalar operand for a field type (exported for writes and tests);
 * `cast` is the SQL type it is compared as, which bounds numbers.
 */
export function scalarValue(type: Exclude<FieldType, 'multi'>, v: unknown, ptr: string, cast?: string): string | number | boolean {
  switch (type) {
    case 'uuid':
      if (!isUuid(v)) throw invalidField(ptr, 'must be an id (UUID)');
      return v.toLowerCase();
    case 'string':
      if (typeof v === 'number') return String(v);
      if (typeof v !== 'string') throw invalidField(ptr, 'must be a string');
      if (v.length > LIMITS.maxStringLength) throw invalidField(ptr, `must not be longer than ${LIMITS.maxStringLength} characters`);
      return v;
    case 'number': {
      const n = numberInput(v);
      if (!Number.isFinite(n)) throw invalidField(ptr, `must be a finite number ${NUMERIC_STRING_RULE}`);
      const range = cast ? INTEGER_RANGES[cast] : undefined;
      if (range) {
        if (!Number.isInteger(n)) throw invalidField(ptr, 'must be a whole number');
        if (n < range[0] || n > range[1]) throw invalidField(ptr, `must be between ${range[0]} and ${range[1]}`);
      } else if (Math.abs(n) > MAX_NUMERIC) throw invalidField(ptr, `must be between -${MAX_NUMERIC} and ${MAX_NUMERIC}`);
      return n;
    }
    case 'date': {
      const d = parseIsoDate(v);
      if (!d) throw invalidField(ptr, `must be an ISO 8601 date or timestamp that exists on the calendar, ${DATE_RANGE_RULE}`);
      return d.toISOString();
    }
    case 'boolean':
      if (typeof v === 'boolean') return v;
      if (v === 'true' || v === 'false') return v === 'true';
      throw invalidField(ptr, 'must be a boolean');
  }
}
/** Bound of numeric operands: no column holds more, and JS numbers beyond are not exact anyway. */
export const MAX_NUMERIC = 1e15;

/** Said in the error of a refused number. */
export const NUMERIC_STRING_RULE = '(numeric strings in decimal notation, e.g. 12, -3.5, 1e3)';
const DECIMAL_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

/**
 * A number operand or value as sent: a JSON number, or a numeric string in decimal notation
 * (spaces around it allowed); NaN for anything else. `Number()` alone would also read `0x10`,
 * `0b11`, `0o7` and `Infinity`, and read `''` as 0.
 */
export function numberInput(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return NaN;
  const t = v.trim();
  return DECIMAL_RE.test(t) ? Number(t) : NaN;
}

/** True for a plain object (not null, not an array). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Puts a stored value where a field's response value goes (and its derived `also` value). */
export function writeOutput(target: Record<string, unknown>, f: Pick<CatalogField, 'type' | 'output' | 'present' | 'also'>, stored: unknown): void {
  const v = outputValue(f.type, stored);
  setPath(target, f.output, f.present ? f.present(v) : v);
  if (f.also) setPath(target, f.also.output, f.also.present(v));
}

export function outputValue(type: FieldType, v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (v instanceof Date) return v.toISOString();
  if (type === 'number' && typeof v === 'string') return Number(v);
  if (type === 'date' && typeof v === 'string' && !Number.isNaN(Date.parse(v))) return new Date(v).toISOString();
  return v;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let o = target;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i]!;
    if (!isObject(o[k])) o[k] = {};
    o = o[k] as Record<string, unknown>;
  }
  o[path[path.length - 1]!] = value;
}

// ---------------------------------------------------------------------------------------------
// conditions → a checked tree in negation normal form

/** One comparison of a leaf, operands checked and normalised (matchKey applied). */
export type Predicate =
  /** multi: shares any of (`IN`, `NOT IN`) / holds every one of (`ALL`) the values. */
  | { op: 'overlaps' | 'contains'; values: string[] }
  | { op: '=' | '>' | '>=' | '<' | '<='; value: string | number | boolean }
  | { op: 'between'; low: string | number | boolean; high: string | number | boolean }
  | { op: 'in'; values: (string | number | boolean)[] }
  /** Case-insensitive LIKE pattern (checked by likePatternProblem). */
  | { op: 'like'; pattern: string };

/**
 * A checked condition tree over the fields of a catalog, NOT already pushed down to the leaves.
 * `negate` on a leaf means "true only when the predicate is known false" (NULL counts as false),
 * which is how a missing value matches every negative operator.
 */
export type WhereTree<F extends CatalogField = CatalogField> =
  | { kind: 'and'; children: WhereTree<F>[] }
  | { kind: 'or'; children: WhereTree<F>[] }
  | { kind: 'empty'; field: F; negate: boolean }
  | { kind: 'compare'; field: F; predicate: Predicate; negate: boolean };

export interface WhereOptions {
  /** JSON pointers of the two inputs (defaults `/conditions`, `/groupedCondition`). */
  conditionsPointer?: string;
  groupedPointer?: string;
}

const isGroup = (v: Record<string, unknown>) => 'conditions' in v;

/**
 * Parses root `conditions` AND `groupedCondition` into one tree (an `and` of no children when
 * there is no condition), refusing what breaks the rules above with a 400 naming the member.
 */
export function parseWhere<F extends CatalogField>(
  catalog: FieldCatalog<F>,
  input: { conditions?: unknown; groupedCondition?: unknown },
  opts: WhereOptions = {},
): WhereTree<F> {
  const parts: WhereTree<F>[] = [];
  const cPtr = opts.conditionsPointer ?? '/conditions';
  const gPtr = opts.groupedPointer ?? '/groupedCondition';
  if (input.conditions !== undefined && input.conditions !== null) {
    if (!Array.isArray(input.conditions)) throw invalidField(cPtr, 'must be an array of conditions');
    assertListLength(input.conditions, cPtr, LIMITS.maxLeaves);
    input.conditions.forEach((c, i) => parts.push(parseNode(catalog, c, `${cPtr}/${i}`, 1, false)));
  }
  if (input.groupedCondition !== undefined && input.groupedCondition !== null) {
    if (!isObject(input.groupedCondition) || !isGroup(input.groupedCondition))
      throw invalidField(gPtr, 'must be an object with operator and conditions');
    parts.push(parseNode(catalog, input.groupedCondition, gPtr, 1, false));
  }
  return parts.length === 1 ? parts[0]! : { kind: 'and', children: parts };
}

function parseNode<F extends CatalogField>(
  catalog: FieldCatalog<F>,
  node: unknown,
  ptr: string,
  depth: number,
  negated: boolean,
): WhereTree<F> {
  if (!isObject(node)) throw invalidField(ptr, 'must be a condition object');
  const levels = catalog.treeLimits?.groupItems;
  if (isGroup(node)) {
    if (levels && depth > levels.length) throw invalidField(ptr, `groups may be nested at most ${levels.length} deep`);
    for (const k of Object.keys(node))
      if (k !== 'operator' && k !== 'conditions') throw invalidField(`${ptr}/${k}`, 'is not a property of a grouped condition');
    const op = typeof node.operator === 'string' ? node.operator.toUpperCase() : node.operator;
    if (!GROUP_OPERATORS.includes(op as never))
      throw invalidField(`${ptr}/operator`, `must be one of ${GROUP_OPERATORS.join(', ')}`);
    if (!Array.isArray(node.conditions)) throw invalidField(`${ptr}/conditions`, 'must be an array');
    if (node.conditions.length === 0) throw invalidField(`${ptr}/conditions`, 'must not be empty');
    assertListLength(node.conditions, `${ptr}/conditions`, levels ? levels[depth - 1]! : LIMITS.maxLeaves);
    // Negation normal form: NOT is pushed down to the leaves (De Morgan), so positive leaves stay
    // bare predicates that indexes can serve; NOT of several children is NOT(c1 AND c2 …).
    const childNegated = op === 'NOT' ? !negated : negated;
    const kids = node.conditions.map((c, i) => parseNode(catalog, c, `${ptr}/conditions/${i}`, depth + 1, childNegated));
    // Joined with OR: an un-negated OR, a negated AND (¬(a∧b) = ¬a∨¬b), an un-negated NOT (¬a∨¬b).
    const conj = op === 'AND' ? negated : !negated;
    if (kids.length === 1) return kids[0]!;
    return conj ? { kind: 'or', children: kids } : { kind: 'and', children: kids };
  }
  return parseLeaf(catalog, node, ptr, negated);
}

function assertListLength(list: unknown[], ptr: string, max: number): void {
  if (list.length > max) throw invalidField(`${ptr}/${max}`, `at most ${max} conditions are allowed in one list`);
}

function parseLeaf<F extends CatalogField>(
  catalog: FieldCatalog<F>,
  node: Record<string, unknown>,
  ptr: string,
  negated: boolean,
): WhereTree<F> {
  for (const k of Object.keys(node))
    if (k !== 'field' && k !== 'operator' && k !== 'value') throw invalidField(`${ptr}/${k}`, 'is not a property of a condition');
  if (typeof node.field !== 'string') throw invalidField(`${ptr}/field`, 'must be a field path string');
  const field = catalog.get(node.field);
  if (!field) throw unknownField(catalog, node.field, `${ptr}/field`);
  if (!field.filteringSupported) throw invalidField(`${ptr}/field`, `${node.field} does not support filtering`);
  if (typeof node.operator !== 'string') throw invalidField(`${ptr}/operator`, 'must be an operator string');
  const op = node.operator.trim().toUpperCase().replace(/\s+/g, ' ');
  const allowed = OPERATORS_BY_TYPE[field.type];
  if (!allowed.includes(op))
    throw invalidField(`${ptr}/operator`, `${node.operator} is not valid for ${field.type} field ${field.path}; use one of ${allowed.join(', ')}`);
  const vPtr = `${ptr}/value`;
  const value = node.value;

  if (op === 'IS EMPTY' || op === 'IS NOT EMPTY') {
    if (value !== undefined && value !== null) throw invalidField(vPtr, `must be omitted for ${op}`);
    return { kind: 'empty', field, negate: (op === 'IS EMPTY') === negated };
  }
  // Leaves are in negation normal form: an un-negated positive predicate stays bare (NULL acts as
  // false in AND/OR and WHERE, and indexes apply); a negated one must first turn NULL into false.
  const positive = (predicate: Predicate): WhereTree<F> => ({ kind: 'compare', field, predicate, negate: negated });
  const negative = (predicate: Predicate): WhereTree<F> => ({ kind: 'compare', field, predicate, negate: !negated });

  if (field.type === 'multi') {
    const values = stringList(value, vPtr);
    if (op === 'IN') return positive({ op: 'overlaps', values });
    if (op === 'ALL') return positive({ op: 'contains', values });
    return negative({ op: 'overlaps', values }); // NOT IN
  }
  const scalar = (v: unknown, p: string) => scalarValue(field.type as Exclude<FieldType, 'multi'>, v, p, field.cast);
  const key = (v: unknown, p: string) => {
    const s = scalar(v, p);
    return field.matchKey && typeof s === 'string' ? field.matchKey(s) : s;
  };
  switch (op) {
    case '==':
    case '!=': {
      const pred = { op: '=', value: key(value, vPtr) } as const;
      return op === '==' ? positive(pred) : negative(pred);
    }
    case '>':
    case '>=':
    case '<':
    case '<=':
      return positive({ op, value: scalar(value, vPtr) });
    case 'BETWEEN': {
      if (!Array.isArray(value) || value.length !== 2) throw invalidField(vPtr, 'must be an array [min, max]');
      return positive({ op: 'between', low: scalar(value[0], `${vPtr}/0`), high: scalar(value[1], `${vPtr}/1`) });
    }
    case 'IN':
    case 'NOT IN': {
      if (!Array.isArray(value) || value.length === 0) throw invalidField(vPtr, 'must be a non-empty array');
      if (value.length > LIMITS.maxListItems) throw invalidField(vPtr, `must not have more than ${LIMITS.maxListItems} items`);
      const pred = { op: 'in', values: value.map((v, i) => key(v, `${vPtr}/${i}`)) } as const;
      return op === 'IN' ? positive(pred) : negative(pred);
    }
    case 'LIKE':
    case 'NOT LIKE': {
      const pattern = String(scalar(value, vPtr));
      const problem = likePatternProblem(pattern);
      if (problem) throw invalidField(vPtr, problem);
      const pred = { op: 'like', pattern } as const;
      return op === 'LIKE' ? positive(pred) : negative(pred);
    }
  }
  /* c8 ignore next */
  throw invalidField(`${ptr}/operator`, `unsupported operator ${op}`);
}

// ---------------------------------------------------------------------------------------------
// fields, sort, group by

/**
 * `fields` → the catalog fields they name, first mention kept. Every projected item carries `id`
 * beside them. An unknown path is a 400 naming it (`/fields/2`).
 */
export function pickFields<F extends CatalogField>(catalog: FieldCatalog<F>, fields: unknown, pointer = '/fields'): F[] {
  if (!Array.isArray(fields) || fields.length === 0) throw invalidField(pointer, 'must be a non-empty array of field paths');
  const picked: F[] = [];
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    if (typeof f !== 'string') throw invalidField(`${pointer}/${i}`, 'must be a field path string');
    const field = catalog.get(f);
    if (!field) throw unknownField(catalog, f, `${pointer}/${i}`);
    if (!seen.has(f)) {
      seen.add(f);
      picked.push(field);
    }
  });
  return picked;
}

/** `sort` → its keys in order (at most 5; multi-value and unsortable fields refused). */
export function parseSort<F extends CatalogField>(catalog: FieldCatalog<F>, sort: unknown, pointer = '/sort'): { field: F; desc: boolean }[] {
  const items = sort === undefined || sort === null ? [] : sort;
  if (!Array.isArray(items)) throw invalidField(pointer, 'must be an array of {field, direction}');
  if (items.length > 5) throw invalidField(pointer, 'must not have more than 5 items');
  return items.map((s, i) => {
    if (!isObject(s) || typeof s.field !== 'string') throw invalidField(`${pointer}/${i}/field`, 'must be a field path string');
    const f = catalog.get(s.field);
    if (!f) throw unknownField(catalog, s.field, `${pointer}/${i}/field`);
    if (f.type === 'multi' || f.sortable === false) throw invalidField(`${pointer}/${i}/field`, `${s.field} cannot be sorted on`);
    const dir = s.direction === undefined ? 'asc' : String(s.direction).toLowerCase();
    if (dir !== 'asc' && dir !== 'desc') throw invalidField(`${pointer}/${i}/direction`, 'must be asc or desc');
    return { field: f, desc: dir === 'desc' };
  });
}

/** `groupByField` → the field it names. */
export function groupByField<F extends CatalogField>(catalog: FieldCatalog<F>, path: unknown, pointer = '/groupByField'): F {
  if (typeof path !== 'string') throw invalidField(pointer, 'must be a field path string');
  const f = catalog.get(path);
  if (!f) throw unknownField(catalog, path, pointer);
  return f;
}
