/** `/contacts/bulk-enrichment…`, `/contacts/{id}/enrichment`, `/enrichment/settings` (issue 32). */
import { Type, type Static } from '@sinclair/typebox';
import { ENRICHMENT_SLICES } from '../../domain/enrichment.js';
import { MAX_BULK_CONTACT_IDS } from '../../domain/bulkEnrichment.js';
import { WebhookConfiguration } from './common.js';
import { ContactConditions, ContactGroupedCondition } from './contacts.js';

const Slice = Type.Union(ENRICHMENT_SLICES.map((s) => Type.Literal(s)));
const EXAMPLE_JOB = '0193a5c2-7f1e-7b3a-9c4d-2e8f6a1b3c5d';
const EXAMPLE_CONTACT = '0193a5c2-1111-7b3a-9c4d-2e8f6a1b3c5d';

const selection = {
  fields: Type.Array(Slice, { minItems: 1, maxItems: ENRICHMENT_SLICES.length, uniqueItems: true, description: 'Slices to enrich: ' + ENRICHMENT_SLICES.join(', ') }),
  segmentId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Enrich the members of this segment (further filtered by `conditions` / `groupedCondition`)' })),
  conditions: Type.Optional(ContactConditions),
  groupedCondition: Type.Optional(ContactGroupedCondition),
  contactIds: Type.Optional(
    Type.Array(Type.String({ format: 'uuid' }), {
      minItems: 1,
      maxItems: MAX_BULK_CONTACT_IDS,
      uniqueItems: true,
      description: `Enrich these contacts (at most ${MAX_BULK_CONTACT_IDS}), in this order; not with segmentId or conditions`,
    }),
  ),
  freshnessDays: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 3650, description: 'A slice enriched fewer days ago than this is not bought again (costs 0). Default: the workspace setting (`GET /enrichment/settings`), else 30' }),
  ),
  force: Type.Optional(Type.Boolean({ description: 'Buy every slice again, however fresh' })),
};

/**
 * The selection's rules, stated in the schema (issue 27 item 21) and answered with the codes
 * the use case (api/usecases/bulkEnrichment.ts `selectionOf`) owns (`x-error-code`, api/validation.ts
 * onlyCodedRules): contacts are named one way, and `contactIds` comes alone.
 */
const SELECTORS = ['segmentId', 'conditions', 'groupedCondition'] as const;
const selectionRules = {
  description:
    'Name the contacts: `contactIds` alone, or `segmentId` and/or `conditions` / `groupedCondition` ' +
    '(a body with none is a 400 `selection_required`; `contactIds` with any of the others a 400 `selection_conflict`)',
  allOf: [
    { 'x-error-code': 'selection_required', anyOf: [{ required: ['contactIds'] }, ...SELECTORS.map((k) => ({ required: [k] }))] },
    { 'x-error-code': 'selection_conflict', anyOf: [{ not: { required: ['contactIds'] } }, { not: { anyOf: SELECTORS.map((k) => ({ required: [k] })) } }] },
  ],
};

export const BulkEnrichmentEstimateBody = Type.Object(selection, {
  additionalProperties: false,
  ...selectionRules,
  $id: 'BulkEnrichmentEstimateBody',
  examples: [{ fields: ['basic_contact_data', 'emails'], segmentId: '0193a5c2-2222-7b3a-9c4d-2e8f6a1b3c5d' }],
});
export type BulkEnrichmentEstimateBody = Static<typeof BulkEnrichmentEstimateBody>;

export const BulkEnrichmentBody = Type.Object(
  {
    ...selection,
    maxCredits: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 1_000_000_000, description: 'Budget: the job stops before the first row whose charges would take it past this; later rows end `not_reached`' }),
    ),
    webhookConfiguration: Type.Optional(WebhookConfiguration),
  },
  {
    additionalProperties: false,
    ...selectionRules,
    $id: 'BulkEnrichmentBody',
    examples: [{ fields: ['basic_contact_data', 'emails'], conditions: [{ field: 'contact.jobTitle', operator: 'LIKE', value: '%engineer%' }], maxCredits: 5000, freshnessDays: 30 }],
  },
);
export type BulkEnrichmentBody = Static<typeof BulkEnrichmentBody>;

