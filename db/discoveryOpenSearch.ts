/**
 * The OpenSearch engine of the v2 discovery search (DISCOVERY_ENGINE=opensearch, docs/DISCOVERY.md
 * "Engines"): the condition tree as OpenSearch query DSL, the matches' ids and exact total, and
 * the indexer that fills the indexes from the ds_* tables (bulk API, alias swap) and keeps them
 * in step with opt-outs.
 *
 * The query compiles the same rewritten tree as db/discoveryWhere.ts `whereSql`
 * (domain/discoveryConditionTree.ts: negation normal form, a company search's person conditions
 * as one match, here a `nested` query met by the same person); leaves have the compiler's
 * semantics (a missing value matches no positive operator and every negative one: `must_not` of a
 * positive query is exactly that).
 */
import { Client, errors } from '@opensearch-project/opensearch';
import { SearchUnavailableError } from '../domain/errors.js';
import { scalarValue, type CatalogField, type Condition, type FieldCatalog, type FieldType } from '../domain/conditions.js';
import {
  PERSON_PREFIX,
  companySearchCatalog,
  contactSearchCatalog,
  personCatalog,
  type DiscoveryEntity,
} from '../domain/discoveryCatalog.js';
import { type VerifiedFilters } from '../domain/verifiedSearchInput.js';
import { likeContains } from '../domain/like.js';
import { normalForm, rootGroup, type NormalNode } from '../domain/discoveryConditionTree.js';
import type { DiscoveryConfig } from '../domain/config.js';
import { INDEX_LAYOUT, INDEX_SETTINGS, LOAD_SETTINGS, MAPPING_VERSION } from './opensearchIndex.js';
import type { Queryable } from './pool.js';
import { SENIORITY_RANK_SQL, companySearchColumns, contactSearchColumns, personColumns } from './discoveryColumns.js';
import type { SqlField } from './conditionSql.js';

type Query = Record<string, unknown>;

export const aliasOf = (prefix: string, entity: DiscoveryEntity) => `${prefix}-${entity === 'contact' ? 'people' : 'companies'}`;

const clients = new Map<string, Client>();
/**
 * One client per URL (it keeps its connections). `url` may name several nodes, separated by
 * commas: a request that meets a connection error or a 502/503/504 on one node is sent to the next
 * (the client's `maxRetries`, 3), and the failed node is left out until it answers a ping again.
 */
export function openSearchClient(url: string): Client {
  let c = clients.get(url);
  if (!c) clients.set(url, (c = new Client({ nodes: url.split(','), requestTimeout: 30_000 })));
  return c;
}

/** Seconds a client is told to wait after the engine failed to answer (Retry-After). */
const SEARCH_RETRY_AFTER_S = 5;
/**
 * Pauses before the retries of a search the cluster could not answer whole: a node lost mid-way,
 * a cluster manager being elected again (about 1–3 s when the elected one dies), shard copies
 * being promoted. Bounded: after them the API answers 503 rather than hold the request.
 */
const SEARCH_RETRY_PAUSES_MS = [200, 500, 1000];

/** A search answer that left out shards (by a cluster's default, or a timeout): never a whole answer. */
class PartialResultError extends Error {}

/** Failures a retry may cure: no connection, a node going away, shards not there for a moment. */
function transient(e: unknown): boolean {
  return (
    e instanceof PartialResultError ||
    e instanceof errors.ConnectionError ||
    e instanceof errors.NoLivingConnectionsError ||
    (e instanceof errors.ResponseError && [502, 503, 504].includes(e.statusCode ?? 0))
  );
}

/**
 * A search on the engine, whole or not at all. `allow_partial_search_results: false`: a search
 * that cannot reach a copy of every shard is an error, not a 200 from the shards that answered
 * (OpenSearch's default would answer it with `_shards.successful < total` and fewer ids); an
 * answer that still left shards out is refused too. Each attempt goes to the next node of
 * OPENSEARCH_URL on a connection error or 502/503/504 (the client's own retries); a search that
 * still fails so is tried again after SEARCH_RETRY_PAUSES_MS. The engine's failures (no
 * connection, a timeout, a 429 or 5xx, shards missing, an index not there) become
 * SearchUnavailableError (503 `search_unavailable`, Retry-After), never a 500 or a partial page.
 */
