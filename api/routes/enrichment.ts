/**
 * `POST /contacts/unified-data-api`: validates the request against the enrichment rules and the
 * configured waterfall (domain/enrichment.ts), reserves the request's maximum price as a hold in
 * the ledger (402 when the balance cannot cover it), and starts the enrichment job
 * (workflows/enrichment.ts), which settles the real price and releases the rest.
 */
import { v7 as uuidv7 } from 'uuid';
import { assertWebhookConfiguration } from '../outboundUrls.js';
import { holdCredits, releaseHold } from '../../db/credits.js';
import { loadEnrichmentConfig } from '../../infra/enrichmentConfigFile.js';
import { planEnrichment } from '../../domain/enrichmentPlan.js';
import { startJob } from '../jobs.js';
import { unprocessable } from '../errors.js';
import { isSuppressed, suppressionKey } from '../../db/privacy.js';
import { defineRoute, reply } from '../route.js';
import { JobAccepted } from '../schemas/common.js';
import { UnifiedDataBody } from '../schemas/enrichment.js';
import type { EnrichmentWorkflowInput } from '../../workflows/contract/enrichment.js';

export const enrichmentRoutes = [
  defineRoute({
    method: 'post',
    path: '/contacts/unified-data-api',
    tag: 'Contacts',
    summary: 'Enrich a contact asynchronously (provider waterfall per slice)',
    description: [
      'Starts an enrichment job. Each requested slice (`basic_contact_data`, `basic_company_data`, `emails`, `phoneNumbers`, `pronetPosts`)',
      'tries its configured providers in order until one finds data. `pronet` is required for every slice but `emails`, which can also be',
      'found by `fullName` (or `firstName` + `lastName`), with `companyWebsite` or alone, by the providers that accept such lookups; names and',
      '`companyWebsite` beside `pronet` are accepted for any slice. A lookup that finds nothing ends `not_found` at no charge. Poll `jobStatusEndpoint` (GET /jobs/{jobId}) or pass',
      '`webhookConfiguration`; the result (`jobResponsePayload`) is `{contact, company, emails[], phoneNumbers[], pronetPosts[],',
      'slices{<slice>: {status, provider, credits, attempts[]}}, creditsCharged}`. Credits per found slice: basic data 1, emails 4/5/6 and',
      'phoneNumbers 10/20/30 by how many providers were tried, pronetPosts 10; nothing for a slice not found. The request\'s maximum price',
      'is reserved when it is accepted (a `hold` in `GET /credits/transactions`; 402 `insufficient_credits` when the balance cannot cover',
      'it, so concurrent requests never spend the same credits); when the job ends the hold is released in full in the same transaction',
      'that debits the real price (`release` + `debit` rows), or released alone if the job fails. Session keys hold and pay nothing.',
    ].join(' '),
    body: UnifiedDataBody,
    examples: { request: { fields: ['emails', 'phoneNumbers'], pronet: 'https://pronet.example/in/ada-lovelace' } },
    responses: { 202: JobAccepted },
    errors: [400, 401, 402, 409, 422, 429, 500], errorCodes: ['pronet_required', 'slice_not_available', 'person_suppressed'],
    idempotent: true,
    handler: async ({ body, auth, deps, em }) => {
      const plan = planEnrichment(body, loadEnrichmentConfig(deps.config.rootDir, deps.config.env));
      await assertWebhookConfiguration(body.webhookConfiguration, deps.config.outboundAllowList);
      // A person on the suppression list is refused before any hold or provider call: it costs nothing.
      if (await isSuppressed(deps.pool, auth.workspaceId, { profileUrl: plan.lookup.pronet }, suppressionKey(deps.config.serverSecret)))
        throw unprocessable('person_suppressed', 'The person named by pronet is on the workspace suppression list (docs/PRIVACY.md); nothing was charged');
      const jobId = uuidv7();
      await holdCredits(deps.pool, { workspaceId: auth.workspaceId, jobId, amount: plan.maxCredits, reason: 'enrichment hold (maximum price)', billable: auth.billable });
      const args: EnrichmentWorkflowInput = { plan, billable: auth.billable };
      try {
        const accepted = await startJob(deps, {
          workspaceId: auth.workspaceId,
          job: 'enrichment',
          jobId,
          args,
          webhook: body.webhookConfiguration ?? null,
          message: `Enrichment of ${Object.keys(plan.slices).join(', ')} accepted; poll jobStatusEndpoint for the result`,
        });
        return reply(202, accepted);
      } catch (e) {
        // No job runs: nothing will settle the hold.
        await releaseHold(deps.pool, auth.workspaceId, jobId);
        throw e;
      }
    },
  }),
];
