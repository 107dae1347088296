/**
 * Sources (API-SPEC "Sources", DESIGN §4): create with the per-type rules, get, partial update
 * (with the Temporal Schedule of `runFrequency`), filter by type, bulk upsert / fetch / update,
 * and the asynchronous audience pull. Static paths come before `/sources/{id}`.
 *
 * A repeated (sourceType, sourceIdentifier) — the same normalised URL, or the same keyword /
 * job search — returns the existing source with 200 (unique index on
 * (workspace_id, source_type, normalised_identifier)).
 */
import { contactCatalog, type ContactCatalog } from '../../domain/contactCatalog.js';
import { badRequest, invalidField } from '../../domain/errors.js';
import { conflict, notFound } from '../errors.js';
import { decodeToken, pageMeta, queryFingerprint, type TokenPayload } from '../../domain/pagination.js';
import { validateRunFrequency, type RunFrequency } from '../../domain/runFrequency.js';
import {
  DEFAULT_PAST_DAYS,
  isListeningSourceType,
  mergeSourceMeta,
  validateSourceInput,
} from '../../domain/sourceRules.js';
import { isUuid } from '../../domain/ids.js';
import { loadContactCatalog } from '../../db/contactRead.js';
import { assertSegment, attachSourceToSegment } from '../../db/segmentLinks.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  claimIdleSourcePull,
  claimStaleSourcePull,
  findSource,
  findSourcesByIds,
  sourceExists,
  insertOrFindSource,
  filterSourcesPage,
  lockSources,
  setSourceRefreshStatus,
  sourceIdentityTaken,
  sourceOfRow,
  updateSource,
  upsertSources,
  type SourceEntity,
} from '../../db/sources.js';
import type { AppDeps } from '../deps.js';
import { startJob } from '../jobs.js';
import { defineRoute, reply } from '../route.js';
import { sourceScheduleId, deleteSourceSchedule, upsertSourceSchedule } from '../sourceSchedules.js';
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
import type { SourcePullInput } from '../../workflows/contract/sources.js';

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

const inCatalog = (c: ContactCatalog) => (path: string) => !!c.get(path)?.write;

/** A pull marked queued/running this recently counts as live even before Temporal lists it. */
const PULL_CLAIM_GRACE_SECS = 60;

/**
 * One running pull per source: marks the source `queued` unless a pull of it is queued or
 * running (409 `conflict`). The status row serialises concurrent requests; a status left
 * `queued`/`running` by a pull that no longer exists (terminated workflow) is taken over once
 * Temporal lists no running pull of the source.
 */
async function claimPull(deps: AppDeps, em: EntityManager, sourceId: string): Promise<void> {
  if (await claimIdleSourcePull(em, sourceId)) return;
  const busy = () => conflict(`Source ${sourceId} is already being pulled; wait for that job to end`);
  if (await pullListed(deps, sourceId)) throw busy();
  if (!(await claimStaleSourcePull(em, sourceId, PULL_CLAIM_GRACE_SECS))) throw busy();
}

/** Whether Temporal lists a running pull workflow of the source. */
async function pullListed(deps: AppDeps, sourceId: string): Promise<boolean> {
  // sourceId is a UUID (checked by loadSource), safe inside the visibility query
  const n = await deps.temporal.workflow.count(`WorkflowType = 'sourcePullWorkflow' AND SourceId = '${sourceId}' AND ExecutionStatus = 'Running'`);
  return n.count > 0;
}

async function loadSource(em: EntityManager, id: string): Promise<SourceEntity> {
  const row = isUuid(id) ? await findSource(em, id) : null;
  if (!row) throw notFound('Source', id);
  return row;
}

interface PatchPlan {
  row: SourceEntity;
  sourceMeta?: Record<string, unknown>;
  normalisedIdentifier?: string;
  /** undefined: unchanged; null: remove the schedule; else set. */
  runFrequency?: (RunFrequency & { intervalMs: number }) | null;
}

