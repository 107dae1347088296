/**
 * The OpenSearch engine of the v2 discovery search (DISCOVERY_ENGINE=opensearch, docs/DISCOVERY.md
 * "Engines"): the condition tree as OpenSearch query DSL, the matches' ids and exact total, and
 * the indexer that fills the indexes from the ds_* tables (bulk API, alias swap) and keeps them
 * in step with opt-outs.
 *
 * The query mirrors db/discoverySearch.ts `whereSql` node for node: the same negation normal form,
 * the same grouping of a company search's person conditions into one `nested` query (met by the
 * same person), leaves with the compiler's semantics (a missing value matches no positive
 * operator and every negative one: `must_not` of a positive query is exactly that).
 */
import { Client } from '@opensearch-project/opensearch';
import { scalarValue, type CatalogField, type Condition, type FieldCatalog, type FieldType } from '../domain/conditions.js';
import { PERSON_PREFIX, companySearchCatalog, contactSearchCatalog, personCatalog, type DiscoveryEntity } from '../domain/discoveryCatalog.js';
import type { DiscoveryConfig } from '../domain/config.js';
import { COMPANY_MAPPINGS, INDEX_SETTINGS, LOAD_SETTINGS, PEOPLE_MAPPINGS } from './opensearchIndex.js';
import type { Queryable } from './pool.js';
import { companySearchColumns, contactSearchColumns, personColumns } from './discoveryColumns.js';
import type { SqlField } from './conditionSql.js';

type Query = Record<string, unknown>;

export const aliasOf = (prefix: string, entity: DiscoveryEntity) => `${prefix}-${entity === 'contact' ? 'people' : 'companies'}`;

const clients = new Map<string, Client>();
/** One client per URL (it keeps its connections). */
export function openSearchClient(url: string): Client {
  let c = clients.get(url);
  if (!c) clients.set(url, (c = new Client({ node: url, requestTimeout: 30_000 })));
  return c;
}

// ---------------------------------------------------------------------------------------------
// conditions → query DSL

const isGroup = (n: unknown): n is { operator: string; conditions: unknown[] } => typeof n === 'object' && n !== null && 'conditions' in n;
const personOnly = (node: unknown): boolean =>
  isGroup(node) ? node.conditions.every(personOnly) : typeof (node as { field?: unknown }).field === 'string' && (node as { field: string }).field.startsWith(PERSON_PREFIX);
const normOp = (op: string) => op.trim().toUpperCase().replace(/\s+/g, ' ');

const not = (q: Query): Query => ({ bool: { must_not: [q] } });
const all = (qs: Query[]): Query => (qs.length === 1 ? qs[0]! : { bool: { filter: qs } });
const any = (qs: Query[]): Query => (qs.length === 1 ? qs[0]! : { bool: { should: qs, minimum_should_match: 1 } });

/** A SQL `LIKE` pattern (`%`, `_`, `\` escapes) as a Lucene wildcard (`*`, `?`, `\` escapes). */
export function likeToWildcard(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) {
      const lit = pattern[++i]!;
      out += lit === '*' || lit === '?' || lit === '\\' ? `\\${lit}` : lit;
    } else if (ch === '%') out += '*';
    else if (ch === '_') out += '?';
    else out += ch === '*' || ch === '?' || ch === '\\' ? `\\${ch}` : ch;
  }
  return out;
}

/** Microseconds since the epoch, as a decimal string (exact past 2^53). */
const micros = (iso: string) => (BigInt(Date.parse(iso)) * 1000n).toString();

/** An operand as indexed: numbers as numbers, dates as microseconds, strings through the field's match key. */
function operand(field: CatalogField, v: unknown): unknown {
  const s = scalarValue(field.type as Exclude<FieldType, 'multi'>, v, '', field.cast);
  if (field.type === 'date') return micros(s as string);
  return field.matchKey && typeof s === 'string' ? field.matchKey(s) : s;
}

