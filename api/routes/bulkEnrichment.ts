/**
 * Bulk enrichment (issue 32): a dry-run estimate, the job (workflows/bulkEnrichment.ts) over a
 * segment, a filtered set or a list of contact ids, its summary and per-row traces, pause /
 * resume / cancel, the provenance of what enrichment wrote on a contact, and the workspace's
 * default freshness window. Rows are planned with the single-row rules (domain/bulkEnrichment.ts).
 */
import { v7 as uuidv7 } from 'uuid';
import { WorkflowNotFoundError } from '@temporalio/client';
import { conflict, notFound } from '../errors.js';
import { badRequest } from '../../domain/errors.js';
import { assertWebhookConfiguration } from '../outboundUrls.js';
import { defineRoute, reply, type RouteInput } from '../route.js';
import { startJob } from '../jobs.js';
import { JobAccepted } from '../schemas/common.js';
import { ContactIdParams } from '../schemas/contacts.js';
import {
  BulkEnrichmentBody,
  BulkEnrichmentEstimate,
  BulkEnrichmentEstimateBody,
  BulkEnrichmentRows,
  BulkEnrichmentSummaryResponse,
  BulkJobActionParams,
  BulkJobParams,
  BulkRowsQuery,
  ContactEnrichmentResponse,
  EnrichmentSettingsBody,
  EnrichmentSettingsResponse,
} from '../schemas/bulkEnrichment.js';
import {
  bulkJobRows,
  bulkJobSummary,
  contactEnrichments,
  createBulkJob,
  deleteBulkJob,
  missingContactIds,
  readBulkJob,
  readFreshnessDays,
  readSelection,
  writeFreshnessDays,
  type Selection,
} from '../../db/bulkEnrichment.js';
import { loadContactCatalog, fetchContact } from '../../db/contactRead.js';
import { ensureDefaultSegment, findSegment } from '../../db/segments.js';
import { contactWhere } from '../../db/contactColumns.js';
import { segmentMembershipWhere } from '../../db/segmentMembership.js';
import { addToEstimate, DEFAULT_FRESHNESS_DAYS, emptyEstimate, planRow } from '../../domain/bulkEnrichment.js';
import { loadEnrichmentConfig } from '../../infra/enrichmentConfigFile.js';
import { type EnrichmentConfig } from '../../domain/enrichmentConfig.js';
import { isUuid } from '../../domain/ids.js';
import { bulkEnrichmentPauseSignal, bulkEnrichmentResumeSignal, type BulkEnrichmentInput } from '../../workflows/contract/enrichment.js';
import { jobWorkflowId, type JobKey } from '../../workflows/contract/jobs.js';
import type { AppDeps } from '../deps.js';

const JOB_TYPE = 'bulk-enrichment' satisfies JobKey;

type SelectionBody = Pick<BulkEnrichmentEstimateBody, 'fields' | 'segmentId' | 'conditions' | 'groupedCondition' | 'contactIds' | 'freshnessDays'>;