/** Validates one PATCH against its source (400 naming the field under `ptr`). */
function planPatch(row: SourceEntity, patch: { sourceMeta?: Record<string, unknown>; runFrequency?: Partial<RunFrequency> | null }, catalog: ContactCatalog, ptr: string): PatchPlan {
  const plan: PatchPlan = { row };
  if (patch.sourceMeta !== undefined) {
    const merged = mergeSourceMeta(row.sourceMeta ?? {}, patch.sourceMeta);
    const norm = validateSourceInput({ sourceType: row.sourceType, sourceIdentifier: row.sourceIdentifier ?? null, sourceMeta: merged }, inCatalog(catalog), ptr);
    plan.sourceMeta = norm.sourceMeta;
    const key = norm.identityKey ?? (row.normalisedIdentifier.startsWith('id:') ? row.normalisedIdentifier : `id:${row.id}`);
    if (key !== row.normalisedIdentifier) plan.normalisedIdentifier = key;
  }
  if (patch.runFrequency !== undefined) {
    if (patch.runFrequency !== null && !isListeningSourceType(row.sourceType)) {
      throw invalidField(`${ptr}/runFrequency`, `${row.sourceType} sources receive pushed rows and cannot be pulled periodically`);
    }
    if (patch.runFrequency === null) plan.runFrequency = null;
    else {
      // A field left out keeps its stored value.
      const merged = { ...row.runFrequency, ...patch.runFrequency };
      for (const f of ['numberOfPastDaysToSync', 'periodicInterval'] as const) {
        if (merged[f] === undefined) throw invalidField(`${ptr}/runFrequency/${f}`, 'is required: the source has no runFrequency yet to take it from');
      }
      const rf = validateRunFrequency(merged as RunFrequency, `${ptr}/runFrequency`);
      plan.runFrequency = { numberOfPastDaysToSync: rf.numberOfPastDaysToSync, periodicInterval: rf.periodicInterval, intervalMs: rf.intervalMs };
    }
  }
  return plan;
}

/**
 * Applies a validated PATCH: the schedule first (idempotent), then the row. `em` is the
 * transaction holding the source's row lock (`lockSources`), so the PATCHes of one source change
 * the Schedule and the row one after the other.
 */
