/**
 * Sources (API-SPEC "Sources", DESIGN §4): create with the per-type rules, get, partial update
 * (with the Temporal Schedule of `runFrequency`), filter by type, bulk upsert / fetch / update,
 * and the asynchronous audience pull. Static paths come before `/sources/{id}`.
 *
 * A repeated (sourceType, sourceIdentifier) — the same normalised URL, or the same keyword /
 * job search — returns the existing source with 200 (unique index on
 * (workspace_id, source_type, normalised_identifier)). The steps are use cases in
 * api/usecases/sources.ts; the routes adapt HTTP to them and shape the JSON.
 */
import { isListeningSourceType } from '../../domain/sourceRules.js';
import { isUuid } from '../../domain/ids.js';
import { findSourcesByIds, type SourceEntity } from '../../db/sources.js';
import { defineRoute, reply } from '../route.js';
import { IdParams, JobAccepted } from '../schemas/common.js';
import {
  BulkFetchSourcesBody,
  BulkUpdateSourcesBody,
  BulkUpsertSourcesBody,
  BulkUpsertSourcesResponse,
  CreateSourceBody,
  FilterSourcesBody,
  FilterSourcesParams,
  PatchSourceBody,
  PullBody,
  SourceList,
  SourcePage,
  SourceResponse,
  type SourceJson,
} from '../schemas/sources.js';
import { bulkUpdateSources, bulkUpsertSources, createSource, filterSources, loadSource, patchSource, pullSource } from '../usecases/sources.js';

/** The display fields the contract names for social-listening sources: null while not known (e.g. an image no pull has learned yet). */
const LISTENING_DISPLAY_UNKNOWN = { socialName: null, socialHandle: null, platformName: null, interactionType: null, profileImageUrl: null };

export function sourceJson(r: SourceEntity): SourceJson {
  return {
    id: r.id,
    type: 'sources',
    attributes: {
      sourceType: r.sourceType,
      sourceIdentifier: r.sourceIdentifier ?? null,
      sourceMeta: isListeningSourceType(r.sourceType) ? { ...LISTENING_DISPLAY_UNKNOWN, ...r.sourceMeta } : (r.sourceMeta ?? {}),
      refreshStatus: r.refreshStatus ?? null,
      createdAt: r.createdAt.toISOString(),
      runFrequency: r.runFrequency
        ? { numberOfPastDaysToSync: r.runFrequency.numberOfPastDaysToSync, periodicInterval: r.runFrequency.periodicInterval }
        : null,
    },
  };
}