/** The positive query of a leaf (validated before by the SQL compiler's pass, compileV2). */
function leafQuery(catalog: FieldCatalog, leaf: Condition, base: string): Query {
  const field = catalog.get(leaf.field)!;
  const name = base + field.path;
  const op = normOp(leaf.operator);
  const exists = { exists: { field: name } };
  if (op === 'IS EMPTY' || op === 'IS NOT EMPTY') {
    const empty = field.type === 'string' ? any([not(exists), { term: { [name]: '' } }]) : not(exists);
    return op === 'IS EMPTY' ? empty : not(empty);
  }
  const value = leaf.value;
  if (field.type === 'multi') {
    const list = (value as unknown[]).map(String);
    if (op === 'ALL') return all(list.map((x) => ({ term: { [name]: x } })));
    const q = { terms: { [name]: list } };
    return op === 'IN' ? q : not(q);
  }
  switch (op) {
    case '==':
      return { term: { [name]: operand(field, value) } };
    case '!=':
      return not({ term: { [name]: operand(field, value) } });
    case '>':
      return { range: { [name]: { gt: operand(field, value) } } };
    case '>=':
      return { range: { [name]: { gte: operand(field, value) } } };
    case '<':
      return { range: { [name]: { lt: operand(field, value) } } };
    case '<=':
      return { range: { [name]: { lte: operand(field, value) } } };
    case 'BETWEEN': {
      const [lo, hi] = value as unknown[];
      return { range: { [name]: { gte: operand(field, lo), lte: operand(field, hi) } } };
    }
    case 'IN':
    case 'NOT IN': {
      const q = { terms: { [name]: (value as unknown[]).map((x) => operand(field, x)) } };
      return op === 'IN' ? q : not(q);
    }
    case 'LIKE':
    case 'NOT LIKE': {
      // ILIKE: case-insensitive over the whole value, as the wildcard query is
      const q = { wildcard: { [name]: { value: likeToWildcard(String(scalarValue('string', value, ''))), case_insensitive: true } } };
      return op === 'LIKE' ? q : not(q);
    }
  }
  throw new Error(`unsupported operator ${op}`);
}

const nestedPeople = (q: Query): Query => ({ nested: { path: 'people', query: q } });

/**
 * The query of a node under `negated` (whereSql's twin). `base` is `people.` inside a company's
 * nested person query.
 */
function nodeQuery(entity: DiscoveryEntity | 'person', node: unknown, negated: boolean): Query {
  const catalog = entity === 'contact' ? contactSearchCatalog : entity === 'person' ? personCatalog : companySearchCatalog;
  const base = entity === 'person' ? 'people.' : '';
  if (!isGroup(node)) {
    if (entity === 'company' && personOnly(node)) {
      const inner = nestedPeople(nodeQuery('person', node, false));
      return negated ? not(inner) : inner;
    }
    const q = leafQuery(catalog, node as Condition, base);
    return negated ? not(q) : q;
  }
  const op = node.operator.toUpperCase();
  const conj = op === 'AND' ? !negated : negated;
  const kidNegated = op === 'NOT' ? !negated : negated;
  const parts: Query[] = [];
  let kids = node.conditions;
  if (entity === 'company') {
    const persons = kids.filter(personOnly);
    kids = kids.filter((k) => !personOnly(k));
    if (persons.length) {
      const sub = nestedPeople(nodeQuery('person', { operator: op === 'OR' ? 'OR' : 'AND', conditions: persons }, false));
      parts.push(kidNegated ? not(sub) : sub);
    }
  }
  for (const k of kids) parts.push(nodeQuery(entity, k, kidNegated));
  return conj ? all(parts) : any(parts);
}

/** The query of a v2 search's `conditions` AND `groupedCondition` (match_all without any). */
export function openSearchQuery(entity: DiscoveryEntity, input: { conditions?: unknown[]; groupedCondition?: unknown }): Query {
  const kids = [...(input.conditions ?? []), ...(input.groupedCondition ? [input.groupedCondition] : [])];
  // scoring is not needed: every clause is a filter
  return kids.length ? { bool: { filter: [nodeQuery(entity, { operator: 'AND', conditions: kids }, false)] } } : { match_all: {} };
}

/**
 * One page of match ids in id order (the same keyset as PostgreSQL's: `search_after` on the
 * unique id, descending for a `prev` page) and the exact total (`track_total_hits: true`).
 */
export async function searchIds(
  cfg: Pick<DiscoveryConfig, 'opensearchUrl' | 'indexPrefix'>,
  entity: DiscoveryEntity,
  input: { conditions?: unknown[]; groupedCondition?: unknown },
  page: { take: number; after?: string; dir: 'asc' | 'desc' },
): Promise<{ total: number; ids: string[] }> {
  const res = await openSearchClient(cfg.opensearchUrl).search({
    index: aliasOf(cfg.indexPrefix, entity),
    body: {
      query: openSearchQuery(entity, input),
      size: page.take,
      track_total_hits: true,
      _source: false,
      sort: [{ id: page.dir }],
      ...(page.after !== undefined ? { search_after: [page.after] } : {}),
    },
  });
  const hits = res.body.hits;
  const total = typeof hits.total === 'number' ? hits.total : (hits.total?.value ?? 0);
  return { total, ids: hits.hits.map((h) => String(h.sort![0])) };
}