async function applyPatch(deps: AppDeps, em: EntityManager, plan: PatchPlan): Promise<SourceEntity> {
  const { row } = plan;
  if (plan.normalisedIdentifier) {
    // Checked before the schedule changes, so a refused PATCH leaves nothing behind.
    if (await sourceIdentityTaken(em, row, plan.normalisedIdentifier)) throw sourceExists();
  }
  let scheduleId = row.scheduleId ?? null;
  let runFrequency: RunFrequency | null | undefined;
  if (plan.runFrequency === null) {
    await deleteSourceSchedule(deps, row.scheduleId ?? sourceScheduleId(row.id));
    scheduleId = null;
    runFrequency = null;
  } else if (plan.runFrequency) {
    scheduleId = await upsertSourceSchedule(deps, { id: row.id, workspaceId: row.workspaceId }, plan.runFrequency.intervalMs);
    runFrequency = { numberOfPastDaysToSync: plan.runFrequency.numberOfPastDaysToSync, periodicInterval: plan.runFrequency.periodicInterval };
  }
  return updateSource(em, row, { sourceMeta: plan.sourceMeta, normalisedIdentifier: plan.normalisedIdentifier, runFrequency, scheduleId });
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
    handler: async ({ body, auth, deps, em }) => {
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      const norm = validateSourceInput(body, inCatalog(catalog));
      if (body.segmentId) await assertSegment(em, body.segmentId);
      const { row } = await insertOrFindSource(deps.pool, auth.workspaceId, norm, null);
      if (body.segmentId) await attachSourceToSegment(deps.pool, body.segmentId, row.id);
      return { data: sourceJson(sourceOfRow(em, row)) };
    },
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
    handler: async ({ params, body, auth, deps, em }) => {
      const limit = body.limit ?? 25;
      const fingerprint = queryFingerprint(auth.workspaceId, { r: 'sources', t: params.sourceType, c: body.conditions ?? [] });
      const from: TokenPayload | undefined = body.paginationToken ? decodeToken(deps.config.serverSecret, fingerprint, body.paginationToken) : undefined;
      const [afterId] = (from?.after ?? []) as [string?];
      if (from && (typeof afterId !== 'string' || !isUuid(afterId))) throw invalidField('/paginationToken', 'is malformed');
      const { rows, total } = await filterSourcesPage(em, deps.pool, {
        workspaceId: auth.workspaceId,
        sourceType: params.sourceType,
        conditions: body.conditions,
        after: from ? { id: afterId!, dir: from.dir } : undefined,
        limit,
      });
      const page = pageMeta({
        secret: deps.config.serverSecret,
        fingerprint,
        rows,
        limit,
        totalRecords: total,
        keyOf: (r) => [r.id],
        from,
      });
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
    handler: async ({ body, auth, deps, em }) => {
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      const items = body.sources.map((s, i) => {
        const norm = validateSourceInput(s, inCatalog(catalog), `/sources/${i}`);
        const given = Object.fromEntries(Object.entries(norm.sourceMeta).filter(([k]) => Object.hasOwn(s.sourceMeta ?? {}, k)));
        return { norm, given, segmentId: s.segmentId };
      });
      for (const segId of new Set(items.map((i) => i.segmentId).filter((x): x is string => !!x))) {
        await assertSegment(em, segId);
      }
      const { rows, created } = await upsertSources(deps.pool, auth.workspaceId, items);
      return { data: rows.map((r) => sourceJson(sourceOfRow(em, r))), meta: { created, updated: rows.length - created } };
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
    handler: async ({ body, em }) => {
      const ids = [...new Set(body.sourceIds.filter(isUuid).map((s) => s.toLowerCase()))];
      const byId = new Map((await findSourcesByIds(em, ids)).map((row) => [row.id, row]));
      return { data: ids.map((id) => byId.get(id)).filter((x): x is SourceEntity => !!x).map(sourceJson) };
    },
  }),

  defineRoute({
    method: 'patch',
    path: '/sources/bulk-update',
    tag: 'Sources',
    summary: 'Update up to 100 sources',
    description: 'Each item is a PATCH of one source (`sourceMeta` merge, `runFrequency` schedule). All items are checked before any change: an unknown id is a 404, an invalid item a 400 naming `/sources/<i>/…`.',
    body: BulkUpdateSourcesBody,
    responses: { 200: SourceList },
    errors: [400, 401, 404, 500], errorCodes: ['source_exists'],
    handler: async ({ body, auth, deps, em }) => {
      const seen = new Set<string>();
      body.sources.forEach((s, i) => {
        if (seen.has(s.id)) throw invalidField(`/sources/${i}/id`, 'appears twice');
        seen.add(s.id);
      });
      const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
      const out = await em.transactional(async (tx) => {
        // Every source is locked before any is planned: each merges into what the last PATCH of it committed.
        const locked = new Map((await lockSources(tx, body.sources.map((s) => s.id))).map((r) => [r.id, r]));
        const plans = body.sources.map((s, i) => {
          const row = locked.get(s.id.toLowerCase());
          if (!row) throw notFound('Source', s.id);
          return planPatch(row, s, catalog, `/sources/${i}`);
        });
        const applied: SourceEntity[] = [];
        for (const p of plans) applied.push(await applyPatch(deps, tx, p));
        return applied;
      });
      return { data: out.map(sourceJson) };
    },
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
    handler: async ({ params, body, auth, deps, em }) => {
      const row = await loadSource(em, params.id);
      if (!isListeningSourceType(row.sourceType)) {
        throw badRequest('source_not_pullable', `${row.sourceType} sources receive pushed rows (POST /contacts/{sourceId}); they have no audience to pull`, [
          { path: '/id', message: 'is not a listening source' },
        ]);
      }
      if (body.segmentId) await assertSegment(em, body.segmentId);
      const previousStatus = row.refreshStatus ?? null;
      await claimPull(deps, em, row.id);
      const args: SourcePullInput = {
        sourceId: row.id,
        segmentId: body.segmentId ?? null,
        numberOfPastDaysToSync: body.numberOfPastDaysToSync ?? DEFAULT_PAST_DAYS,
        trigger: 'api',
      };
      const accepted = await startJob(deps, {
        workspaceId: auth.workspaceId,
        job: 'source-pull',
        args,
        searchAttributes: { SourceId: row.id },
        message: 'Accepted: the audience is pulled in the background; poll jobStatusEndpoint for its status',
      }).catch(async (e: unknown) => {
        // no pull started: give the source back its previous status
        await setSourceRefreshStatus(em, row.id, previousStatus);
        throw e;
      });
      return reply(202, accepted);
    },
  }),

  defineRoute({
    method: 'get',
    path: '/sources/{id}',
    tag: 'Sources',
    summary: 'Get a source',
    params: IdParams,
    responses: { 200: SourceResponse },
    errors: [401, 404, 500],
    handler: async ({ params, em }) => ({ data: sourceJson(await loadSource(em, params.id)) }),
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
    errors: [400, 401, 404, 409, 500], errorCodes: ['source_exists'],
    handler: async ({ params, body, auth, deps, em }) => {
      const catalog = body.sourceMeta !== undefined ? await loadContactCatalog(deps.pool, auth.workspaceId) : contactCatalog([]);
      // Planned and applied under the row lock: concurrent PATCHes of one source take turns, so none
      // merges into a stale sourceMeta and the Schedule and the stored runFrequency change in the same order.
      const updated = await em.transactional(async (tx) => {
        const [row] = await lockSources(tx, [params.id]);
        if (!row) throw notFound('Source', params.id);
        return applyPatch(deps, tx, planPatch(row, body, catalog, ''));
      });
      return { data: sourceJson(updated) };
    },
  }),
];
