/**
 * `POST /v1/posts/filter-posts`: the filterable and sortable post fields, the operators each
 * accepts, and their compilation to SQL (a WHERE fragment with numbered parameters, and a keyset
 * ORDER BY / boundary over the sort keys plus `id`). Pure, so it is unit-tested on its own.
 */
import { invalidField } from './errors.js';
import { isUuid, POST_STATUSES } from './social.js';

type FieldType = 'status' | 'uuid' | 'date' | 'boolean';
interface FieldDef {
  column: string;
  type: FieldType;
  nullable: boolean;
}

export const POST_FILTER_FIELDS: Record<string, FieldDef> = {
  status: { column: 'status', type: 'status', nullable: false },
  providerId: { column: 'provider_id', type: 'uuid', nullable: false },
  parentPostId: { column: 'parent_post_id', type: 'uuid', nullable: true },
  externalPost: { column: 'external_post', type: 'boolean', nullable: false },
  scheduledTime: { column: 'scheduled_time', type: 'date', nullable: true },
  publishedAt: { column: 'published_at', type: 'date', nullable: true },
  createdAt: { column: 'created_at', type: 'date', nullable: false },
  updatedAt: { column: 'updated_at', type: 'date', nullable: false },
};

const OPERATORS_BY_TYPE: Record<FieldType, readonly string[]> = {
  status: ['==', '!=', 'IN', 'NOT IN'],
  uuid: ['==', '!=', 'IN', 'NOT IN'],
  boolean: ['==', '!='],
  date: ['==', '!=', '>', '>=', '<', '<=', 'BETWEEN'],
};
const NULL_OPERATORS = ['IS EMPTY', 'IS NOT EMPTY'];

export function operatorsFor(field: string): string[] {
  const def = POST_FILTER_FIELDS[field];
  if (!def) return [];
  return [...OPERATORS_BY_TYPE[def.type], ...(def.nullable ? NULL_OPERATORS : [])];
}

export const POST_SORT_FIELDS = ['createdAt', 'updatedAt', 'scheduledTime', 'publishedAt'] as const;
export type PostSortField = (typeof POST_SORT_FIELDS)[number];
export interface PostSort {
  field: PostSortField;
  direction: 'asc' | 'desc';
}

export interface PostCondition {
  field: string;
  operator: string;
  value?: unknown;
}

const ISO_RE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** Appends `v` to `params` and returns its placeholder. */
type Bind = (v: unknown, cast?: string) => string;

function scalar(def: FieldDef, v: unknown, path: string): unknown {
  switch (def.type) {
    case 'status':
      if (typeof v !== 'string' || !(POST_STATUSES as readonly string[]).includes(v)) {
        throw invalidField(path, `must be one of ${POST_STATUSES.join(', ')}`);
      }
      return v;
    case 'uuid':
      if (typeof v !== 'string' || !isUuid(v)) throw invalidField(path, 'must be an id (UUID)');
      return v.toLowerCase();
    case 'boolean':
      if (typeof v !== 'boolean') throw invalidField(path, 'must be true or false');
      return v;
    case 'date': {
      if (typeof v !== 'string' || !ISO_RE.test(v) || Number.isNaN(Date.parse(v))) {
        throw invalidField(path, 'must be an ISO 8601 date or date-time, e.g. 2026-11-21T17:45:00.000Z');
      }
      return new Date(v).toISOString();
    }
  }
}

const CAST: Record<FieldType, string> = { status: 'text', uuid: 'uuid', boolean: 'boolean', date: 'timestamptz' };

/**
 * WHERE fragments (ANDed) for `conditions`; `/conditions/<i>/...` names a bad entry.
 * `bind` receives the values in order.
 */
