/**
 * `POST /contacts/unified-data-api`: validates the request against the enrichment rules and the
 * configured waterfall, reserves the request's maximum price as a hold in the ledger (402 when
 * the balance cannot cover it), and starts the enrichment job (workflows/enrichment.ts), which
 * settles the real price and releases the rest. The steps: api/usecases/startEnrichment.ts.
 */
import { defineRoute, reply } from '../route.js';
import { JobAccepted } from '../schemas/common.js';
import { UnifiedDataBody } from '../schemas/enrichment.js';
import { startEnrichment } from '../usecases/startEnrichment.js';

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
    handler: async ({ body, auth, deps, scope }) => reply(202, await startEnrichment(scope, deps, auth, body)),
  }),
];