const SliceCounts = Type.Object({
  toBuy: Type.Integer({ description: 'Rows that would buy this slice' }),
  fresh: Type.Integer({ description: 'Rows whose data is within the freshness window: not bought, cost 0' }),
  noLookup: Type.Integer({ description: 'Rows the configured providers cannot look up for this slice (e.g. no pronet)' }),
  minCredits: Type.Integer(),
  maxCredits: Type.Integer(),
});

export const BulkEnrichmentEstimate = Type.Object(
  {
    data: Type.Object({
      rows: Type.Integer({ description: 'Contacts selected' }),
      rowsToEnrich: Type.Integer({ description: 'Rows with at least one slice to buy' }),
      slices: Type.Record(Type.String(), SliceCounts, { description: 'Per requested slice' }),
      minCredits: Type.Integer({ description: 'Cost when every slice to buy is found by its first provider (a slice found by nobody costs 0)' }),
      maxCredits: Type.Integer({ description: 'Cost when every slice to buy is found, each by its last provider: the most the job can cost' }),
    }),
  },
  {
    $id: 'BulkEnrichmentEstimate',
    examples: [
      {
        data: {
          rows: 1000,
          rowsToEnrich: 990,
          slices: {
            basic_contact_data: { toBuy: 980, fresh: 10, noLookup: 10, minCredits: 980, maxCredits: 980 },
            emails: { toBuy: 990, fresh: 0, noLookup: 10, minCredits: 3960, maxCredits: 4950 },
          },
          minCredits: 4940,
          maxCredits: 5930,
        },
      },
    ],
  },
);

const StatusCounts = Type.Object({ found: Type.Integer(), not_found: Type.Integer(), failed: Type.Integer(), fresh: Type.Integer(), no_lookup: Type.Integer() });

export const BulkEnrichmentSummarySchema = Type.Object(
  {
    rows: Type.Integer(),
    done: Type.Integer({ description: 'Rows enriched (charged and written)' }),
    pending: Type.Integer({ description: 'Rows not processed yet' }),
    notReached: Type.Integer({ description: 'Rows the budget (`maxCredits`) or the balance did not reach' }),
    cancelled: Type.Integer({ description: 'Rows left when the job was cancelled' }),
    creditsCharged: Type.Integer(),
    slices: Type.Record(Type.String(), StatusCounts, { description: 'Per slice: rows by outcome' }),
    stoppedBy: Type.Union([Type.Literal('max_credits'), Type.Literal('insufficient_credits'), Type.Literal('cancelled'), Type.Null()]),
    state: Type.Union([Type.Literal('running'), Type.Literal('paused'), Type.Literal('cancelled'), Type.Literal('finished')]),
  },
  { $id: 'BulkEnrichmentSummary' },
);

const SUMMARY_EXAMPLE = {
  rows: 1000,
  done: 600,
  pending: 0,
  notReached: 400,
  cancelled: 0,
  creditsCharged: 2997,
  slices: { emails: { found: 540, not_found: 60, failed: 0, fresh: 0, no_lookup: 0 } },
  stoppedBy: 'max_credits',
  state: 'finished',
};

export const BulkEnrichmentSummaryResponse = Type.Object({ data: BulkEnrichmentSummarySchema }, { $id: 'BulkEnrichmentSummaryResponse', examples: [{ data: SUMMARY_EXAMPLE }] });

