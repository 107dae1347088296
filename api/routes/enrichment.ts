/**
 * `POST /contacts/unified-data-api`: validates the request against the enrichment rules and the
 * configured waterfall (domain/enrichment.ts), refuses up front (402) what the balance cannot
 * cover at the request's maximum price, and starts the enrichment job (workflows/enrichment.ts).
 */
import { assertOutboundUrl } from '../../activities/outbound.js';
import { getBalance } from '../../db/credits.js';
import { loadEnrichmentConfig, planEnrichment } from '../../domain/enrichment.js';
import { insufficientCredits } from '../../domain/errors.js';
import { startJob } from '../jobs.js';
import { defineRoute, reply } from '../route.js';
import { JobAccepted } from '../schemas/common.js';
import { UnifiedDataBody } from '../schemas/enrichment.js';
import type { EnrichmentWorkflowInput } from '../../workflows/enrichment.js';

export const enrichmentRoutes = [
  defineRoute({
    method: 'post',
    path: '/contacts/unified-data-api',
    tag: 'Contacts',
    summary: 'Enrich a contact asynchronously (provider waterfall per slice)',
    description: [
      'Starts an enrichment job. Each requested slice (`basic_contact_data`, `basic_company_data`, `emails`, `phoneNumbers`, `pronetPosts`)',
      'tries its configured providers in order until one finds data. `pronet` is required for every slice but `emails`, which can also be',
      'found by `companyWebsite` with `fullName` (or `firstName` + `lastName`). Poll `jobStatusEndpoint` (GET /jobs/{jobId}) or pass',
      '`webhookConfiguration`; the result (`jobResponsePayload`) is `{contact, company, emails[], phoneNumbers[], pronetPosts[],',
      'slices{<slice>: {status, provider, credits, attempts[]}}, creditsCharged}`. Credits per found slice: basic data 1, emails 4/5/6 and',
      'phoneNumbers 10/20/30 by how many providers were tried, pronetPosts 10; nothing for a slice not found. The balance must cover the',
      "request's maximum price when it is accepted (402 otherwise).",
    ].join(' '),
    body: UnifiedDataBody,
    responses: { 202: JobAccepted },
    errors: [400, 401, 402, 409, 422, 429, 500],
    idempotent: true,
    handler: async ({ body, auth, deps }) => {
      const plan = planEnrichment(body, loadEnrichmentConfig(deps.config.rootDir, deps.config.env));
      if (body.webhookConfiguration) {
        await assertOutboundUrl(body.webhookConfiguration.url, deps.config.outboundAllowList, '/webhookConfiguration/url');
      }
      if (auth.billable) {
        const balance = await getBalance(deps.pool, auth.workspaceId);
        if (balance < plan.maxCredits) throw insufficientCredits(plan.maxCredits, balance);
      }
      const args: EnrichmentWorkflowInput = { plan, billable: auth.billable };
      const accepted = await startJob(deps, {
        workspaceId: auth.workspaceId,
        type: 'enrichment',
        workflowType: 'enrichmentWorkflow',
        args,
        webhook: body.webhookConfiguration ?? null,
        message: `Enrichment of ${Object.keys(plan.slices).join(', ')} accepted; poll jobStatusEndpoint for the result`,
      });
      return reply(202, accepted);
    },
  }),
];