// ---------------------------------------------------------------------------------------------
// indexing

/** Documents per bulk request (a few MB each). */
const BATCH = 2000;

/** The select list of a catalog's filter values (`"<path>"` each), as the index stores them. */
function docSelect(fields: SqlField[]): string {
  return fields
    .map((f) => {
      const expr = f.type === 'date' ? `(extract(epoch from ${f.sql}) * 1000000)::bigint::text` : f.sql;
      return `${expr} as "${f.path}"`;
    })
    .join(', ');
}

/** A row of filter values as a document: nested objects per path, no empty values. */
function docOf(row: Record<string, unknown>, fields: CatalogField[], docId?: string): Record<string, unknown> {
  const doc: Record<string, Record<string, unknown>> & { id?: string } = docId ? { id: docId } as never : {};
  for (const f of fields) {
    let v = row[f.path];
    if (v === null || v === undefined) continue;
    if (f.type === 'number') v = Number(v);
    if (f.type === 'multi') {
      v = (v as unknown[]).filter((x) => x !== null);
      if (!(v as unknown[]).length) continue;
    }
    const [group, name] = f.path.split('.') as [string, string];
    (doc[group] ??= {})[name] = v;
  }
  return doc;
}

const companyFields = companySearchColumns.fields.filter((f) => !f.path.startsWith(PERSON_PREFIX));

/** Reads documents of `entity` from the ds_* tables by id (all of them in id order, or the named ones). Raw SQL: the catalog's expressions. */
async function* documents(db: Queryable, entity: DiscoveryEntity, only?: string[]): AsyncGenerator<Record<string, unknown>[]> {
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const idFilter = (alias: string) => (only ? `${alias}.id = any($2::uuid[])` : 'true');
    const params: unknown[] = only ? [after, only] : [after];
    if (entity === 'contact') {
      // raw SQL: the catalog's filter expressions over the search's own FROM.
      const r = await db.query<Record<string, unknown>>(
        `select p.id::text as id, ${docSelect(contactSearchColumns.fields)} from ds_people p left join ds_companies c on c.id = p.company_id
         where p.id > $1::uuid and ${idFilter('p')} order by p.id limit ${BATCH}`,
        params,
      );
      if (!r.rows.length) return;
      yield r.rows.map((row) => docOf(row, contactSearchCatalog.fields, String(row.id)));
      after = String(r.rows[r.rows.length - 1]!.id);
    } else {
      // raw SQL: the catalog's filter expressions (companies, then their people as nested documents).
      const r = await db.query<Record<string, unknown>>(
        `select c.id::text as id, ${docSelect(companyFields)} from ds_companies c where c.id > $1::uuid and ${idFilter('c')} order by c.id limit ${BATCH}`,
        params,
      );
      if (!r.rows.length) return;
      const ids = r.rows.map((row) => String(row.id));
      // raw SQL: the person catalog's filter expressions of these companies' people.
      const ppl = await db.query<Record<string, unknown>>(
        `select p.company_id::text as company_id, ${docSelect(personColumns.fields)} from ds_people p where p.company_id = any($1::uuid[]) order by p.id`,
        [ids],
      );
      const byCompany = new Map<string, Record<string, unknown>[]>();
      for (const row of ppl.rows) {
        const k = String(row.company_id);
        let list = byCompany.get(k);
        if (!list) byCompany.set(k, (list = []));
        list.push(docOf(row, personCatalog.fields));
      }
      yield r.rows.map((row) => ({ ...docOf(row, companyFields, String(row.id)), people: byCompany.get(String(row.id)) ?? [] }));
      after = ids[ids.length - 1]!;
    }
  }
}

async function bulkIndex(client: Client, index: string, docs: Record<string, unknown>[], refresh?: boolean): Promise<void> {
  if (!docs.length) return;
  const body = docs.flatMap((d) => [{ index: { _index: index, _id: d.id } }, d]);
  const res = await client.bulk({ body, ...(refresh ? { refresh: 'wait_for' as const } : {}) });
  if (res.body.errors) {
    const failed = res.body.items.find((i) => Object.values(i)[0]?.error);
    throw new Error(`OpenSearch bulk indexing into ${index} failed: ${JSON.stringify(failed ? Object.values(failed)[0]!.error : res.body.items[0])}`);
  }
}

export interface ReindexReport {
  index: Record<'people' | 'companies', { name: string; documents: number; ms: number }>;
}

