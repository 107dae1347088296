/**
 * Contact enrichment's data (DESIGN §4, §6), as plain functions:
 *
 * - the data shapes a provider returns per slice (TypeBox: the HTTP provider contract, the job
 *   payload in OpenAPI and the TypeScript types come from these) and the lookups it is given,
 * - the outcome of a slice → its status and price, and the final `jobResponsePayload`.
 *
 * Beside it: the waterfall configuration (domain/enrichmentConfig.ts; read from its file by
 * infra/enrichmentConfigFile.ts), the request rules and plan (domain/enrichmentPlan.ts), a
 * provider's answer and HTTP status (domain/providerStatus.ts). Nothing here touches the network,
 * the file system or the database.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { enrichmentSlicePrice, type EnrichmentSlice } from './pricing.js';
import { ATTEMPT_OUTCOMES, type AttemptOutcome } from './providerStatus.js';

export { ENRICHMENT_SLICES, type EnrichmentSlice } from './pricing.js';

// ---------------------------------------------------------------------------------------------
// Data shapes (what a provider finds, per slice)
// ---------------------------------------------------------------------------------------------

const OptStr = (description?: string) => Type.Optional(Type.String({ maxLength: 2000, ...(description ? { description } : {}) }));
const OptInt = (description?: string) => Type.Optional(Type.Integer({ ...(description ? { description } : {}) }));

export const EnrichedContact = Type.Object(
  {
    fullName: OptStr(),
    firstName: OptStr(),
    lastName: OptStr(),
    title: OptStr('Current job title'),
    headline: OptStr(),
    seniority: OptStr(),
    pronet: OptStr('Professional-network profile URL'),
    locationCity: OptStr(),
    locationCountry: OptStr(),
    skills: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 200 })),
    yearsExperience: OptInt(),
  },
  { additionalProperties: false },
);
export type EnrichedContact = Static<typeof EnrichedContact>;

export const EnrichedCompany = Type.Object(
  {
    companyName: OptStr(),
    companyWebsite: OptStr(),
    companyPronet: OptStr('Company profile URL'),
    companyIndustry: OptStr(),
    companyHeadcount: OptStr('Range `<min>-<max>`'),
    companyCity: OptStr(),
    companyState: OptStr(),
    companyCountry: OptStr(),
    employeeCount: OptInt(),
    foundedYear: OptInt(),
    technologies: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 500 })),
  },
  { additionalProperties: false },
);
export type EnrichedCompany = Static<typeof EnrichedCompany>;

export const FoundEmail = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 320 }), status: Type.String({ maxLength: 50, description: 'e.g. `valid`, `risky`, `unknown`' }) },
  { additionalProperties: false },
);
export const FoundPhone = Type.Object(
  { number: Type.String({ minLength: 3, maxLength: 50 }), type: Type.String({ maxLength: 50, description: 'e.g. `mobile`, `work`' }) },
  { additionalProperties: false },
);
export const FoundPost = Type.Object(
  {
    postUrl: Type.String({ maxLength: 2000 }),
    text: Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()]),
    postedAt: Type.Union([Type.String({ maxLength: 40 }), Type.Null()]),
    likes: Type.Integer(),
    comments: Type.Integer(),
  },
  { additionalProperties: false },
);

/**
 * What one provider found for one slice. The HTTP provider contract answers
 * `{"found": true, "data": <this>}`; an empty list counts as not found.
 */
export const SliceData = {
  basic_contact_data: Type.Object({ contact: EnrichedContact }, { additionalProperties: false }),
  basic_company_data: Type.Object({ company: EnrichedCompany }, { additionalProperties: false }),
  emails: Type.Object({ emails: Type.Array(FoundEmail, { maxItems: 50 }) }, { additionalProperties: false }),
  phoneNumbers: Type.Object({ phoneNumbers: Type.Array(FoundPhone, { maxItems: 50 }) }, { additionalProperties: false }),
  pronetPosts: Type.Object({ pronetPosts: Type.Array(FoundPost, { maxItems: 100 }) }, { additionalProperties: false }),
} as const;
export type SliceDataOf<S extends EnrichmentSlice> = Static<(typeof SliceData)[S]>;
export type AnySliceData = { [S in EnrichmentSlice]: SliceDataOf<S> }[EnrichmentSlice];

