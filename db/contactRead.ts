/**
 * Reading contacts: the workspace's field catalog, full Contact items by id, and the one list
 * query behind filter-contacts, by-segment and unique-values (conditions → SQL through
 * domain/conditions.ts, keyset pages through domain/pagination.ts). Only active contacts are
 * ever returned.
 */
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import type { TObject } from '@sinclair/typebox';
import { CompanySummary, ContactSchema, type ContactJson } from '../domain/contactShape.js';
import DataLoader from 'dataloader';
import { sql } from 'kysely';
import { outputValue } from '../domain/conditions.js';
import { compileFields, compileGroupBy, compileSort, compileWhere, keysetPredicate, reverseOrder, type CompiledWhere } from './conditionSql.js';
import { contactCatalog, type ContactCatalog, type ContactField } from '../domain/contactCatalog.js';
import { likeContains } from '../domain/like.js';
import { contactColumns, joinSql } from './contactColumns.js';
import { decodeToken, pageMeta, queryFingerprint } from '../domain/pagination.js';
import { isUuid } from '../domain/ids.js';
import { CustomFieldDefinition } from './contacts.js';
import type { Queryable } from './pool.js';
import { assertWorkspaceScope, inWorkspaceScope } from './tenancy.js';
import { BATCH_PER_TURN, compileSql, runQuery, typedQueries } from './sqlFragments.js';

export async function loadContactCatalog(q: Queryable, workspaceId: string): Promise<ContactCatalog> {
  assertWorkspaceScope(workspaceId);
  const defs = await runQuery(
    q,
    typedQueries<InferKyselyDB<typeof CustomFieldDefinition>>()
      .selectFrom('custom_field_definitions')
      .select(['id', 'label', 'type', 'options'])
      .orderBy('created_at')
      .orderBy('id'),
  );
  return contactCatalog(defs);
}

/**
 * Null vs absent (issue 12, decided once): a contact carries every property of its shape; an
 * unknown value is `null` (lists `[]`), `company` is `null` without a primary company, and
 * `customFields` lists every custom field of the workspace (`null` when unset). A `fields`
 * projection carries the same values for the paths it names (listContacts).
 */
const CUSTOM_FIELDS_SQL = `(select coalesce(jsonb_object_agg(d.id::text, c.custom_fields -> d.id::text), '{}'::jsonb) from custom_field_definitions d)`;

/** A timestamp as `Date.prototype.toISOString` writes it (UTC, milliseconds truncated, as pg's Date parsing does). */
const isoSql = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The SQL of the properties of the Contact shape the field catalog does not list (ids, links,
 * the custom fields object), by path, and of `company.id`, which is the contact's link (the
 * catalog's reads the joined row); every other property's SQL is its catalog field's column
 * (db/contactColumns.ts), found by the field's output path; `company` embeds CompanySummary.
 */
const SHAPE_ONLY_SQL: Record<string, string> = {
  id: 'c.id',
  companies: 'c.company_ids',
  primaryCompanyId: 'c.primary_company_id',
  'company.id': 'c.primary_company_id',
  customFields: CUSTOM_FIELDS_SQL,
};

const CATALOG_BY_OUTPUT = new Map(contactColumns(contactCatalog([])).fields.map((f) => [f.output.join('.'), f]));

/**
 * `json_build_object` of an object schema's properties, in the schema's order: the keys come from
 * the schema (domain/contactShape.ts), so a property added there is built here once it has a
 * column. A property with no SQL throws at module load rather than answering without it.
 */
function jsonObjectSql(schema: TObject, prefix: string[] = []): string {
  const members = Object.keys(schema.properties).map((key) => {
    const path = [...prefix, key].join('.');
    if (path === 'company') return `'company', case when c.primary_company_id is not null then ${jsonObjectSql(CompanySummary, ['company'])} end`;
    const field = CATALOG_BY_OUTPUT.get(path);
    const value = SHAPE_ONLY_SQL[path] ?? (field && (field.type === 'date' ? isoSql(field.sql) : (field.selectSql ?? field.sql)));
    if (!value) throw new Error(`Contact property ${path} has no column (db/contactRead.ts SHAPE_ONLY_SQL or db/contactColumns.ts)`);
    return `'${key}', ${value}`;
  });
  return `json_build_object(${members.join(', ')})`;
}

/** The Contact's JSON as PostgreSQL builds it; generated once, at module load. Exported for the test of its keys. */
export const CONTACT_JSON_SQL = jsonObjectSql(ContactSchema);

/**
 * Active contacts of the scope's workspace (row-level security) with their primary company and sources, each row one `json`
 * value in the shape of {@link ContactJson} (properties in its order, built by CONTACT_JSON_SQL): PostgreSQL builds it, so the
 * hot read parses one JSON column instead of 19 typed ones (type parsers, a Date per timestamp,
 * array parsing, then mapping). The id condition is appended.
 */
