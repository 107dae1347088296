/**
 * Bulk enrichment (issue 32): a dry-run estimate, the job (workflows/bulkEnrichment.ts) over a
 * segment, a filtered set or a list of contact ids, its summary and per-row traces, pause /
 * resume / cancel, the provenance of what enrichment wrote on a contact, and the workspace's
 * default freshness window. Rows are planned with the single-row rules (domain/bulkEnrichment.ts).
 * The steps are use cases in api/usecases/bulkEnrichment.ts; the routes adapt HTTP to them.
 */
import { notFound } from '../errors.js';
import { defineRoute, reply } from '../route.js';
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
import { bulkJobRows, contactEnrichments, writeFreshnessDays } from '../../db/bulkEnrichment.js';
import { fetchContact } from '../../db/contactRead.js';
import { isUuid } from '../../domain/ids.js';
import { bulkEnrichmentSummary, controlBulkEnrichment, estimateBulkEnrichment, freshnessDaysOf, startBulkEnrichment } from '../usecases/bulkEnrichment.js';

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
    handler: async ({ body, deps, scope }) => ({ data: await estimateBulkEnrichment(scope, deps, body) }),
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
    handler: async ({ body, auth, deps, scope }) => reply(202, await startBulkEnrichment(scope, deps, auth, body)),
  }),

  defineRoute({
    method: 'get',
    path: '/contacts/bulk-enrichment/{jobId}',
    tag: 'Contacts',
    summary: 'Rows of a bulk enrichment by status, credits charged and outcomes per slice',
    params: BulkJobParams,
    responses: { 200: BulkEnrichmentSummaryResponse },
    errors: [401, 404, 500],
    handler: async ({ params, scope }) => ({ data: await bulkEnrichmentSummary(scope, params.jobId) }),
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
    handler: async ({ params, query, scope }) => {
      await bulkEnrichmentSummary(scope, params.jobId);
      const limit = query.limit ?? 100;
      const data = await bulkJobRows(scope, params.jobId, query.after ?? -1, limit, query.status);
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
    errors: [401, 404, 500],
    errorCodes: ['job_not_running'],
    handler: async ({ params, deps, scope }) => ({ data: await controlBulkEnrichment(scope, deps, params.jobId, params.action) }),
  }),

  defineRoute({
    method: 'get',
    path: '/contacts/{id}/enrichment',
    tag: 'Contacts',
    summary: 'What enrichment wrote on a contact: per slice the data, the fields written, provider, time and job',
    params: ContactIdParams,
    responses: { 200: ContactEnrichmentResponse },
    errors: [401, 404, 500],
    handler: async ({ params, scope }) => {
      if (!isUuid(params.id) || !(await fetchContact(scope.db, scope.workspaceId, params.id))) throw notFound('Contact', params.id);
      return { data: await contactEnrichments(scope, params.id) };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/enrichment/settings',
    tag: 'Contacts',
    summary: 'The workspace\'s enrichment settings (default freshness window)',
    responses: { 200: EnrichmentSettingsResponse },
    errors: [401, 500],
    handler: async ({ scope }) => ({ data: { freshnessDays: await freshnessDaysOf(scope) } }),
  }),

  defineRoute({
    method: 'put',
    path: '/enrichment/settings',
    tag: 'Contacts',
    summary: 'Set the workspace\'s default freshness window of bulk enrichment',
    body: EnrichmentSettingsBody,
    responses: { 200: EnrichmentSettingsResponse },
    errors: [400, 401, 500],
    handler: async ({ body, scope }) => {
      await writeFreshnessDays(scope, body.freshnessDays);
      return { data: { freshnessDays: body.freshnessDays } };
    },
  }),
];
