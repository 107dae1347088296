/**
 * Sources as use cases: create, filter, bulk upsert, PATCH (one or many, with the Temporal
 * Schedule of `runFrequency`) and the start of an audience pull. The routes
 * (api/routes/sources.ts) only adapt HTTP to these and shape the JSON; every statement goes
 * through the request's `scope`.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WorkspaceScope } from '../../db/scope.js';
import { loadContactCatalog } from '../../db/contactRead.js';
import { assertSegment, attachSourceToSegment } from '../../db/segmentLinks.js';
import {
  claimIdleSourcePull,
  claimStaleSourcePull,
  filterSourcesPage,
  findSource,
  insertOrFindSource,
  lockSources,
  setSourceRefreshStatus,
  sourceExists,
  sourceIdentityTaken,
  sourceOfRow,
  updateSource,
  upsertSources,
  type SourceEntity,
} from '../../db/sources.js';
import { contactCatalog, type ContactCatalog } from '../../domain/contactCatalog.js';
import { invalidField } from '../../domain/errors.js';
import { isUuid } from '../../domain/ids.js';
import { decodeToken, pageMeta, queryFingerprint, type TokenPayload } from '../../domain/pagination.js';
import { validateRunFrequency, type RunFrequency } from '../../domain/runFrequency.js';
import { DEFAULT_PAST_DAYS, isListeningSourceType, mergeSourceMeta, validateSourceInput } from '../../domain/sourceRules.js';
import type { SourcePullInput } from '../../workflows/contract/sources.js';
import type { AppDeps } from '../deps.js';
import { ApiError, conflict, conflictField, notFound } from '../errors.js';
import { startJob, type JobAcceptedBody } from '../jobs.js';
import type {
  BulkUpdateSourcesBody,
  BulkUpsertSourcesBody,
  CreateSourceBody,
  FilterSourcesBody,
  PatchSourceBody,
  PullBody,
} from '../schemas/sources.js';
import { deleteSourceSchedule, sourceScheduleId, upsertSourceSchedule } from '../sourceSchedules.js';

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

/** The source, or a 404 (a malformed id included). */
export async function loadSource(scope: WorkspaceScope, id: string): Promise<SourceEntity> {
  const row = isUuid(id) ? await findSource(scope.em, id) : null;
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
    // The body is valid; the stored source's type is what refuses it: a conflict with its state (409).
    if (patch.runFrequency !== null && !isListeningSourceType(row.sourceType)) {
      throw conflictField('source_not_pullable', `${ptr}/runFrequency`, `${row.sourceType} sources receive pushed rows and cannot be pulled periodically`);
    }
    if (patch.runFrequency === null) plan.runFrequency = null;
    else {
      // A field left out keeps its stored value.
      const merged = { ...row.runFrequency, ...patch.runFrequency };
      for (const f of ['numberOfPastDaysToSync', 'periodicInterval'] as const) {
        // the body is valid; the stored source lacks what it would keep: a conflict with its state (409), as above
        if (merged[f] === undefined) throw conflictField('run_frequency_incomplete', `${ptr}/runFrequency/${f}`, 'is required: the source has no runFrequency yet to take it from');
      }
      const rf = validateRunFrequency(merged as RunFrequency, `${ptr}/runFrequency`);
      plan.runFrequency = { numberOfPastDaysToSync: rf.numberOfPastDaysToSync, periodicInterval: rf.periodicInterval, intervalMs: rf.intervalMs };
    }
  }
  return plan;
}

/**
 * Applies a validated PATCH: the schedule first (idempotent), then the row. `tx` is the
 * transaction holding the source's row lock (`lockSources`), so the PATCHes of one source change
 * the Schedule and the row one after the other.
 */