export const sourceRoutes = [
  defineRoute({
    method: 'post',
    path: '/sources',
    tag: 'Sources',
    summary: 'Create a source',
    description:
      'Per type: `pronetInbound`/`pronetOutbound` need a profile URL (`…/in/<name>`) or company/page URL (`…/company/<name>`); `pronetPost` a post ' +
      'or activity URL; `pronetKeywordSearch` no identifier and `sourceMeta.keyword` (≥ 3 characters); `pronetJobPosting` no identifier and ' +
      '`sourceMeta.jobTitle`, `jobLocation`, `postedTime`, `jobType`; `importFromWebhook` `sourceMeta.config.fieldMapping` whose targets are paths of ' +
      '`GET /schema/contact`. A repeated type + identifier returns the existing source (200). `refreshStatus` is null until the first pull.',
    body: CreateSourceBody,
    responses: { 200: SourceResponse },
    errors: [400, 401, 404, 500],
    examples: {
      request: {
        sourceType: 'importFromWebhook',
        sourceIdentifier: 'crm-export',
        sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'Email', targetFieldName: 'contact.workEmail' }, { sourceFieldName: 'Company', targetFieldName: 'company.companyName' }] } },
      },
    },
    idempotent: true,
    handler: async ({ body, scope }) => ({ data: sourceJson(await createSource(scope, body)) }),
  }),

  defineRoute({
    method: 'post',
    path: '/sources/filter-sources/{sourceType}',
    tag: 'Sources',
    summary: 'List the sources of one type',
    description:
      'Sources of the workspace with this `sourceType`, oldest first, filtered by ANDed `conditions` (same operators as contacts) on `sourceIdentifier`, ' +
      '`refreshStatus`, `createdAt`, `segmentIds` (multi-value) and `sourceMeta.<sourceName|keyword|jobTitle|jobLocation|socialName|socialHandle|platformName|interactionType>`.',
    params: FilterSourcesParams,
    body: FilterSourcesBody,
    responses: { 200: SourcePage },
    errors: [400, 401, 500],
    handler: async ({ params, body, deps, scope }) => {
      const page = await filterSources(scope, deps.config.serverSecret, params.sourceType, body);
      return { data: page.data.map(sourceJson), meta: page.meta };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/sources/bulk-upsert',
    tag: 'Sources',
    summary: 'Create or update up to 100 sources',
    body: BulkUpsertSourcesBody,
    responses: { 200: BulkUpsertSourcesResponse },
    errors: [400, 401, 404, 500],
    idempotent: true,
    handler: async ({ body, scope }) => {
      const { sources, created } = await bulkUpsertSources(scope, body);
      return { data: sources.map(sourceJson), meta: { created, updated: sources.length - created } };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/sources/bulk-fetch',
    tag: 'Sources',
    summary: 'Fetch up to 100 sources by id',
    description: 'Returns the sources in the order of `sourceIds`; unknown and foreign ids are absent.',
    body: BulkFetchSourcesBody,
    responses: { 200: SourceList },
    errors: [400, 401, 500],
    handler: async ({ body, scope }) => {
      const ids = [...new Set(body.sourceIds.filter(isUuid).map((s) => s.toLowerCase()))];
      const byId = new Map((await findSourcesByIds(scope.em, ids)).map((row) => [row.id, row]));
      return { data: ids.map((id) => byId.get(id)).filter((x): x is SourceEntity => !!x).map(sourceJson) };
    },
  }),

  defineRoute({
    method: 'patch',
    path: '/sources/bulk-update',
    tag: 'Sources',
    summary: 'Update up to 100 sources',
    description: 'Each item is a PATCH of one source (`sourceMeta` merge, `runFrequency` schedule), applied in order: an id listed twice gets both PATCHes, and each of its items answers its final state. All items are checked before any change: an unknown id is a 404, an invalid item a 400 naming `/sources/<i>/…`.',
    body: BulkUpdateSourcesBody,
    responses: { 200: SourceList },
    errors: [400, 401, 404, 409, 500], errorCodes: ['source_exists', 'source_not_pullable', 'run_frequency_incomplete'],
    handler: async ({ body, deps, scope }) => ({ data: (await bulkUpdateSources(scope, deps, body)).map(sourceJson) }),
  }),

  defineRoute({
    method: 'post',
    path: '/sources/pull-contacts-from-source/{id}',
    tag: 'Sources',
    summary: 'Pull the audience of a listening source (asynchronous)',
    description:
      'Starts a `source-pull` job: the listening provider reports the people behind the source for the last `numberOfPastDaysToSync` days ' +
      '(1, 7, 15, 30, 45, 60 or 90; default 1 = the last 24 hours); they are upserted as contacts of the source (identity resolution; deleted contacts ' +
      'stay deleted) and the source is attached to `segmentId`. `refreshStatus` moves `queued` → `running` → `succeeded`/`failed`. Poll `jobStatusEndpoint`. ' +
      'One pull per source at a time: while a pull of the source is queued or running, another is a 409 `conflict`.',
    params: IdParams,
    body: PullBody,
    responses: { 202: JobAccepted },
    errors: [400, 401, 404, 409, 500], errorCodes: ['source_not_pullable', 'conflict'],
    idempotent: true,
    handler: async ({ params, body, deps, scope }) => reply(202, await pullSource(scope, deps, params.id, body)),
  }),

  defineRoute({
    method: 'get',
    path: '/sources/{id}',
    tag: 'Sources',
    summary: 'Get a source',
    params: IdParams,
    responses: { 200: SourceResponse },
    errors: [401, 404, 500],
    handler: async ({ params, scope }) => ({ data: sourceJson(await loadSource(scope, params.id)) }),
  }),

  defineRoute({
    method: 'patch',
    path: '/sources/{id}',
    tag: 'Sources',
    summary: 'Update a source',
    description:
      'Only the properties present change. `sourceMeta` is merged (a key set to null is removed) and checked with the per-type rules. `runFrequency` ' +
      '`{numberOfPastDaysToSync, periodicInterval}` creates or updates a Temporal Schedule that pulls the source every `periodicInterval` ' +
      '(ISO-8601 duration such as `PT6H`/`P1D`, or `<n>m`/`<n>h`/`<n>d`/`<n>w`; 15 minutes to 90 days); `runFrequency: null` deletes it.',
    params: IdParams,
    body: PatchSourceBody,
    responses: { 200: SourceResponse },
    errors: [400, 401, 404, 409, 500], errorCodes: ['source_exists', 'source_not_pullable', 'run_frequency_incomplete'],
    handler: async ({ params, body, deps, scope }) => ({ data: sourceJson(await patchSource(scope, deps, params.id, body)) }),
  }),
];
