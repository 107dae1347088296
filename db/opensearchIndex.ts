/**
 * The OpenSearch indexes of the discovery search (docs/DISCOVERY.md "Engines"): their settings
 * and their mappings, derived from the v2 field catalogs (domain/discoveryCatalog.ts), so a column
 * added there is indexed with the type its conditions compare it as.
 *
 * - `<prefix>-people`: one document per ds_people row; its properties are the catalog paths of
 *   find-contacts-v2 (`dsContact.*`, and the `dsCompany.*` of the person's company), each the value
 *   the PostgreSQL search filters on (the catalog's SQL expression, read by the indexer).
 * - `<prefix>-companies`: one document per ds_companies row (`dsCompany.*`) with its people as
 *   `people`, a `nested` field (`people.dsContact.*`): the person conditions of one group are met
 *   by the same person, as in PostgreSQL's `c.id in (select company_id from ds_people …)`.
 *
 * Each alias points at one concrete index `<alias>-<timestamp>`; a re-index builds a new one and
 * swaps the alias (db/discoveryOpenSearch.ts).
 */
import type { FieldType } from '../domain/conditions.js';
import { companySearchCatalog, contactSearchCatalog, personCatalog, COMPANY_PREFIX, PERSON_PREFIX } from '../domain/discoveryCatalog.js';
import { VERIFIED_MAX_LIMIT, VERIFIED_MAX_PAGE } from '../domain/verifiedSearchInput.js';

/**
 * Index settings. One primary shard holds a few million documents comfortably (a shard of
 * 10–50 GB is the usual target); DISCOVERY.md "Sizing" says when to raise it. Replicas are set
 * after the load (none while bulk loading), refresh is off while loading and 1 s after.
 */
export const INDEX_SETTINGS = {
  number_of_shards: Number(process.env.OPENSEARCH_SHARDS ?? 1),
  /** Applied once the load is done (a replica copies the finished segments). */
  number_of_replicas: Number(process.env.OPENSEARCH_REPLICAS ?? 0),
  refresh_interval: '1s',
  /** A company document carries its people as nested documents: more than the default 10,000 for the largest companies. */
  'mapping.nested_objects.limit': 100_000,
  /**
   * v2 pages walk by search_after; verified searches page by number (from/size), at most
   * VERIFIED_MAX_PAGE pages of VERIFIED_MAX_LIMIT rows, and a contact search's
   * numberOfCompaniesToPull reads that many company ids at once.
   */
  max_result_window: VERIFIED_MAX_LIMIT * VERIFIED_MAX_PAGE,
} as const;

/**
 * The settings while bulk loading: no refresh, no replica, the translog fsynced in the background
 * rather than per bulk request (all three restored before the alias swap; a build that fails is
 * deleted, so nothing acknowledged rests on the async translog).
 */
export const LOAD_SETTINGS = { refresh_interval: '-1', number_of_replicas: 0, 'translog.durability': 'async' } as const;

/**
 * The people index is stored in id order, the order every v2 page is read in: a search then
 * collects its page from each segment's first matches and only counts the rest (a 394,225-hit
 * wildcard sorted by id on 2M documents: 14–15 → 6–8 ms; the build 6% slower). OpenSearch
 * refuses index sorting where there are `nested` fields, so the companies index keeps its order.
 */
const PEOPLE_SETTINGS = { ...INDEX_SETTINGS, 'sort.field': 'id', 'sort.order': 'asc' } as const;

/**
 * Types as the conditions compare them: strings and multi values exactly (`keyword`; `LIKE` is a
 * case-insensitive `wildcard` query), numbers as `double` (every stored value is an integer below
 * 2^53, exact), dates as `long` microseconds since the epoch (PostgreSQL's precision; the
 * `date_nanos` type refuses dates before 1970, which conditions may name).
 */
const FIELD_MAPPING: Record<FieldType, { type: string; doc_values?: false }> = {
  // conditions only filter on strings (terms, wildcard: the inverted index); no search sorts or
  // aggregates on one, so their column stores (doc values) would be built for nothing
  string: { type: 'keyword', doc_values: false },
  multi: { type: 'keyword', doc_values: false },
  uuid: { type: 'keyword', doc_values: false },
  number: { type: 'double' },
  date: { type: 'long' },
  boolean: { type: 'boolean' },
};

type Props = Record<string, unknown>;

/** `dsContact.member_full_name` → `{dsContact: {properties: {member_full_name: …}}}`. */
function propertiesOf(fields: { path: string; type: FieldType }[]): Props {
  const out: Record<string, { properties: Props }> = {};
  for (const f of fields) {
    const [group, name] = f.path.split('.') as [string, string];
    (out[group] ??= { properties: {} }).properties[name] = FIELD_MAPPING[f.type];
  }
  return out;
}

/**
 * Version of the documents' shape: an index whose mapping `_meta.version` differs is rebuilt at
 * start (ensureDiscoveryIndex). 2: people carry `company_id` and `seniority_rank` (verified search).
 * 3: no `_source`, no doc values on strings (a quarter less indexing CPU, issue 33). 4: people
 * stored in id order (PEOPLE_SETTINGS).
 */
export const MAPPING_VERSION = 4;

/**
 * Searches read ids and sort values only (`_source: false`), and a re-index reads the ds_*
 * tables, never the index: the stored JSON of each document would be written, compressed and
 * merged for nothing. (So OpenSearch's own `_reindex` cannot copy these indexes: rebuild them.)
 */
const NO_SOURCE = { enabled: false } as const;

const PEOPLE_MAPPINGS = {
  dynamic: 'strict',
  _meta: { version: MAPPING_VERSION },
  _source: NO_SOURCE,
  properties: {
    id: { type: 'keyword' },
    ...propertiesOf(contactSearchCatalog.fields),
    // not conditions' fields: the verified search's company pull and ranking (SENIORITY_RANK_SQL)
    company_id: { type: 'keyword', doc_values: false },
    seniority_rank: { type: 'byte' },
  },
};

const COMPANY_MAPPINGS = {
  dynamic: 'strict',
  _meta: { version: MAPPING_VERSION },
  _source: NO_SOURCE,
  properties: {
    id: { type: 'keyword' },
    ...propertiesOf(companySearchCatalog.fields.filter((f) => f.path.startsWith(COMPANY_PREFIX))),
    people: { type: 'nested', properties: propertiesOf(personCatalog.fields.filter((f) => f.path.startsWith(PERSON_PREFIX))) },
  },
};

/** Each index's settings and mappings, by the records it holds. */
export const INDEX_LAYOUT = {
  contact: { settings: PEOPLE_SETTINGS, mappings: PEOPLE_MAPPINGS },
  company: { settings: INDEX_SETTINGS, mappings: COMPANY_MAPPINGS },
} as const;