/** True when the data holds something (a record, or a non-empty list). */
export function sliceDataHasContent(slice: EnrichmentSlice, data: AnySliceData | null | undefined): boolean {
  if (!data) return false;
  const d = data as Record<string, unknown>;
  switch (slice) {
    case 'basic_contact_data':
      return !!d.contact && Object.keys(d.contact as object).length > 0;
    case 'basic_company_data':
      return !!d.company && Object.keys(d.company as object).length > 0;
    case 'emails':
      return Array.isArray(d.emails) && d.emails.length > 0;
    case 'phoneNumbers':
      return Array.isArray(d.phoneNumbers) && d.phoneNumbers.length > 0;
    case 'pronetPosts':
      return Array.isArray(d.pronetPosts) && d.pronetPosts.length > 0;
  }
}

/** Checks a provider's `data` against the slice's shape; returns the error messages (empty = valid). */
export function sliceDataErrors(slice: EnrichmentSlice, data: unknown): string[] {
  const schema = SliceData[slice];
  if (Value.Check(schema, data)) return [];
  return [...Value.Errors(schema, data)].slice(0, 5).map((e) => `${e.path || '/'}: ${e.message}`);
}

// ---------------------------------------------------------------------------------------------
// Lookups: what a request identifies the person by
// ---------------------------------------------------------------------------------------------

/**
 * `pronet`: by profile URL. `name_domain`: by person name + company website (domain). `name`: by
 * person name alone (a provider answers only when the name is unambiguous to it).
 */
export const LOOKUP_KINDS = ['pronet', 'name_domain', 'name'] as const;
export type LookupKind = (typeof LOOKUP_KINDS)[number];

/** Which lookups a slice can be answered from at all. Only emails can be found by name. */
export const SLICE_LOOKUPS: Record<EnrichmentSlice, readonly LookupKind[]> = {
  basic_contact_data: ['pronet'],
  basic_company_data: ['pronet'],
  emails: ['pronet', 'name_domain', 'name'],
  phoneNumbers: ['pronet'],
  pronetPosts: ['pronet'],
};

/** The identifying input handed to every provider (normalised). */
export interface EnrichmentLookup {
  /** Profile URL as the caller sent it. */
  pronet?: string;
  /** Normalised profile key (`host/path`, see domain/identity.ts). */
  pronetKey?: string;
  fullName?: string;
  firstName?: string;
  lastName?: string;
  /** Company website as sent, and its normalised domain. */
  companyWebsite?: string;
  companyDomain?: string;
}

export const LOOKUP_LABELS: Record<LookupKind, string> = { pronet: 'pronet', name_domain: 'name and company website', name: 'name alone' };

export function lookupKindsOf(lookup: EnrichmentLookup): LookupKind[] {
  const kinds: LookupKind[] = [];
  if (lookup.pronetKey) kinds.push('pronet');
  if (lookup.companyDomain && lookup.fullName) kinds.push('name_domain');
  else if (lookup.fullName) kinds.push('name');
  return kinds;
}




// ---------------------------------------------------------------------------------------------
// Slice outcome → status, price, payload
// ---------------------------------------------------------------------------------------------

export interface AttemptRecord {
  provider: string;
  outcome: AttemptOutcome;
  durationMs: number;
  /** Why a provider was skipped (failure type and message). */
  error?: string;
}

export interface SliceOutcome {
  slice: EnrichmentSlice;
  attempts: AttemptRecord[];
  /** Data of the provider that found it (the last attempt), when one did. */
  data?: AnySliceData;
}

export type SliceStatus = 'found' | 'not_found' | 'failed';

/**
 * found: a provider found data. not_found: at least one provider answered and none had data.
 * failed: no provider could answer (all rejected or unavailable).
 */
export function sliceStatus(o: Pick<SliceOutcome, 'attempts'>): SliceStatus {
  if (o.attempts.some((a) => a.outcome === 'found')) return 'found';
  if (o.attempts.some((a) => a.outcome === 'not_found')) return 'not_found';
  return 'failed';
}

/** Providers tried until one found data (skipped ones count: they were tried). */
export function providersTried(o: Pick<SliceOutcome, 'attempts'>): number {
  const i = o.attempts.findIndex((a) => a.outcome === 'found');
  return i === -1 ? o.attempts.length : i + 1;
}

/** What a slice costs: the price for the providers tried when found, 0 otherwise. */
export function slicePrice(o: Pick<SliceOutcome, 'slice' | 'attempts'>): number {
  return sliceStatus(o) === 'found' ? enrichmentSlicePrice(o.slice, providersTried(o)) : 0;
}

