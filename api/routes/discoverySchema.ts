/**
 * Discovery side of the Schema group: the v2 and verified catalogs, their option lists and the
 * verified type-ahead suggestions (DESIGN §4: `data: [{label, value}]`).
 */
import { defineRoute } from '../route.js';
import type { AppDeps } from '../deps.js';
import type { WorkspaceScope } from '../../db/scope.js';
import { OptionList, V2SchemaResponse, VerifiedSchemaResponse, v2OptionsQuery, verifiedOptionsQuery, verifiedSuggestionsQuery } from '../schemas/discovery.js';
import { GROUP_OPERATORS, OPERATORS_BY_TYPE } from '../../domain/conditions.js';
import {
  VERIFIED_INPUTS,
  childOptions,
  hasSuggestions,
  v2OptionsColumn,
  v2SchemaItems,
  verifiedSchemaItems,
  verifiedSchemaMeta,
  type DiscoveryEntity,
  type OptionItem,
  type OptionSource,
  type VerifiedInputDef,
} from '../../domain/discoveryCatalog.js';
import { invalidField } from '../../domain/errors.js';
import { distinctValues } from '../../db/discoveryOptions.js';

/** Embedded options per verified item (the full list is behind `optionsLink`). */
const EMBEDDED_OPTIONS = 50;
const CACHE_MS = 60_000;

/**
 * Distinct values of the global dataset change only on import; a short per-process cache keeps
 * the catalog endpoints cheap (nothing another replica needs lives here).
 */
const cache = new Map<string, { at: number; value: Promise<{ value: string; count: number }[]> }>();
function cachedDistinct(scope: WorkspaceScope, deps: AppDeps, table: 'ds_people' | 'ds_companies', column: string, multi: boolean, limit: number) {
  const key = `${deps.config.databaseUrl}|${table}|${column}|${limit}`;
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < CACHE_MS) return hit.value;
  const value = distinctValues(scope.db, table, column, { multi, limit });
  value.catch(() => cache.delete(key));
  cache.set(key, { at: Date.now(), value });
  return value;
}

async function sourceOptions(scope: WorkspaceScope, deps: AppDeps, src: OptionSource, opts: { q?: string; limit: number }): Promise<{ options: OptionItem[]; hasMore: boolean }> {
  if (src.kind === 'static') {
    const q = opts.q?.toLowerCase();
    const all = src.values.filter((v) => !q || v.toLowerCase().includes(q));
    return { options: all.slice(0, opts.limit).map((v) => ({ label: v, value: v })), hasMore: all.length > opts.limit };
  }
  const rows = opts.q
    ? await distinctValues(scope.db, src.table, src.column, { q: opts.q, multi: src.multi, limit: opts.limit + 1 })
    : await cachedDistinct(scope, deps, src.table, src.column, src.multi ?? false, Math.max(opts.limit + 1, EMBEDDED_OPTIONS + 1));
  return { options: rows.slice(0, opts.limit).map((r) => ({ label: r.value, value: r.value })), hasMore: rows.length > opts.limit };
}

function verifiedInput(entity: DiscoveryEntity, field: string): VerifiedInputDef | undefined {
  return VERIFIED_INPUTS[entity].find((d) => d.name === field);
}

const ENTITIES: DiscoveryEntity[] = ['contact', 'company'];