/** The request's contacts as a selection, after its rules: one of segmentId / conditions / contactIds, every id known. */
async function selectionOf(body: SelectionBody, { auth, deps, em }: Pick<RouteInput<unknown, unknown, unknown>, 'auth' | 'deps' | 'em'>): Promise<Selection> {
  if (body.contactIds) {
    if (body.segmentId || body.conditions || body.groupedCondition) {
      throw badRequest('selection_conflict', 'contactIds is sent alone: not with segmentId, conditions or groupedCondition', [{ path: '/contactIds', message: 'not with segmentId or conditions' }]);
    }
    // One row per contact: ids differing only in case name the same contact (first one kept).
    const contactIds = [...new Set(body.contactIds.map((id) => id.toLowerCase()))];
    const missing = await missingContactIds(deps.pool, auth.workspaceId, contactIds);
    if (missing.length) {
      throw badRequest('contacts_not_found', `No active contact ${missing.join(', ')} in this workspace`, [{ path: '/contactIds', message: `unknown: ${missing.join(', ')}` }]);
    }
    return { contactIds };
  }
  if (!body.segmentId && body.conditions === undefined && body.groupedCondition === undefined) {
    throw badRequest('selection_required', 'Name the contacts: segmentId, conditions / groupedCondition, or contactIds', [{ path: '/segmentId', message: 'or conditions, or contactIds' }]);
  }
  const catalog = await loadContactCatalog(deps.pool, auth.workspaceId);
  const where = contactWhere(catalog, body);
  if (!body.segmentId) return { wheres: [where.sql], joinKeys: where.joins };
  await ensureDefaultSegment(em, auth.workspaceId);
  const seg = isUuid(body.segmentId) ? await findSegment(em, body.segmentId) : null;
  if (!seg) throw notFound('Segment', body.segmentId);
  const scope = segmentMembershipWhere(
    { isDefault: seg.isDefault, segmentSources: seg.segmentSources, conditions: seg.conditions, groupedCondition: seg.groupedCondition },
    catalog,
  );
  return { wheres: [scope.sql, where.sql], joinKeys: [...scope.joins, ...where.joins] };
}

/** The configuration the job will use; every requested slice must have a provider. */
function configFor(deps: AppDeps, fields: SelectionBody['fields']): EnrichmentConfig {
  const config = loadEnrichmentConfig(deps.config.rootDir, deps.config.env);
  for (const slice of fields) {
    if (config.waterfall[slice].length === 0) throw badRequest('slice_not_available', `No provider is configured for ${slice}`, [{ path: '/fields', message: `${slice} is not available` }]);
  }
  return config;
}

async function freshnessOf(deps: AppDeps, workspaceId: string, requested: number | undefined): Promise<number> {
  return requested ?? (await readFreshnessDays(deps.pool, workspaceId)) ?? DEFAULT_FRESHNESS_DAYS;
}

async function summaryOf(deps: AppDeps, workspaceId: string, jobId: string) {
  const s = isUuid(jobId) ? await bulkJobSummary(deps.pool, workspaceId, jobId) : null;
  if (!s) throw notFound('Bulk enrichment job', jobId);
  return s;
}

const until = async (check: () => Promise<boolean>, ms: number) => {
  for (const deadline = Date.now() + ms; Date.now() < deadline && !(await check()); ) await new Promise((r) => setTimeout(r, 50));
};

