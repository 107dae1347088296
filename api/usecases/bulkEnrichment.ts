/**
 * Bulk enrichment (issue 32) as use cases: the dry-run estimate, starting the job over a
 * selection, its summary, and pause / resume / cancel. The routes (api/routes/bulkEnrichment.ts)
 * only adapt HTTP to these; every statement goes through the request's `scope`.
 */
import { v7 as uuidv7 } from 'uuid';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { WorkspaceScope } from '../../db/scope.js';
import {
  bulkJobSummary,
  createBulkJob,
  deleteBulkJob,
  missingContactIds,
  readBulkJob,
  readFreshnessDays,
  readSelection,
  type Selection,
} from '../../db/bulkEnrichment.js';
import { loadContactCatalog } from '../../db/contactRead.js';
import { contactWhere } from '../../db/contactColumns.js';
import { segmentMembershipWhere } from '../../db/segmentMembership.js';
import { ensureDefaultSegment, findSegment } from '../../db/segments.js';
import { addToEstimate, DEFAULT_FRESHNESS_DAYS, emptyEstimate, planRow } from '../../domain/bulkEnrichment.js';
import type { EnrichmentConfig } from '../../domain/enrichmentConfig.js';
import { badRequest } from '../../domain/errors.js';
import { isUuid } from '../../domain/ids.js';
import { loadEnrichmentConfig } from '../../infra/enrichmentConfigFile.js';
import { bulkEnrichmentPauseSignal, bulkEnrichmentResumeSignal, type BulkEnrichmentInput } from '../../workflows/contract/enrichment.js';
import { jobWorkflowId, type JobKey } from '../../workflows/contract/jobs.js';
import type { AuthContext } from '../middleware/auth.js';
import type { AppDeps } from '../deps.js';
import { ApiError, conflict, notFound } from '../errors.js';
import { startJob, type JobAcceptedBody } from '../jobs.js';
import { assertWebhookConfiguration } from '../outboundUrls.js';
import type { BulkEnrichmentBody, BulkEnrichmentEstimateBody } from '../schemas/bulkEnrichment.js';

const JOB_TYPE = 'bulk-enrichment' satisfies JobKey;

type SelectionBody = Pick<BulkEnrichmentEstimateBody, 'fields' | 'segmentId' | 'conditions' | 'groupedCondition' | 'contactIds' | 'freshnessDays'>;

/** The request's contacts as a selection, after its rules: one of segmentId / conditions / contactIds, every id known. */
async function selectionOf(scope: WorkspaceScope, body: SelectionBody): Promise<Selection> {
  if (body.contactIds) {
    if (body.segmentId || body.conditions || body.groupedCondition) {
      throw badRequest('selection_conflict', 'contactIds is sent alone: not with segmentId, conditions or groupedCondition', [{ path: '/contactIds', message: 'not with segmentId or conditions' }]);
    }
    // One row per contact: ids differing only in case name the same contact (first one kept).
    const contactIds = [...new Set(body.contactIds.map((id) => id.toLowerCase()))];
    const missing = await missingContactIds(scope, contactIds);
    if (missing.length) {
      // a well-formed reference to something the workspace does not have: 404, like a missing path id
      throw new ApiError(404, 'contacts_not_found', `No active contact ${missing.join(', ')} in this workspace`, [{ path: '/contactIds', message: `unknown: ${missing.join(', ')}` }]);
    }
    return { contactIds };
  }
  if (!body.segmentId && body.conditions === undefined && body.groupedCondition === undefined) {
    throw badRequest('selection_required', 'Name the contacts: segmentId, conditions / groupedCondition, or contactIds', [{ path: '/segmentId', message: 'or conditions, or contactIds' }]);
  }
  const catalog = await loadContactCatalog(scope.db, scope.workspaceId);
  const where = contactWhere(catalog, body);
  if (!body.segmentId) return { wheres: [where.sql], joinKeys: where.joins };
  await ensureDefaultSegment(scope.em, scope.workspaceId);
  const seg = isUuid(body.segmentId) ? await findSegment(scope.em, body.segmentId) : null;
  if (!seg) throw notFound('Segment', body.segmentId);
  const members = segmentMembershipWhere(
    { isDefault: seg.isDefault, segmentSources: seg.segmentSources, conditions: seg.conditions, groupedCondition: seg.groupedCondition },
    catalog,
  );
  return { wheres: [members.sql, where.sql], joinKeys: [...members.joins, ...where.joins] };
}