const SELECT_ACTIVE_CONTACTS = `select ${CONTACT_JSON_SQL} as contact
     from contacts c left join companies co on co.id = c.primary_company_id
     where c.status = 'active' and `;

/** Active contacts of the workspace by id, in the order of `ids`; unknown/foreign/deleted ids are absent. Raw SQL: SELECT_ACTIVE_CONTACTS builds the JSON. */
export async function fetchContacts(q: Queryable, workspaceId: string, ids: string[]): Promise<ContactJson[]> {
  const valid = [...new Set(ids.filter(isUuid).map((s) => s.toLowerCase()))];
  if (!valid.length) return [];
  assertWorkspaceScope(workspaceId);
  const r = await q.query<{ contact: ContactJson }>({ name: 'fetch-contacts', text: SELECT_ACTIVE_CONTACTS + 'c.id = any($1::uuid[])', values: [valid] });
  const byId = new Map(r.rows.map(({ contact }) => [contact.id, contact]));
  return valid.map((id) => byId.get(id)).filter((c): c is ContactJson => !!c);
}

/**
 * One active contact of the workspace (a turn of GET /contacts/{id} with one read). A named
 * statement with a scalar id: PostgreSQL keeps one generic plan per connection (for one id, the
 * unnamed `any($2)` array statement, planned anew on every call, took ~3x the round trip). Raw SQL: SELECT_ACTIVE_CONTACTS builds the
 * JSON in PostgreSQL, the hot path's cheapest form (docs/ARCHITECTURE.md "The hot path").
 */
export async function fetchContact(q: Queryable, workspaceId: string, id: string): Promise<ContactJson | undefined> {
  if (!isUuid(id)) return undefined;
  assertWorkspaceScope(workspaceId);
  const r = await q.query<{ contact: ContactJson }>({ name: 'fetch-contact', text: SELECT_ACTIVE_CONTACTS + 'c.id = $1', values: [id.toLowerCase()] });
  return r.rows[0]?.contact;
}

/** Reads one active contact of a workspace by id; see `createContactReader`. */
export type ContactReader = (workspaceId: string, id: string) => Promise<ContactJson | undefined>;

/**
 * `fetchContact` for GET /contacts/{id} under load: the reads of the requests that reach it in one
 * turn of the event loop go to PostgreSQL as one `fetchContacts` per workspace (DataLoader, batched at
 * `setImmediate`). Each statement is a socket write that wakes a backend on the other core, the
 * largest single cost of the hot path on this VM (docs/ARCHITECTURE.md "The hot path"); batched,
 * the requests of a turn share one. Nothing is cached: every read sees what was committed when
 * its batch ran, which is after the request arrived. A turn with one read uses `fetchContact`.
 */
export function createContactReader(q: Queryable): ContactReader {
  const loader = new DataLoader<{ workspaceId: string; id: string }, ContactJson | undefined>(
    async (keys) => {
      const idsByWorkspace = new Map<string, string[]>();
      for (const { workspaceId, id } of keys) idsByWorkspace.get(workspaceId)?.push(id) ?? idsByWorkspace.set(workspaceId, [id]);
      const byWorkspace = new Map<string, Map<string, ContactJson>>();
      await Promise.all(
        [...idsByWorkspace].map(async ([workspaceId, ids]) => {
          // A batch holds the reads of several requests: each workspace's statement runs in that workspace's scope.
          const contacts = await inWorkspaceScope(workspaceId, async () => (ids.length === 1 ? [await fetchContact(q, workspaceId, ids[0]!)] : await fetchContacts(q, workspaceId, ids)));
          byWorkspace.set(workspaceId, new Map(contacts.filter((c) => c !== undefined).map((c) => [c.id, c])));
        }),
      );
      return keys.map(({ workspaceId, id }) => byWorkspace.get(workspaceId)!.get(id));
    },
    BATCH_PER_TURN,
  );
  return (workspaceId, id) => (isUuid(id) ? loader.load({ workspaceId, id: id.toLowerCase() }) : Promise.resolve(undefined));
}

export interface ListInput {
  fields?: string[];
  conditions?: unknown;
  groupedCondition?: unknown;
  limit?: number;
  paginationToken?: string;
  sort?: unknown;
}

export interface ListOptions {
  workspaceId: string;
  catalog: ContactCatalog;
  secret: string;
  /** Extra restriction (segment membership). */
  scope?: CompiledWhere;
  /** What the token is bound to beside the body (e.g. the segment id). */
  scopeKey?: string;
}

export interface Page {
  data: Record<string, unknown>[];
  meta: { totalRecords: number; previousToken: string; nextToken: string };
}