export const bulkEnrichmentRoutes = [
  defineRoute({
    method: 'post',
    path: '/contacts/bulk-enrichment/estimate',
    tag: 'Contacts',
    summary: 'Estimate a bulk enrichment (dry run: no provider is called, nothing is charged)',
    description: [
      'Plans every selected contact as `POST /contacts/bulk-enrichment` would: per slice, the rows that would buy it, the rows skipped',
      'because their data is younger than the freshness window (cost 0), and the rows the configured providers cannot look up (e.g. no',
      '`pronet`). `minCredits` is the price if every slice to buy is found by its first provider, `maxCredits` if each is found by its',
      'last (the most the job can cost); a slice no provider finds costs nothing.',
    ].join(' '),
    body: BulkEnrichmentEstimateBody,
    responses: { 200: BulkEnrichmentEstimate },
    errors: [400, 401, 404, 413, 500], errorCodes: ['selection_required', 'selection_conflict', 'contacts_not_found'],
    bodyLimit: 'bulk',
    handler: async (input) => {
      const { body, auth, deps } = input;
      const config = configFor(deps, body.fields);
      const sel = await selectionOf(body, input);
      const contacts = await readSelection(deps.pool, auth.workspaceId, sel, await freshnessOf(deps, auth.workspaceId, body.freshnessDays));
      const estimate = emptyEstimate(body.fields);
      for (const c of contacts) addToEstimate(estimate, planRow(c, body.fields, config, new Set(c.fresh), body.force ?? false));
      return { data: estimate };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/contacts/bulk-enrichment',
    tag: 'Contacts',
    summary: 'Enrich a segment, a filtered set or a list of contacts as one job',
    description: [
      'Starts a job that enriches each selected contact (`segmentId`, the filter-contacts `conditions` / `groupedCondition`, or up to',
      '100,000 `contactIds`) for the requested slices, with the waterfall, prices and lookups of `POST /contacts/unified-data-api`',
      '(lookup from the contact\'s `pronet`, name and company website). Found data is written onto the contact (name and title from',
      '`basic_contact_data`, new addresses appended to `emails`) and kept per slice with its provider, time and job',
      '(`GET /contacts/{id}/enrichment`). A slice enriched within `freshnessDays` is not bought again (cost 0) unless `force`.',
      'Each found slice is charged once per (job, contact, slice), so a worker restart never charges or writes twice; a provider\'s',
      '429 slows the job (waits its Retry-After) and never fails a row. With `maxCredits`, the job stops before the first row whose',
      'charges would pass the budget; that row and the rest end `not_reached`. Progress: `GET /jobs/{jobId}` (batches) or',
      '`GET /contacts/bulk-enrichment/{jobId}` (rows); per-row traces: `…/{jobId}/rows`; pause/resume/cancel: `POST …/{jobId}/{action}`.',
      'The result (`jobResponsePayload`, also sent to `webhookConfiguration`) is the job\'s counts.',
    ].join(' '),
    body: BulkEnrichmentBody,
    responses: { 202: JobAccepted },
    errors: [400, 401, 404, 409, 413, 422, 429, 500], errorCodes: ['selection_required', 'selection_conflict', 'contacts_not_found'],
    bodyLimit: 'bulk',
    idempotent: true,
    handler: async (input) => {
      const { body, auth, deps } = input;
      const config = configFor(deps, body.fields);
      await assertWebhookConfiguration(body.webhookConfiguration, deps.config.outboundAllowList);
      const sel = await selectionOf(body, input);
      const jobId = uuidv7();
      const total = await createBulkJob(
        deps.pool,
        {
          jobId,
          workspaceId: auth.workspaceId,
          slices: body.fields,
          plan: config,
          maxCredits: body.maxCredits ?? null,
          freshnessDays: await freshnessOf(deps, auth.workspaceId, body.freshnessDays),
          force: body.force ?? false,
          billable: auth.billable,
        },
        sel,
      );
      const args: BulkEnrichmentInput = { total };
      try {
        const accepted = await startJob(deps, {
          workspaceId: auth.workspaceId,
          job: JOB_TYPE,
          jobId,
          args,
          webhook: body.webhookConfiguration ?? null,
          message: `Bulk enrichment of ${total} contacts accepted; poll jobStatusEndpoint or GET /contacts/bulk-enrichment/${jobId}`,
        });
        return reply(202, accepted);
      } catch (e) {
        await deleteBulkJob(deps.pool, auth.workspaceId, jobId);
        throw e;
      }
    },
  }),

  defineRoute({
    method: 'get',
    path: '/contacts/bulk-enrichment/{jobId}',
    tag: 'Contacts',
    summary: 'Rows of a bulk enrichment by status, credits charged and outcomes per slice',
    params: BulkJobParams,
    responses: { 200: BulkEnrichmentSummaryResponse },
    errors: [401, 404, 500],
    handler: async ({ params, auth, deps }) => ({ data: await summaryOf(deps, auth.workspaceId, params.jobId) }),
  }),

  defineRoute({
    method: 'get',
    path: '/contacts/bulk-enrichment/{jobId}/rows',
    tag: 'Contacts',
    summary: 'Per-row trace of a bulk enrichment: providers tried per slice, hit or miss, credits',
    params: BulkJobParams,
    query: BulkRowsQuery,
    responses: { 200: BulkEnrichmentRows },
    errors: [400, 401, 404, 500],
    handler: async ({ params, query, auth, deps }) => {
      await summaryOf(deps, auth.workspaceId, params.jobId);
      const limit = query.limit ?? 100;
      const data = await bulkJobRows(deps.pool, auth.workspaceId, params.jobId, query.after ?? -1, limit, query.status);
      return { data, meta: { nextAfter: data.length === limit ? data.at(-1)!.seq : null } };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/contacts/bulk-enrichment/{jobId}/{action}',
    tag: 'Contacts',
    summary: 'Pause, resume or cancel a bulk enrichment',
    description:
      '`pause` stops the job between two rows (rows done stay done) until `resume`. `cancel` stops it at once: the answer counts the rows ' +
      'done (charged and written) and the rows cancelled. 409 `job_not_running` when the job has ended.',
    params: BulkJobActionParams,
    responses: { 200: BulkEnrichmentSummaryResponse },
    errors: [401, 404, 409, 500],
    handler: async ({ params, auth, deps }) => {
      const job = isUuid(params.jobId) ? await readBulkJob(deps.pool, auth.workspaceId, params.jobId) : null;
      if (!job) throw notFound('Bulk enrichment job', params.jobId);
      const handle = deps.temporal.workflow.getHandle(jobWorkflowId(JOB_TYPE, job.jobId));
      try {
        const desc = await handle.describe();
        if (desc.status.name !== 'RUNNING') throw conflict(`Job ${job.jobId} has already ended`, 'job_not_running');
      } catch (e) {
        if (e instanceof WorkflowNotFoundError) throw conflict(`Job ${job.jobId} has not started`, 'job_not_running');
        throw e;
      }
      const state = async () => (await readBulkJob(deps.pool, auth.workspaceId, job.jobId))?.state;
      if (params.action === 'pause') {
        await handle.signal(bulkEnrichmentPauseSignal);
        await until(async () => (await state()) !== 'running', 3000);
      } else if (params.action === 'resume') {
        await handle.signal(bulkEnrichmentResumeSignal);
        await until(async () => (await state()) !== 'paused', 3000);
      } else {
        await handle.cancel();
        await until(async () => (await state()) === 'cancelled', 3000);
      }
      return { data: await summaryOf(deps, auth.workspaceId, job.jobId) };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/contacts/{id}/enrichment',
    tag: 'Contacts',
    summary: 'What enrichment wrote on a contact: per slice the data, the fields written, provider, time and job',
    params: ContactIdParams,
    responses: { 200: ContactEnrichmentResponse },
    errors: [401, 404, 500],
    handler: async ({ params, auth, deps }) => {
      if (!isUuid(params.id) || !(await fetchContact(deps.pool, auth.workspaceId, params.id))) throw notFound('Contact', params.id);
      return { data: await contactEnrichments(deps.pool, auth.workspaceId, params.id) };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/enrichment/settings',
    tag: 'Contacts',
    summary: 'The workspace\'s enrichment settings (default freshness window)',
    responses: { 200: EnrichmentSettingsResponse },
    errors: [401, 500],
    handler: async ({ auth, deps }) => ({ data: { freshnessDays: (await readFreshnessDays(deps.pool, auth.workspaceId)) ?? DEFAULT_FRESHNESS_DAYS } }),
  }),

  defineRoute({
    method: 'put',
    path: '/enrichment/settings',
    tag: 'Contacts',
    summary: 'Set the workspace\'s default freshness window of bulk enrichment',
    body: EnrichmentSettingsBody,
    responses: { 200: EnrichmentSettingsResponse },
    errors: [400, 401, 500],
    handler: async ({ body, auth, deps }) => {
      await writeFreshnessDays(deps.pool, auth.workspaceId, body.freshnessDays);
      return { data: { freshnessDays: body.freshnessDays } };
    },
  }),
];