/**
 * Builds fresh indexes from the ds_* tables and swaps each alias onto its new index in one
 * atomic alias update, then deletes the old index: searches read the old index until the new one
 * is complete, refreshed and replicated.
 */
export async function reindexDiscovery(db: Queryable, cfg: Pick<DiscoveryConfig, 'opensearchUrl' | 'indexPrefix'>): Promise<ReindexReport> {
  const client = openSearchClient(cfg.opensearchUrl);
  const out = {} as ReindexReport['index'];
  for (const entity of ['contact', 'company'] as const) {
    const t0 = Date.now();
    const alias = aliasOf(cfg.indexPrefix, entity);
    const name = `${alias}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    await client.indices.create({
      index: name,
      body: { settings: { ...INDEX_SETTINGS, ...LOAD_SETTINGS }, mappings: entity === 'contact' ? PEOPLE_MAPPINGS : COMPANY_MAPPINGS } as never,
    });
    let n = 0;
    let old: string[];
    try {
      for await (const docs of documents(db, entity)) {
        await bulkIndex(client, name, docs);
        n += docs.length;
      }
      await client.indices.putSettings({ index: name, body: { index: { refresh_interval: INDEX_SETTINGS.refresh_interval, number_of_replicas: INDEX_SETTINGS.number_of_replicas } } });
      await client.indices.refresh({ index: name });
      await client.cluster.health({ index: name, wait_for_status: INDEX_SETTINGS.number_of_replicas > 0 ? 'green' : 'yellow', timeout: '60s' });
      old = await previousIndexes(client, alias);
      await client.indices.updateAliases({
        body: { actions: [...old.map((index) => ({ remove: { index, alias } })), { add: { index: name, alias } }] },
      });
    } catch (e) {
      // the alias still names the previous index: the half-built one goes
      await client.indices.delete({ index: name }).catch(() => {});
      throw e;
    }
    for (const index of old) await client.indices.delete({ index });
    out[entity === 'contact' ? 'people' : 'companies'] = { name, documents: n, ms: Date.now() - t0 };
  }
  return { index: out };
}

async function previousIndexes(client: Client, alias: string): Promise<string[]> {
  const exists = await client.indices.existsAlias({ name: alias });
  if (!exists.body) return [];
  return Object.keys((await client.indices.getAlias({ name: alias })).body);
}

/**
 * Brings the named records' documents in step with the ds_* tables (after an opt-out or an
 * update): a person or company still there is re-indexed, one gone is deleted; the companies of
 * changed people are re-indexed too (their nested people). Visible to searches when it returns.
 */
export async function syncDiscoveryDocuments(
  db: Queryable,
  cfg: Pick<DiscoveryConfig, 'opensearchUrl' | 'indexPrefix'>,
  changed: { personIds: string[]; companyIds: string[] },
): Promise<void> {
  const client = openSearchClient(cfg.opensearchUrl);
  for (const [entity, ids] of [['contact', changed.personIds], ['company', changed.companyIds]] as const) {
    if (!ids.length) continue;
    const alias = aliasOf(cfg.indexPrefix, entity);
    const seen = new Set<string>();
    for await (const docs of documents(db, entity, ids)) {
      docs.forEach((d) => seen.add(String(d.id)));
      await bulkIndex(client, alias, docs, true);
    }
    const gone = ids.filter((id) => !seen.has(id));
    if (gone.length) {
      const res = await client.bulk({ body: gone.map((id) => ({ delete: { _index: alias, _id: id } })), refresh: 'wait_for' });
      const failed = res.body.items.find((i) => { const r = Object.values(i)[0]; return r?.error && r.status !== 404; });
      if (failed) throw new Error(`OpenSearch delete from ${alias} failed: ${JSON.stringify(Object.values(failed)[0]!.error)}`);
    }
  }
}

/**
 * At start (`npm start`): builds the indexes when an alias is missing or the dataset was just
 * (re)loaded, so an OpenSearch engine never answers from no index or a stale one.
 */
export async function ensureDiscoveryIndex(db: Queryable, cfg: Pick<DiscoveryConfig, 'opensearchUrl' | 'indexPrefix'>, opts: { datasetChanged: boolean }): Promise<ReindexReport | null> {
  const client = openSearchClient(cfg.opensearchUrl);
  const missing = await Promise.all((['contact', 'company'] as const).map(async (e) => !(await client.indices.existsAlias({ name: aliasOf(cfg.indexPrefix, e) })).body));
  if (!opts.datasetChanged && !missing.some(Boolean)) return null;
  return reindexDiscovery(db, cfg);
}