/** One page of active contacts matching the body, with keyset tokens bound to the query. */
export async function listContacts(q: Queryable, body: ListInput, opts: ListOptions): Promise<Page> {
  const catalog = contactColumns(opts.catalog);
  const { scope } = opts;
  const where = compileWhere(catalog, body);
  const sort = compileSort(catalog, body.sort);
  const projection = body.fields ? compileFields(catalog, body.fields) : null;
  const limit = body.limit ?? 100;
  const fingerprint = queryFingerprint(opts.workspaceId, {
    scope: opts.scopeKey ?? 'all',
    conditions: body.conditions ?? null,
    groupedCondition: body.groupedCondition ?? null,
    sort: body.sort ?? null,
    fields: body.fields ?? null,
  });
  const token = body.paginationToken ? decodeToken(opts.secret, fingerprint, body.paginationToken) : undefined;
  const joins = new Set([...(scope?.joins ?? []), ...where.joins, ...sort.joins, ...(projection?.joins ?? [])]);
  assertWorkspaceScope(opts.workspaceId);
  const filter = sql`c.status = 'active' and (${scope?.sql ?? sql`true`}) and (${where.sql})`;
  const keyset = token ? keysetPredicate(sort, token.after, token.dir) : sql`true`;
  // a projection naming company.* paths answers `company: null` for a contact without one, like the full contact
  const companyPaths = projection?.fields.some((f) => f.output[0] === 'company') ?? false;
  const select = sql.join([projection?.select ?? sql`c.id as "id"`, sort.select, ...(companyPaths ? [sql`c.primary_company_id as "primaryCompanyId"`] : [])]);
  // Raw SQL: composed of the condition compiler's fragments; joins are catalog code.
  const rowsSql = sql`select ${select} from contacts c ${sql.raw(joinSql(joins))} where ${filter} and (${keyset})
     order by ${token?.dir === 'prev' ? reverseOrder(sort) : sort.orderBy} limit ${sql.lit(limit + 1)}`;
  // Joins only matter for the count when a condition uses them.
  const countJoins = new Set([...(scope?.joins ?? []), ...where.joins]);
  const [rows, count] = await Promise.all([
    q.query<Record<string, unknown>>(compileSql(rowsSql)),
    q.query<{ n: number }>(compileSql(sql`select count(*)::int as n from contacts c ${sql.raw(joinSql(countJoins))} where ${filter}`)),
  ]);
  const page = pageMeta({
    secret: opts.secret,
    fingerprint,
    rows: rows.rows,
    limit,
    totalRecords: count.rows[0]!.n,
    keyOf: sort.keyOf,
    from: token,
  });
  if (projection)
    return {
      data: page.data.map((r) => {
        const item = projection.shape(r);
        if (companyPaths && r.primaryCompanyId == null) item.company = null;
        return item;
      }),
      meta: page.meta,
    };
  const full = await fetchContacts(q, opts.workspaceId, page.data.map((r) => String(r.id)));
  return { data: full as unknown as Record<string, unknown>[], meta: page.meta };
}

/** Distinct values of one field over the matching active contacts, most frequent first. Raw SQL: composed of the condition compiler's fragments. */
export async function uniqueValues(
  q: Queryable,
  body: { groupByField: string; conditions?: unknown; groupedCondition?: unknown; limit?: number },
  opts: { workspaceId: string; catalog: ContactCatalog },
): Promise<{ value: unknown; count: number }[]> {
  assertWorkspaceScope(opts.workspaceId);
  const catalog = contactColumns(opts.catalog);
  const where = compileWhere(catalog, body);
  const group = compileGroupBy(catalog, body.groupByField);
  const joins = new Set([...where.joins, ...group.joins]);
  const r = await q.query<{ value: unknown; count: number }>(
    compileSql(sql`select v as value, count(*)::int as count
     from (select ${group.sql} as v from contacts c ${sql.raw(joinSql(joins))}
           where c.status = 'active' and (${where.sql})) t
     where v is not null
     group by v order by count(*) desc, v asc limit ${sql.lit(body.limit ?? 100)}`),
  );
  const type = group.field.type === 'multi' ? 'string' : group.field.type;
  return r.rows.map((row) => ({ value: outputValue(type, row.value), count: row.count }));
}

/**
 * The distinct values the workspace's contacts hold in `field` (most frequent first, at most
 * `limit`), narrowed to those containing `search` (lower-cased) when given: a string field is filtered
 * in the query, other types after it. Empty strings are left out.
 */
export async function fieldValueOptions(
  q: Queryable,
  opts: { workspaceId: string; catalog: ContactCatalog; field: ContactField; search?: string; limit: number },
): Promise<{ label: string; value: unknown }[]> {
  const { field, search } = opts;
  // In SQL for a field that supports filtering; for one that does not (company.id) only the check below applies.
  const like = search && field.type === 'string' && field.filteringSupported ? likeContains(search) : undefined;
  const values = await uniqueValues(
    q,
    { groupByField: field.path, conditions: like ? [{ field: field.path, operator: 'LIKE', value: like }] : undefined, limit: opts.limit },
    opts,
  );
  return values
    .filter((v) => v.value !== '' && (!search || String(v.value).toLowerCase().includes(search)))
    .map((v) => ({ label: String(v.value), value: v.value }));
}