/** The settled slice: its outcome plus what was charged (or why data was withheld). */
export interface SettledSlice extends SliceOutcome {
  credits: number;
  /** Set when found data could not be charged (the balance ran out meanwhile): data withheld. */
  chargeError?: string;
}

export const SliceReport = Type.Object(
  {
    status: Type.Union([Type.Literal('found'), Type.Literal('not_found'), Type.Literal('failed')]),
    provider: Type.Union([Type.String(), Type.Null()], { description: 'The provider that found the data' }),
    credits: Type.Integer({ description: 'Credits charged for this slice' }),
    attempts: Type.Array(
      Type.Object({
        provider: Type.String(),
        outcome: Type.Union(ATTEMPT_OUTCOMES.map((o) => Type.Literal(o))),
        durationMs: Type.Integer(),
        error: Type.Optional(Type.String()),
      }),
    ),
    error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
  },
  { additionalProperties: false },
);
export type SliceReport = Static<typeof SliceReport>;

const withProvider = <T extends object>(items: T[] | undefined, provider: string) => (items ?? []).map((x) => ({ ...x, provider }));

export const EnrichmentResult = Type.Object(
  {
    contact: Type.Union([EnrichedContact, Type.Null()]),
    company: Type.Union([EnrichedCompany, Type.Null()]),
    emails: Type.Array(Type.Object({ email: Type.String(), status: Type.String(), provider: Type.String() })),
    phoneNumbers: Type.Array(Type.Object({ number: Type.String(), type: Type.String(), provider: Type.String() })),
    pronetPosts: Type.Array(Type.Intersect([FoundPost, Type.Object({ provider: Type.String() })])),
    slices: Type.Object(
      {
        basic_contact_data: Type.Optional(SliceReport),
        basic_company_data: Type.Optional(SliceReport),
        emails: Type.Optional(SliceReport),
        phoneNumbers: Type.Optional(SliceReport),
        pronetPosts: Type.Optional(SliceReport),
      },
      { additionalProperties: false, description: 'One entry per requested slice' },
    ),
    creditsCharged: Type.Integer(),
  },
  { description: 'jobResponsePayload of an enrichment job' },
);
export type EnrichmentResult = Static<typeof EnrichmentResult>;

export function sliceReport(s: SettledSlice): SliceReport {
  const status: SliceStatus = s.chargeError ? 'failed' : sliceStatus(s);
  const found = s.attempts.find((a) => a.outcome === 'found');
  const report: SliceReport = {
    status,
    provider: status === 'found' && found ? found.provider : null,
    credits: s.credits,
    attempts: s.attempts.map((a) => ({ provider: a.provider, outcome: a.outcome, durationMs: a.durationMs, ...(a.error ? { error: a.error } : {}) })),
  };
  if (s.chargeError) report.error = { code: 'insufficient_credits', message: s.chargeError };
  else if (status === 'failed') report.error = { code: 'providers_failed', message: 'No provider could answer; see attempts' };
  return report;
}

/** Builds `jobResponsePayload` (DESIGN §4) from the settled slices. */
export function assembleEnrichmentResult(settled: SettledSlice[]): EnrichmentResult {
  const result: EnrichmentResult = { contact: null, company: null, emails: [], phoneNumbers: [], pronetPosts: [], slices: {}, creditsCharged: 0 };
  for (const s of settled) {
    const report = sliceReport(s);
    result.slices[s.slice] = report;
    result.creditsCharged += s.credits;
    if (report.status !== 'found' || !report.provider || !s.data) continue;
    const d = s.data as Record<string, unknown>;
    const provider = report.provider;
    switch (s.slice) {
      case 'basic_contact_data':
        result.contact = d.contact as EnrichedContact;
        break;
      case 'basic_company_data':
        result.company = d.company as EnrichedCompany;
        break;
      case 'emails':
        result.emails = withProvider(d.emails as SliceDataOf<'emails'>['emails'], provider);
        break;
      case 'phoneNumbers':
        result.phoneNumbers = withProvider(d.phoneNumbers as SliceDataOf<'phoneNumbers'>['phoneNumbers'], provider);
        break;
      case 'pronetPosts':
        result.pronetPosts = withProvider(d.pronetPosts as SliceDataOf<'pronetPosts'>['pronetPosts'], provider);
        break;
    }
  }
  return result;
}

/** Idempotency key of a slice's debit: one charge per (job, slice), whatever retries. */
export const sliceDebitKey = (jobId: string, slice: EnrichmentSlice) => `enrich:${jobId}:${slice}`;