async function engineSearch(url: string, params: Parameters<Client['search']>[0]) {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await openSearchClient(url).search({ ...params, allow_partial_search_results: false });
      const shards = res.body._shards;
      if (res.body.timed_out || shards.successful < shards.total) throw new PartialResultError(`${shards.successful} of ${shards.total} shards answered`);
      return res;
    } catch (e) {
      if (transient(e) && attempt < SEARCH_RETRY_PAUSES_MS.length) {
        await new Promise((r) => setTimeout(r, SEARCH_RETRY_PAUSES_MS[attempt]));
        continue;
      }
      const unavailable =
        transient(e) ||
        e instanceof errors.TimeoutError ||
        (e instanceof errors.ResponseError && (e.statusCode === 429 || (e.statusCode ?? 0) >= 500 || e.body?.error?.type === 'index_not_found_exception'));
      if (unavailable) throw new SearchUnavailableError(SEARCH_RETRY_AFTER_S, { cause: e });
      throw e;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// conditions → query DSL

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
 * The query of a tree in negation normal form (domain/discoveryConditionTree.ts, which
 * db/discoveryWhere.ts compiles to SQL): a company search's person match is one `nested` query,
 * met by one person. `person` is the inside of that match (fields under `people.`).
 */
function normalQuery(entity: DiscoveryEntity | 'person', n: NormalNode): Query {
  if (n.kind === 'leaf') {
    const catalog = entity === 'contact' ? contactSearchCatalog : entity === 'person' ? personCatalog : companySearchCatalog;
    const q = leafQuery(catalog, n.condition, entity === 'person' ? 'people.' : '');
    return n.negated ? not(q) : q;
  }
  if (n.kind === 'people') {
    const q = nestedPeople(normalQuery('person', n.match));
    return n.negated ? not(q) : q;
  }
  const parts = n.parts.map((p) => normalQuery(entity, p));
  return n.kind === 'and' ? all(parts) : any(parts);
}

/** The query of a v2 search's `conditions` AND `groupedCondition` (match_all without any). */
export function openSearchQuery(entity: DiscoveryEntity, input: { conditions?: unknown[]; groupedCondition?: unknown }): Query {
  const root = rootGroup(input);
  // scoring is not needed: every clause is a filter
  return root ? { bool: { filter: [normalQuery(entity, normalForm(entity, root))] } } : { match_all: {} };
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
  const res = await engineSearch(cfg.opensearchUrl, {
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
// verified searches

/**
 * The filter of a verified search (db/discoverySearch.ts `verifiedWhere`'s twin, clause by
 * clause). A person's company values are the person document's `dsCompany.*` (the same copies and
 * join the SQL reads); a missing value matches no range or term, as SQL's null does.
 */
function verifiedFilter(entity: DiscoveryEntity, f: VerifiedFilters): Query[] {
  const own = entity === 'company' ? 'dsCompany' : 'dsContact';
  const q: Query[] = [{ term: { [`${own}.verified`]: true } }];
  if (f.industries) q.push({ terms: { 'dsCompany.industry': f.industries } });
  if (f.headcountRanges) q.push(any(f.headcountRanges.map(([lo, hi]) => ({ range: { 'dsCompany.employee_count': { gte: lo, lte: Math.min(hi, 2147483647) } } }))));
  if (f.revenue) {
    const { min, max, includeUnknown } = f.revenue;
    const known: Query[] = [];
    if (min !== null) known.push({ range: { 'dsCompany.revenue_max': { gte: min } } });
    if (max !== null) known.push({ range: { 'dsCompany.revenue_min': { lte: max } } });
    const unknown = all([not({ exists: { field: 'dsCompany.revenue_min' } }), not({ exists: { field: 'dsCompany.revenue_max' } })]);
    if (includeUnknown) q.push(known.length ? any([unknown, all(known)]) : { match_all: {} });
    else q.push(all([{ exists: { field: 'dsCompany.revenue_min' } }, ...known]));
  }
  // a company listed by name (lower-cased, as `lower(company_name)`) or by website: the lists add up
  const nameOrSite: Query[] = [
    ...(f.names ?? []).map((n) => ({ term: { 'dsCompany.company_name': { value: n, case_insensitive: true } } })),
    ...(f.domains ? [{ terms: { 'dsCompany.company_domain': f.domains } }] : []),
  ];
  if (nameOrSite.length) q.push(any(nameOrSite));
  if (f.companyCountries) q.push({ terms: { 'dsCompany.hq_country': f.companyCountries } });
  if (f.technologies) q.push({ terms: { 'dsCompany.technologies': f.technologies } });
  if (entity === 'contact') {
    if (f.titles) q.push(any(f.titles.map((t) => ({ wildcard: { 'dsContact.member_job_title': { value: likeToWildcard(likeContains(t)), case_insensitive: true } } }))));
    if (f.seniorities) q.push({ terms: { 'dsContact.member_seniority': f.seniorities } });
    if (f.countries) q.push({ terms: { 'dsContact.member_location_country': f.countries } });
  }
  return q;
}

/** VERIFIED_ORDER as a sort: SENIORITY_RANK_SQL is indexed as `seniority_rank`; SQL's `nulls last` is `missing: _last`. */
const VERIFIED_SORT: Record<DiscoveryEntity, Query[]> = {
  company: [{ 'dsCompany.employee_count': { order: 'desc', missing: '_last' } }, { id: 'asc' }],
  contact: [{ seniority_rank: 'asc' }, { 'dsContact.member_years_experience': { order: 'desc', missing: '_last' } }, { id: 'asc' }],
};

/**
 * The ids of ranked rows `from`…`from + size` of a verified search and the exact number of
 * matches. A contact search's numberOfCompaniesToPull first reads the ids of the first N
 * companies the company search would rank (as the SQL's sub-select does).
 */
export async function searchVerifiedIds(
  cfg: Pick<DiscoveryConfig, 'opensearchUrl' | 'indexPrefix'>,
  entity: DiscoveryEntity,
  f: VerifiedFilters,
  page: { from: number; size: number },
): Promise<{ total: number; ids: string[] }> {
  const filter = verifiedFilter(entity, f);
  if (entity === 'contact' && f.companyPull !== undefined) {
    const companies = await searchVerifiedIds(cfg, 'company', { ...f, companyPull: undefined }, { from: 0, size: f.companyPull });
    filter.push({ terms: { company_id: companies.ids } });
  }
  const res = await engineSearch(cfg.opensearchUrl, {
    index: aliasOf(cfg.indexPrefix, entity),
    body: { query: { bool: { filter } }, from: page.from, size: page.size, track_total_hits: true, _source: false, sort: VERIFIED_SORT[entity] },
  });
  const hits = res.body.hits;
  const total = typeof hits.total === 'number' ? hits.total : (hits.total?.value ?? 0);
  return { total, ids: hits.hits.map((h) => String(h._id)) };
}

// ---------------------------------------------------------------------------------------------
// indexing

/** Rows per read from the ds_* tables (keyset on the id); a company document carries its people. */
const READ_ROWS: Record<DiscoveryEntity, number> = { contact: 10_000, company: 1000 };
/** A bulk request is sent once its body holds this much (OpenSearch's advice: 5–15 MB). */
const BULK_BYTES = 8 * 1024 * 1024;
/** Bulk requests in flight at once during a build (the node indexes one per write thread). */
const BULK_IN_FLIGHT = Number(process.env.OPENSEARCH_BULK_IN_FLIGHT ?? 3);

/**
 * A document's fields as SQL select items (the catalog's filter expressions, each the value the
 * SQL search filters on) and how a row of them (rowMode `array`, from `offset` on) becomes the
 * document's `{"dsContact": {…}, "dsCompany": {…}}`. Numbers come as float8 (every stored value is
 * an integer below 2^53, exact), dates as float8 microseconds since the epoch; a null is left out
 * (a missing field is what the SQL's null is). The document is built here, not by PostgreSQL's
 * json functions: a plain row costs the database a fraction of a JSON one (json_build_object and
 * json_strip_nulls per row were most of a build's time).
 */
function documentFields(fields: SqlField[], offset: number): { select: string; build: (row: unknown[]) => Record<string, Record<string, unknown>> } {
  const select = fields.map((f) =>
    f.type === 'date' ? `(extract(epoch from ${f.sql}) * 1000000)::float8` : f.type === 'number' ? `(${f.sql})::float8` : f.sql,
  );
  const paths = fields.map((f) => f.path.split('.') as [string, string]);
  const groups = [...new Set(paths.map(([g]) => g))];
  return {
    select: select.join(', '),
    build: (row) => {
      const doc: Record<string, Record<string, unknown>> = {};
      for (const g of groups) doc[g] = {};
      for (let i = 0; i < paths.length; i++) {
        const v = row[offset + i];
        if (v !== null) doc[paths[i]![0]]![paths[i]![1]] = v;
      }
      return doc;
    },
  };
}

const companyFields = companySearchColumns.fields.filter((f) => !f.path.startsWith(PERSON_PREFIX));
const CONTACT_DOC = documentFields(contactSearchColumns.fields, 3);
const COMPANY_DOC = documentFields(companyFields, 1);
const PERSON_DOC = documentFields(personColumns.fields, 1);

/** A bulk `index` action and its document (two NDJSON lines). */
const indexLine = (id: string, doc: object) => `{"index":{"_id":"${id}"}}\n${JSON.stringify(doc)}`;

/** The rows of one read: `entity`'s ids after `after` (or the named ones), in id order. */
async function readDocuments(db: Queryable, entity: DiscoveryEntity, after: string, only?: string[]): Promise<{ ids: string[]; lines: string[] }> {
  const more = only ? `and ${entity === 'contact' ? 'p' : 'c'}.id = any($2::uuid[])` : '';
  const params = only ? [after, only] : [after];
  if (entity === 'contact') {
    // raw SQL: the catalog's filter expressions over the search's FROM
    const r = await db.query<unknown[]>({
      text: `select p.id::text, p.company_id::text, ${SENIORITY_RANK_SQL}, ${CONTACT_DOC.select}
             from ds_people p left join ds_companies c on c.id = p.company_id
             where p.id > $1::uuid ${more} order by p.id limit ${READ_ROWS.contact}`,
      values: params,
      rowMode: 'array',
    });
    const ids = r.rows.map((row) => row[0] as string);
    const lines = r.rows.map((row) => {
      const doc = { id: row[0], ...(row[1] !== null ? { company_id: row[1] } : {}), seniority_rank: row[2], ...CONTACT_DOC.build(row) };
      return indexLine(row[0] as string, doc);
    });
    return { ids, lines };
  }
  const companies = await db.query<unknown[]>({
    text: `select c.id::text, ${COMPANY_DOC.select} from ds_companies c where c.id > $1::uuid ${more} order by c.id limit ${READ_ROWS.company}`,
    values: params,
    rowMode: 'array',
  });
  if (!companies.rows.length) return { ids: [], lines: [] };
  const ids = companies.rows.map((row) => row[0] as string);
  // raw SQL: the companies' people as nested documents, in id order (ds_people's company_id index)
  const people = await db.query<unknown[]>({
    text: `select p.company_id::text, ${PERSON_DOC.select} from ds_people p where p.company_id = any($1::uuid[]) order by p.company_id, p.id`,
    values: [ids],
    rowMode: 'array',
  });
  const peopleOf = new Map<string, object[]>();
  for (const row of people.rows) {
    const id = row[0] as string;
    let list = peopleOf.get(id);
    if (!list) peopleOf.set(id, (list = []));
    list.push(PERSON_DOC.build(row));
  }
  const lines = companies.rows.map((row) => indexLine(row[0] as string, { id: row[0], ...COMPANY_DOC.build(row), people: peopleOf.get(row[0] as string) ?? [] }));
  return { ids, lines };
}

/**
 * The bulk `index` lines of `entity`'s documents, read from the ds_* tables in id order (all of
 * them, or the named ones), a few thousand rows at a time; the next read runs while the caller
 * sends the current one.
 */
export async function* documentLines(db: Queryable, entity: DiscoveryEntity, only?: string[]): AsyncGenerator<{ ids: string[]; lines: string[] }> {
  let next = readDocuments(db, entity, '00000000-0000-0000-0000-000000000000', only);
  for (;;) {
    const batch = await next;
    if (!batch.ids.length) return;
    next = readDocuments(db, entity, batch.ids[batch.ids.length - 1]!, only);
    // a read failing while this batch is sent is reported by the next step's await
    next.catch(() => {});
    yield batch;
  }
}

/** Attempts of a bulk request the node rejects as too busy (429: its indexing pressure or write queue is full). */
const BULK_ATTEMPTS = 8;

/**
 * Sends bulk lines (NDJSON actions without `_index`, and their documents) to `index`; an item's
 * failure fails it. A request or items rejected with 429 are sent again after a growing pause
 * (the actions are `index` by id: sending one twice leaves the same document).
 */
async function bulkSend(client: Client, index: string, lines: string[], refresh?: boolean): Promise<void> {
  const body = lines.join('\n') + '\n';
  for (let attempt = 1; ; attempt++) {
    let busy: unknown;
    try {
      const res = await client.bulk({ index, body: body as never /* NDJSON text, sent as is */, filter_path: 'errors,items.*.error,items.*.status', ...(refresh ? { refresh: 'wait_for' as const } : {}) });
      if (!res.body.errors) return;
      const errs = (res.body.items ?? []).map((i) => Object.values(i)[0]!).filter((r) => r.error);
      if (errs.some((r) => r.status !== 429)) throw new Error(`OpenSearch bulk indexing into ${index} failed: ${JSON.stringify(errs.find((r) => r.status !== 429)!.error)}`);
      busy = errs[0]!.error;
    } catch (e) {
      if (!(e instanceof errors.ResponseError && e.statusCode === 429)) throw e;
      busy = e;
    }
    if (attempt >= BULK_ATTEMPTS) throw busy instanceof Error ? busy : new Error(`OpenSearch bulk indexing into ${index} stayed rejected: ${JSON.stringify(busy)}`);
    await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
  }
}

/**
 * Fills `index` with every document of `entity`: bulk bodies of about BULK_BYTES, up to
 * BULK_IN_FLIGHT of them at once while the next rows are read. Returns the number of documents.
 */
async function fillIndex(db: Queryable, client: Client, index: string, entity: DiscoveryEntity): Promise<number> {
  let n = 0;
  let failure: unknown;
  const inFlight = new Set<Promise<void>>();
  const send = (lines: string[]) => {
    // the rejection is kept, never left unhandled; it ends the fill at the next step
    const p: Promise<void> = bulkSend(client, index, lines).catch((e) => void (failure ??= e)).finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  let pending: string[] = [];
  let bytes = 0;
  for await (const batch of documentLines(db, entity)) {
    if (failure) break;
    n += batch.ids.length;
    for (const line of batch.lines) {
      pending.push(line);
      bytes += line.length;
      if (bytes < BULK_BYTES) continue;
      send(pending);
      pending = [];
      bytes = 0;
      while (inFlight.size >= BULK_IN_FLIGHT) await Promise.race(inFlight);
    }
  }
  if (!failure && pending.length) send(pending);
  await Promise.all(inFlight);
  if (failure) throw failure;
  return n;
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
      body: { settings: { ...INDEX_LAYOUT[entity].settings, ...LOAD_SETTINGS }, mappings: INDEX_LAYOUT[entity].mappings } as never,
    });
    let n = 0;
    let old: string[];
    try {
      n = await fillIndex(db, client, name, entity);
      await client.indices.putSettings({
        index: name,
        body: { index: { refresh_interval: INDEX_SETTINGS.refresh_interval, number_of_replicas: INDEX_SETTINGS.number_of_replicas, 'translog.durability': 'request' } },
      });
      await client.indices.refresh({ index: name });
      // The load wrote its translog asynchronously: a flush commits every document to disk before
      // searches read the index, so a node lost after the swap comes back with all of them.
      await client.indices.flush({ index: name, wait_if_ongoing: true });
      await waitForCopies(client, name);
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

/** How long a build waits for its replicas: copying a large index to its replicas takes minutes. */
const COPIES_WAIT_MS = 30 * 60_000;

/**
 * Waits until every copy of `index` is started (green; yellow without replicas), asking the
 * cluster 60 s at a time (each request given longer than that, past the client's 30 s default)
 * for up to COPIES_WAIT_MS. A wait that runs out answers 408 with `timed_out`: asked again.
 */
async function waitForCopies(client: Client, index: string): Promise<void> {
  const deadline = Date.now() + COPIES_WAIT_MS;
  for (;;) {
    try {
      await client.cluster.health({ index, wait_for_status: INDEX_SETTINGS.number_of_replicas > 0 ? 'green' : 'yellow', timeout: '60s' }, { requestTimeout: 75_000 });
      return;
    } catch (e) {
      if (!(e instanceof errors.ResponseError && e.statusCode === 408) || Date.now() > deadline) throw e;
    }
  }
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
    for await (const batch of documentLines(db, entity, ids)) {
      batch.ids.forEach((id) => seen.add(id));
      await bulkSend(client, alias, batch.lines, true);
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
  // an alias missing, or on an index of an older document shape (MAPPING_VERSION), is rebuilt
  const stale = await Promise.all(
    (['contact', 'company'] as const).map(async (e) => {
      const alias = aliasOf(cfg.indexPrefix, e);
      if (!(await client.indices.existsAlias({ name: alias })).body) return true;
      const mappings = Object.values((await client.indices.getMapping({ index: alias })).body) as { mappings?: { _meta?: { version?: number } } }[];
      return mappings.some((m) => m.mappings?._meta?.version !== MAPPING_VERSION);
    }),
  );
  if (!opts.datasetChanged && !stale.some(Boolean)) return null;
  return reindexDiscovery(db, cfg);
}
