/**
 * Conditions, fields and sort over a FIELD CATALOG (DESIGN §4): a map from a field path
 * (`contact.firstName`, `dsCompany.industry`, …) to its type, the column expression that yields it
 * (catalog code, compiled to SQL only in db/conditionSql.ts) and where its value goes in a
 * response item. This module holds what is pure: the catalog and condition shapes, the operators
 * each type admits, the limits, and the parsing of operand values and of stored values into
 * response values. The semantics of each operator are written beside the compiler.
 */
import { DATE_RANGE_RULE, parseIsoDate } from './dates.js';
import { invalidField } from './errors.js';
import { isUuid } from './ids.js';

export type FieldType = 'string' | 'number' | 'date' | 'boolean' | 'uuid' | 'multi';

export interface CatalogField {
  /** The `writeAccessPath` (what `fields`, `field`, `sort.field` and `groupByField` name). */
  path: string;
  type: FieldType;
  /**
   * SQL expression typed as the field type (text, numeric/int, timestamptz, boolean, text[]),
   * used in WHERE, ORDER BY and GROUP BY.
   */
  sql: string;
  /** SQL expression for the SELECT list when it differs from `sql` (e.g. a jsonb member). */
  selectSql?: string;
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
  /** Join keys this field needs; the caller turns them into JOIN clauses. */
  joins?: string[];
  /**
   * `false` for a NOT NULL column: predicates are emitted bare (no `coalesce(…, false)`), so
   * PostgreSQL can use an index on the column.
   */
  nullable?: boolean;
  label?: string;
  /**
   * SQL type of the operands compared with this field (default by type: text, numeric,
   * timestamptz, boolean, uuid). An int column with `cast: 'int'` keeps its b-tree usable.
   */
  cast?: string;
}

export interface FieldCatalog {
  /** Looks a path up; undefined when the path is not in the catalog. */
  get(path: string): CatalogField | undefined;
  /** SQL of the row id (every projected item carries `id`; the last sort key). */
  idSql: string;
  /** Cast of the id for keyset comparisons (default `uuid`). */
  idCast?: string;
}

/** A catalog over a fixed list of fields. */
export function catalogOf(fields: CatalogField[], idSql: string, idCast = 'uuid'): FieldCatalog & { fields: CatalogField[] } {
  const byPath = new Map(fields.map((f) => [f.path, f]));
  return { fields, idSql, idCast, get: (p) => byPath.get(p) };
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
export const LIMITS = { maxDepth: 8, maxLeaves: 100, maxLikes: 10, maxListItems: 1000, maxStringLength: 1000 };

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