export function compilePostConditions(conditions: PostCondition[], bind: Bind): string[] {
  return conditions.map((c, i) => {
    const def = POST_FILTER_FIELDS[c.field];
    const at = `/conditions/${i}`;
    if (!def) throw invalidField(`${at}/field`, `must be one of ${Object.keys(POST_FILTER_FIELDS).join(', ')}`);
    const ops = operatorsFor(c.field);
    if (!ops.includes(c.operator)) throw invalidField(`${at}/operator`, `is not valid for ${c.field}; use one of ${ops.join(', ')}`);
    const col = def.column;
    const cast = CAST[def.type];
    switch (c.operator) {
      case 'IS EMPTY':
        return `${col} is null`;
      case 'IS NOT EMPTY':
        return `${col} is not null`;
      case 'IN':
      case 'NOT IN': {
        if (!Array.isArray(c.value) || c.value.length === 0 || c.value.length > 1000) {
          throw invalidField(`${at}/value`, `must be an array of 1 to 1000 values for ${c.operator}`);
        }
        const values = c.value.map((v, j) => scalar(def, v, `${at}/value/${j}`));
        const p = bind(values, `${cast}[]`);
        return c.operator === 'IN' ? `${col} = any(${p})` : `not (${col} = any(${p}))`;
      }
      case 'BETWEEN': {
        if (!Array.isArray(c.value) || c.value.length !== 2) throw invalidField(`${at}/value`, 'must be an array [from, to] for BETWEEN');
        const [from, to] = c.value.map((v, j) => scalar(def, v, `${at}/value/${j}`));
        return `${rangeExpr(c.field, def)} between ${bind(from, cast)} and ${bind(to, cast)}`;
      }
      default: {
        if (Array.isArray(c.value)) throw invalidField(`${at}/value`, `must be a single value for ${c.operator}`);
        const v = scalar(def, c.value, `${at}/value`);
        const op = c.operator === '==' ? '=' : c.operator === '!=' ? '<>' : c.operator;
        // `!=` on a nullable column also matches rows where it is empty.
        if (c.operator === '!=' && def.nullable) return `(${col} is null or ${col} <> ${bind(v, cast)})`;
        if (def.type !== 'date') return `${col} ${op} ${bind(v, cast)}`;
        const expr = rangeExpr(c.field, def);
        // An empty date compares as 'infinity' in the indexed expression: keep it out of lower bounds.
        const notEmpty = def.nullable && (op === '>' || op === '>=') ? ` and ${col} is not null` : '';
        return `${expr} ${op} ${bind(v, cast)}${notEmpty}`;
      }
    }
  });
}

/**
 * Expression a date condition compares: the sort expression (so one index serves the sort and
 * the ranges); identical to the column for every finite bound.
 */
function rangeExpr(field: string, def: FieldDef): string {
  return (POST_SORT_FIELDS as readonly string[]).includes(field) ? sortExpression(field as PostSortField) : def.column;
}

/** Sort key expression of a field: empty dates sort after every date (ascending). */
export function sortExpression(field: PostSortField): string {
  const col = POST_FILTER_FIELDS[field]!.column;
  return POST_FILTER_FIELDS[field]!.nullable ? `coalesce(${col}, 'infinity'::timestamptz)` : col;
}

/**
 * ORDER BY and the keyset boundary for `sort` (+ `id` as the tie-breaker, in the direction of the
 * last sort key). `after` holds the boundary row's key values (timestamps as text, then id);
 * `reverse` walks backwards (previous page).
 */
export function keyset(sort: PostSort[], after: unknown[] | undefined, reverse: boolean, bind: Bind): { orderBy: string; boundary: string | null } {
  const keys = sort.map((s) => ({ expr: sortExpression(s.field), desc: s.direction === 'desc', cast: 'timestamptz' }));
  keys.push({ expr: 'id', desc: keys.length ? keys[keys.length - 1]!.desc : false, cast: 'uuid' });
  const eff = keys.map((k) => ({ ...k, desc: reverse ? !k.desc : k.desc }));
  const orderBy = eff.map((k) => `${k.expr} ${k.desc ? 'desc' : 'asc'}`).join(', ');
  if (!after) return { orderBy, boundary: null };
  if (after.length !== keys.length || after.some((v) => typeof v !== 'string')) throw invalidField('/paginationToken', 'is malformed');
  const placeholders = eff.map((k, i) => bind(after[i], k.cast));
  const ors: string[] = [];
  for (let i = 0; i < eff.length; i++) {
    const eqs = eff.slice(0, i).map((k, j) => `${k.expr} = ${placeholders[j]}`);
    eqs.push(`${eff[i]!.expr} ${eff[i]!.desc ? '<' : '>'} ${placeholders[i]}`);
    ors.push(`(${eqs.join(' and ')})`);
  }
  return { orderBy, boundary: `(${ors.join(' or ')})` };
}