/** The configuration the job will use; every requested slice must have a provider. */
function configFor(deps: AppDeps, fields: SelectionBody['fields']): EnrichmentConfig {
  const config = loadEnrichmentConfig(deps.config.rootDir, deps.config.env);
  for (const slice of fields) {
    if (config.waterfall[slice].length === 0) throw badRequest('slice_not_available', `No provider is configured for ${slice}`, [{ path: '/fields', message: `${slice} is not available` }]);
  }
  return config;
}

/** The workspace's default freshness window, when the request names none. */
export async function freshnessDaysOf(scope: WorkspaceScope, requested?: number): Promise<number> {
  return requested ?? (await readFreshnessDays(scope)) ?? DEFAULT_FRESHNESS_DAYS;
}

/** The job's summary, or a 404 (a malformed id included). */
export async function bulkEnrichmentSummary(scope: WorkspaceScope, jobId: string) {
  const s = isUuid(jobId) ? await bulkJobSummary(scope.db, scope.workspaceId, jobId) : null;
  if (!s) throw notFound('Bulk enrichment job', jobId);
  return s;
}

/** The dry run: what the job would buy, skip and cost, with no provider called. */
export async function estimateBulkEnrichment(scope: WorkspaceScope, deps: AppDeps, body: BulkEnrichmentEstimateBody) {
  const config = configFor(deps, body.fields);
  const sel = await selectionOf(scope, body);
  const contacts = await readSelection(scope, sel, await freshnessDaysOf(scope, body.freshnessDays));
  const estimate = emptyEstimate(body.fields);
  for (const c of contacts) addToEstimate(estimate, planRow(c, body.fields, config, new Set(c.fresh), body.force ?? false));
  return estimate;
}

/** Records the job and its rows, then starts its workflow; a job whose workflow cannot start is dropped. */
export async function startBulkEnrichment(scope: WorkspaceScope, deps: AppDeps, auth: AuthContext, body: BulkEnrichmentBody): Promise<JobAcceptedBody> {
  const config = configFor(deps, body.fields);
  await assertWebhookConfiguration(body.webhookConfiguration, deps.config.outboundAllowList);
  const sel = await selectionOf(scope, body);
  const jobId = uuidv7();
  const total = await createBulkJob(
    scope,
    {
      jobId,
      slices: body.fields,
      plan: config,
      maxCredits: body.maxCredits ?? null,
      freshnessDays: await freshnessDaysOf(scope, body.freshnessDays),
      force: body.force ?? false,
      billable: auth.billable,
    },
    sel,
  );
  const args: BulkEnrichmentInput = { total };
  try {
    return await startJob(deps, {
      workspaceId: scope.workspaceId,
      job: JOB_TYPE,
      jobId,
      args,
      webhook: body.webhookConfiguration ?? null,
      message: `Bulk enrichment of ${total} contacts accepted; poll jobStatusEndpoint or GET /contacts/bulk-enrichment/${jobId}`,
    });
  } catch (e) {
    await deleteBulkJob(scope, jobId);
    throw e;
  }
}

const until = async (check: () => Promise<boolean>, ms: number) => {
  for (const deadline = Date.now() + ms; Date.now() < deadline && !(await check()); ) await new Promise((r) => setTimeout(r, 50));
};

/** Pauses, resumes or cancels a running job, waits (briefly) for the job to take it, and answers its summary. */
export async function controlBulkEnrichment(scope: WorkspaceScope, deps: AppDeps, jobId: string, action: 'pause' | 'resume' | 'cancel') {
  const job = isUuid(jobId) ? await readBulkJob(scope.db, scope.workspaceId, jobId) : null;
  if (!job) throw notFound('Bulk enrichment job', jobId);
  const handle = deps.temporal.workflow.getHandle(jobWorkflowId(JOB_TYPE, job.jobId));
  try {
    const desc = await handle.describe();
    if (desc.status.name !== 'RUNNING') throw conflict(`Job ${job.jobId} has already ended`, 'job_not_running');
  } catch (e) {
    if (e instanceof WorkflowNotFoundError) throw conflict(`Job ${job.jobId} has not started`, 'job_not_running');
    throw e;
  }
  const state = async () => (await readBulkJob(scope.db, scope.workspaceId, job.jobId))?.state;
  if (action === 'pause') {
    await handle.signal(bulkEnrichmentPauseSignal);
    await until(async () => (await state()) !== 'running', 3000);
  } else if (action === 'resume') {
    await handle.signal(bulkEnrichmentResumeSignal);
    await until(async () => (await state()) !== 'paused', 3000);
  } else {
    await handle.cancel();
    await until(async () => (await state()) === 'cancelled', 3000);
  }
  return bulkEnrichmentSummary(scope, job.jobId);
}