export const discoverySchemaRoutes = ENTITIES.flatMap((entity) => [
  defineRoute({
    method: 'get', path: `/schema/discovery-search-v2/${entity}`, tag: 'Schema',
    summary: entity === 'contact' ? 'Field catalog of contact discovery (dsContact.*, dsCompany.*)' : 'Field catalog of company discovery (dsCompany.*, and dsContact.* person filters)',
    description:
      entity === 'contact'
        ? 'Each item is a path usable in `conditions`, `groupedCondition` and `fields` of find-contacts-v2, with its type and valid operators.'
        : 'dsCompany.* paths are company fields; dsContact.* paths filter companies having at least one matching person (the person conditions of one group are met by the same person) and cannot be used in `fields`.',
    responses: { 200: V2SchemaResponse }, errors: [401, 500],
    handler: () => ({ data: v2SchemaItems(entity), meta: { groupOperators: [...GROUP_OPERATORS], operatorsByType: OPERATORS_BY_TYPE } }),
  }),
  defineRoute({
    method: 'get', path: `/schema/discovery-search-v2/${entity}/options`, tag: 'Schema',
    summary: `Values of a ${entity} discovery field, most frequent first`,
    query: v2OptionsQuery(entity), responses: { 200: OptionList }, errors: [400, 401, 500],
    handler: async ({ query, deps, scope }) => {
      const known = v2SchemaItems(entity).some((i) => i.name === query.field);
      if (!known) throw invalidField('/field', `unknown field ${query.field}; see GET /schema/discovery-search-v2/${entity}`);
      const col = v2OptionsColumn(entity, query.field);
      if (!col) throw invalidField('/field', `${query.field} has no option list (free text or numeric); filter it with LIKE or comparisons`);
      const r = await sourceOptions(scope, deps, { kind: 'dataset', table: col.table, column: col.column.column, multi: col.column.type === 'multi' }, { q: query.q, limit: query.limit ?? 100 });
      return { data: r.options };
    },
  }),
  defineRoute({
    method: 'get', path: `/schema/verified-discovery/${entity}`, tag: 'Schema',
    summary: `Field catalog of verified ${entity} discovery (inputFieldMapping names)`,
    responses: { 200: VerifiedSchemaResponse }, errors: [401, 500],
    handler: async ({ deps, scope }) => {
      const embedded = new Map<string, { options: OptionItem[]; hasMore: boolean }>();
      await Promise.all(
        VERIFIED_INPUTS[entity].filter((d) => d.options).map(async (d) => embedded.set(d.name, await sourceOptions(scope, deps, d.options!, { limit: EMBEDDED_OPTIONS }))),
      );
      return { data: verifiedSchemaItems(entity, (d) => embedded.get(d.name)!), meta: verifiedSchemaMeta(entity) };
    },
  }),
  defineRoute({
    method: 'get', path: `/schema/verified-discovery/${entity}/options`, tag: 'Schema',
    summary: `Option list of a verified ${entity} input`,
    query: verifiedOptionsQuery(entity), responses: { 200: OptionList }, errors: [400, 401, 500],
    handler: async ({ query, deps, scope }) => {
      const child = childOptions(entity, query.field);
      if (child) return { data: child };
      const def = verifiedInput(entity, query.field);
      if (!def) throw invalidField('/field', `unknown input ${query.field}; see GET /schema/verified-discovery/${entity}`);
      if (!def.options) throw invalidField('/field', `${query.field} has no option list${hasSuggestions(def) ? '; use the suggestions endpoint' : ''}`);
      const r = await sourceOptions(scope, deps, def.options, { q: query.q, limit: query.limit ?? 100 });
      return { data: r.options };
    },
  }),
  defineRoute({
    method: 'get', path: `/schema/verified-discovery/${entity}/suggestions`, tag: 'Schema',
    summary: `Type-ahead suggestions for a verified ${entity} input`,
    query: verifiedSuggestionsQuery(entity), responses: { 200: OptionList }, errors: [400, 401, 500],
    handler: async ({ query, deps, scope }) => {
      const def = verifiedInput(entity, query.field);
      if (!def) throw invalidField('/field', `unknown input ${query.field}; see GET /schema/verified-discovery/${entity}`);
      const limit = query.limit ?? 10;
      if (def.suggestions) {
        const rows = await distinctValues(scope.db, def.suggestions.table, def.suggestions.column, { q: query.q, limit });
        return { data: rows.map((r) => ({ label: r.value, value: r.value })) };
      }
      if (def.options) return { data: (await sourceOptions(scope, deps, def.options, { q: query.q, limit })).options };
      throw invalidField('/field', `${query.field} takes no text input to suggest for`);
    },
  }),
]);