async function applyPatch(deps: AppDeps, tx: EntityManager, plan: PatchPlan): Promise<SourceEntity> {
  const { row } = plan;
  if (plan.normalisedIdentifier) {
    // Checked before the schedule changes, so a refused PATCH leaves nothing behind.
    if (await sourceIdentityTaken(tx, row, plan.normalisedIdentifier)) throw sourceExists();
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
  return updateSource(tx, row, { sourceMeta: plan.sourceMeta, normalisedIdentifier: plan.normalisedIdentifier, runFrequency, scheduleId });
}

/** Creates the source, or finds the one with the same type and identity; attaches it to the segment named. */
export async function createSource(scope: WorkspaceScope, body: CreateSourceBody): Promise<SourceEntity> {
  const catalog = await loadContactCatalog(scope.db, scope.workspaceId);
  const norm = validateSourceInput(body, inCatalog(catalog));
  if (body.segmentId) await assertSegment(scope.em, body.segmentId);
  const { row } = await insertOrFindSource(scope.db, scope.workspaceId, norm, null);
  if (body.segmentId) await attachSourceToSegment(scope.db, body.segmentId, row.id);
  return sourceOfRow(scope.em, row);
}

/** One keyset page of the sources of one type, with its page tokens. */
export async function filterSources(scope: WorkspaceScope, secret: string, sourceType: string, body: FilterSourcesBody) {
  const limit = body.limit ?? 25;
  const fingerprint = queryFingerprint(scope.workspaceId, { r: 'sources', t: sourceType, c: body.conditions ?? [] });
  const from: TokenPayload | undefined = body.paginationToken ? decodeToken(secret, fingerprint, body.paginationToken) : undefined;
  const [afterId] = (from?.after ?? []) as [string?];
  if (from && (typeof afterId !== 'string' || !isUuid(afterId))) throw invalidField('/paginationToken', 'is malformed');
  const { rows, total } = await filterSourcesPage(scope, {
    sourceType,
    conditions: body.conditions,
    after: from ? { id: afterId!, dir: from.dir } : undefined,
    limit,
  });
  return pageMeta({ secret, fingerprint, rows, limit, totalRecords: total, keyOf: (r) => [r.id], from });
}

/** Creates or updates the sources in one transaction; the sources in input order and how many were created. */
export async function bulkUpsertSources(scope: WorkspaceScope, body: BulkUpsertSourcesBody) {
  const catalog = await loadContactCatalog(scope.db, scope.workspaceId);
  const items = body.sources.map((s, i) => {
    const norm = validateSourceInput(s, inCatalog(catalog), `/sources/${i}`);
    const given = Object.fromEntries(Object.entries(norm.sourceMeta).filter(([k]) => Object.hasOwn(s.sourceMeta ?? {}, k)));
    return { norm, given, segmentId: s.segmentId };
  });
  for (const segId of new Set(items.map((i) => i.segmentId).filter((x): x is string => !!x))) {
    await assertSegment(scope.em, segId);
  }
  const { rows, created } = await upsertSources(scope, items);
  return { sources: rows.map((r) => sourceOfRow(scope.em, r)), created };
}

/** PATCHes many sources: all are locked and checked before any changes. */
export async function bulkUpdateSources(scope: WorkspaceScope, deps: AppDeps, body: BulkUpdateSourcesBody): Promise<SourceEntity[]> {
  const catalog = await loadContactCatalog(scope.db, scope.workspaceId);
  return scope.em.transactional(async (tx) => {
    // Every source is locked before any is planned: each merges into what the last PATCH of it committed.
    const locked = new Map((await lockSources(tx, body.sources.map((s) => s.id))).map((r) => [r.id, r]));
    // An id listed twice is patched twice, in order: a later item is planned on what the earlier
    // ones leave, and the source changes once, to the result.
    const plans = new Map<string, PatchPlan>();
    const order = body.sources.map((s, i) => {
      const id = s.id.toLowerCase();
      const row = locked.get(id);
      if (!row) throw notFound('Source', s.id);
      const before = plans.get(id);
      const p = planPatch(before ? plannedRow(before) : row, s, catalog, `/sources/${i}`);
      const identity = p.normalisedIdentifier ?? before?.normalisedIdentifier;
      plans.set(id, {
        row,
        sourceMeta: p.sourceMeta ?? before?.sourceMeta,
        normalisedIdentifier: identity === row.normalisedIdentifier ? undefined : identity,
        runFrequency: p.runFrequency !== undefined ? p.runFrequency : before?.runFrequency,
      });
      return id;
    });
    const applied = new Map<string, SourceEntity>();
    for (const [id, p] of plans) applied.set(id, await applyPatch(deps, tx, p));
    return order.map((id) => applied.get(id)!);
  });
}

/** The source as a plan would leave it (what a later PATCH of the same bulk update is planned on). */
function plannedRow(p: PatchPlan): SourceEntity {
  const { numberOfPastDaysToSync, periodicInterval } = p.runFrequency ?? {};
  return {
    ...p.row,
    sourceMeta: p.sourceMeta ?? p.row.sourceMeta,
    normalisedIdentifier: p.normalisedIdentifier ?? p.row.normalisedIdentifier,
    runFrequency: p.runFrequency === undefined ? p.row.runFrequency : p.runFrequency && { numberOfPastDaysToSync: numberOfPastDaysToSync!, periodicInterval: periodicInterval! },
  } as SourceEntity;
}

/** PATCHes one source. */
export async function patchSource(scope: WorkspaceScope, deps: AppDeps, id: string, body: PatchSourceBody): Promise<SourceEntity> {
  const catalog = body.sourceMeta !== undefined ? await loadContactCatalog(scope.db, scope.workspaceId) : contactCatalog([]);
  // Planned and applied under the row lock: concurrent PATCHes of one source take turns, so none
  // merges into a stale sourceMeta and the Schedule and the stored runFrequency change in the same order.
  return scope.em.transactional(async (tx) => {
    const [row] = await lockSources(tx, [id]);
    if (!row) throw notFound('Source', id);
    return applyPatch(deps, tx, planPatch(row, body, catalog, ''));
  });
}

/** Claims the source for one pull and starts the `source-pull` job; a job that cannot start gives the source back its status. */
export async function pullSource(scope: WorkspaceScope, deps: AppDeps, id: string, body: PullBody): Promise<JobAcceptedBody> {
  const row = await loadSource(scope, id);
  if (!isListeningSourceType(row.sourceType)) {
    throw new ApiError(409, 'source_not_pullable', `${row.sourceType} sources receive pushed rows (POST /contacts/{sourceId}); they have no audience to pull`, [
      { path: '/id', message: 'is not a listening source' },
    ]);
  }
  if (body.segmentId) await assertSegment(scope.em, body.segmentId);
  const previousStatus = row.refreshStatus ?? null;
  await claimPull(deps, scope.em, row.id);
  const args: SourcePullInput = {
    sourceId: row.id,
    segmentId: body.segmentId ?? null,
    numberOfPastDaysToSync: body.numberOfPastDaysToSync ?? DEFAULT_PAST_DAYS,
    trigger: 'api',
  };
  return startJob(deps, {
    workspaceId: scope.workspaceId,
    job: 'source-pull',
    args,
    searchAttributes: { SourceId: row.id },
    message: 'Accepted: the audience is pulled in the background; poll jobStatusEndpoint for its status',
  }).catch(async (e: unknown) => {
    // no pull started: give the source back its previous status
    await setSourceRefreshStatus(scope.em, row.id, previousStatus);
    throw e;
  });
}