export const BulkJobParams = Type.Object({ jobId: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
export const BulkJobActionParams = Type.Object(
  { jobId: Type.String({ minLength: 1, maxLength: 100 }), action: Type.Union([Type.Literal('pause'), Type.Literal('resume'), Type.Literal('cancel')]) },
  { additionalProperties: false },
);

export const BulkRowsQuery = Type.Object(
  {
    after: Type.Optional(Type.Integer({ minimum: -1, maximum: 2_147_483_647, default: -1, description: 'Rows after this `seq` (the previous page\'s `meta.nextAfter`)' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
    status: Type.Optional(Type.Union([Type.Literal('pending'), Type.Literal('done'), Type.Literal('not_reached'), Type.Literal('cancelled')])),
  },
  { additionalProperties: false },
);

const Attempt = Type.Object({
  provider: Type.String(),
  outcome: Type.String({ description: '`found`, `not_found`, `rejected` or `unavailable`' }),
  rateLimitedWaits: Type.Optional(Type.Integer({ description: '429 answers waited out before this outcome' })),
  error: Type.Optional(Type.String()),
});
const SliceTrace = Type.Object({
  status: Type.String({ description: '`found`, `not_found`, `failed`, `fresh` (not bought again) or `no_lookup`' }),
  provider: Type.Union([Type.String(), Type.Null()]),
  credits: Type.Integer(),
  attempts: Type.Array(Attempt),
  code: Type.Optional(Type.String({ description: 'no_lookup: the rule that ruled the slice out (e.g. `pronet_required`)' })),
});

export const BulkEnrichmentRows = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        seq: Type.Integer(),
        contactId: Type.String(),
        status: Type.String({ description: '`pending`, `done`, `not_reached` or `cancelled`' }),
        credits: Type.Integer(),
        trace: Type.Union([Type.Object({ slices: Type.Record(Type.String(), SliceTrace), credits: Type.Integer() }), Type.Null()]),
        settledAt: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
    meta: Type.Object({ nextAfter: Type.Union([Type.Integer(), Type.Null()]) }),
  },
  {
    $id: 'BulkEnrichmentRows',
    examples: [
      {
        data: [
          {
            seq: 0,
            contactId: EXAMPLE_CONTACT,
            status: 'done',
            credits: 6,
            trace: {
              slices: {
                basic_contact_data: { status: 'found', provider: 'dataset', credits: 1, attempts: [{ provider: 'dataset', outcome: 'found' }] },
                emails: {
                  status: 'found',
                  provider: 'beta',
                  credits: 5,
                  attempts: [
                    { provider: 'alpha', outcome: 'not_found', rateLimitedWaits: 1 },
                    { provider: 'beta', outcome: 'found' },
                  ],
                },
              },
              credits: 6,
            },
            settledAt: '2026-11-28T12:00:00.000Z',
          },
        ],
        meta: { nextAfter: 0 },
      },
    ],
  },
);

export const ContactEnrichmentResponse = Type.Object(
  {
    data: Type.Array(
      Type.Object({
        slice: Slice,
        provider: Type.String({ description: 'The provider that found the data' }),
        jobId: Type.Union([Type.String(), Type.Null()], { description: 'The job that bought it' }),
        enrichedAt: Type.String({ format: 'date-time' }),
        fields: Type.Array(Type.String(), { description: 'Contact properties written from this slice (e.g. `title`, `emails`)' }),
        data: Type.Unknown({ description: 'What the provider found (the slice\'s shape, as in `jobResponsePayload` of a single enrichment)' }),
      }),
    ),
  },
  {
    $id: 'ContactEnrichment',
    examples: [
      {
        data: [
          {
            slice: 'basic_contact_data',
            provider: 'dataset',
            jobId: EXAMPLE_JOB,
            enrichedAt: '2026-11-28T12:00:00.000Z',
            fields: ['fullName', 'title'],
            data: { contact: { fullName: 'Jane Doe', title: 'CTO' } },
          },
        ],
      },
    ],
  },
);

export const EnrichmentSettingsBody = Type.Object(
  { freshnessDays: Type.Integer({ minimum: 0, maximum: 3650, description: 'Default freshness window of bulk enrichment, in days' }) },
  { additionalProperties: false, $id: 'EnrichmentSettingsBody', examples: [{ freshnessDays: 30 }] },
);
export const EnrichmentSettingsResponse = Type.Object({ data: EnrichmentSettingsBody }, { $id: 'EnrichmentSettings', examples: [{ data: { freshnessDays: 30 } }] });
