/**
 * Contact enrichment rules (DESIGN §4, §6), as plain functions:
 *
 * - the data shapes a provider returns per slice (TypeBox: the HTTP provider contract, the job
 *   payload in OpenAPI and the TypeScript types come from these),
 * - the waterfall configuration (which providers serve which slice, in which order, with which
 *   timeouts and retries), parsed and validated,
 * - the input rules of `POST /contacts/unified-data-api` and the plan they produce,
 * - the outcome of a slice → its status and price, and the final `jobResponsePayload`,
 * - classification of a provider's HTTP answer (4xx skip, 429/5xx retry honoring Retry-After).
 *
 * Nothing here touches the network or the database.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { badRequest, invalidField } from './errors.js';
import { normalizeDomain, normalizeProfileUrl } from './identity.js';
import { ENRICHMENT_SLICES, enrichmentSlicePrice, type EnrichmentSlice } from './pricing.js';

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

const LOOKUP_LABELS: Record<LookupKind, string> = { pronet: 'pronet', name_domain: 'name and company website', name: 'name alone' };

export function lookupKindsOf(lookup: EnrichmentLookup): LookupKind[] {
  const kinds: LookupKind[] = [];
  if (lookup.pronetKey) kinds.push('pronet');
  if (lookup.companyDomain && lookup.fullName) kinds.push('name_domain');
  else if (lookup.fullName) kinds.push('name');
  return kinds;
}

// ---------------------------------------------------------------------------------------------
// Waterfall configuration
// ---------------------------------------------------------------------------------------------

const SliceName = Type.Union(ENRICHMENT_SLICES.map((s) => Type.Literal(s)));
const ProviderName = Type.String({ pattern: '^[a-z][a-z0-9_-]{0,39}$' });

export const ProviderConfigSchema = Type.Object(
  {
    type: Type.Union([Type.Literal('dataset'), Type.Literal('http')]),
    /** http: base URL; the provider is called at `POST {baseUrl}/v1/enrich`. */
    baseUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
    /** http: name of the environment variable holding the provider's API key (sent as Bearer). */
    apiKeyEnv: Type.Optional(Type.String({ pattern: '^[A-Z_][A-Z0-9_]*$' })),
    /** http: extra static headers. */
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    /** Slices this provider can answer (default: every slice). */
    slices: Type.Optional(Type.Array(SliceName, { minItems: 1, uniqueItems: true })),
    /** Lookups this provider accepts (default: `pronet` only; dataset: all). */
    lookups: Type.Optional(Type.Array(Type.Union(LOOKUP_KINDS.map((k) => Type.Literal(k))), { minItems: 1, uniqueItems: true })),
    /** Timeout of one call in ms (default 5000). */
    timeoutMs: Type.Optional(Type.Integer({ minimum: 50, maximum: 120_000 })),
  },
  { additionalProperties: false },
);

export const RetryConfigSchema = Type.Object(
  {
    /** Attempts per provider call, the first included (429/5xx/timeout retry; default 3). */
    maxAttempts: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    initialIntervalMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 60_000 })),
    maxIntervalMs: Type.Optional(Type.Integer({ minimum: 10, maximum: 300_000 })),
    /** A `Retry-After` longer than this skips the provider instead of waiting (default 30000). */
    maxRetryAfterMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 3_600_000 })),
  },
  { additionalProperties: false },
);

const Waterfall = Type.Array(ProviderName, { uniqueItems: true, maxItems: 10 });

export const EnrichmentConfigSchema = Type.Object(
  {
    providers: Type.Record(ProviderName, ProviderConfigSchema),
    /** Per slice, provider names in the order they are tried. */
    waterfall: Type.Object(
      {
        basic_contact_data: Type.Optional(Waterfall),
        basic_company_data: Type.Optional(Waterfall),
        emails: Type.Optional(Waterfall),
        phoneNumbers: Type.Optional(Waterfall),
        pronetPosts: Type.Optional(Waterfall),
      },
      { additionalProperties: false },
    ),
    retry: Type.Optional(RetryConfigSchema),
    /** Most recent posts returned by `pronetPosts` (default 20). */
    postsLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: false },
);
export type EnrichmentConfigInput = Static<typeof EnrichmentConfigSchema>;

export interface ResolvedProvider {
  name: string;
  type: 'dataset' | 'http';
  baseUrl?: string;
  apiKeyEnv?: string;
  headers?: Record<string, string>;
  slices: EnrichmentSlice[];
  lookups: LookupKind[];
  timeoutMs: number;
}

export interface RetryPolicyConfig {
  maxAttempts: number;
  initialIntervalMs: number;
  maxIntervalMs: number;
  maxRetryAfterMs: number;
}

export interface EnrichmentConfig {
  providers: Record<string, ResolvedProvider>;
  waterfall: Record<EnrichmentSlice, string[]>;
  retry: RetryPolicyConfig;
  postsLimit: number;
}

export const DEFAULT_RETRY: RetryPolicyConfig = { maxAttempts: 3, initialIntervalMs: 200, maxIntervalMs: 5000, maxRetryAfterMs: 30_000 };
export const DEFAULT_TIMEOUT_MS = 5000;

export class EnrichmentConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid enrichment configuration: ${problems.join('; ')}`);
    this.name = 'EnrichmentConfigError';
  }
}

/** Validates a parsed configuration object and fills in defaults. Throws EnrichmentConfigError. */
export function parseEnrichmentConfig(raw: unknown): EnrichmentConfig {
  if (!Value.Check(EnrichmentConfigSchema, raw)) {
    throw new EnrichmentConfigError([...Value.Errors(EnrichmentConfigSchema, raw)].slice(0, 10).map((e) => `${e.path || '/'}: ${e.message}`));
  }
  const problems: string[] = [];
  const providers: Record<string, ResolvedProvider> = {};
  for (const [name, p] of Object.entries(raw.providers)) {
    if (p.type === 'http' && !p.baseUrl) problems.push(`/providers/${name}: an http provider needs baseUrl`);
    if (p.type === 'dataset' && (p.baseUrl || p.apiKeyEnv || p.headers)) problems.push(`/providers/${name}: the dataset provider takes no baseUrl, apiKeyEnv or headers`);
    providers[name] = {
      name,
      type: p.type,
      ...(p.baseUrl ? { baseUrl: p.baseUrl.replace(/\/+$/, '') } : {}),
      ...(p.apiKeyEnv ? { apiKeyEnv: p.apiKeyEnv } : {}),
      ...(p.headers ? { headers: p.headers } : {}),
      slices: p.slices ? [...p.slices] : [...ENRICHMENT_SLICES],
      lookups: p.lookups ? [...p.lookups] : p.type === 'dataset' ? [...LOOKUP_KINDS] : ['pronet'],
      timeoutMs: p.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    };
  }
  const waterfall = {} as Record<EnrichmentSlice, string[]>;
  for (const slice of ENRICHMENT_SLICES) {
    const names = raw.waterfall[slice] ?? [];
    for (const n of names) {
      const p = providers[n];
      if (!p) problems.push(`/waterfall/${slice}: provider "${n}" is not defined in /providers`);
      else if (!p.slices.includes(slice)) problems.push(`/waterfall/${slice}: provider "${n}" does not serve ${slice} (its slices: ${p.slices.join(', ')})`);
    }
    waterfall[slice] = [...names];
  }
  const retry = { ...DEFAULT_RETRY, ...(raw.retry ?? {}) };
  if (retry.maxIntervalMs < retry.initialIntervalMs) problems.push('/retry: maxIntervalMs must be >= initialIntervalMs');
  if (problems.length) throw new EnrichmentConfigError(problems);
  return { providers, waterfall, retry, postsLimit: raw.postsLimit ?? 20 };
}

/** The configuration used when neither ENRICHMENT_CONFIG nor config/enrichment.json says otherwise. */
export const DEFAULT_ENRICHMENT_CONFIG: EnrichmentConfigInput = {
  providers: { dataset: { type: 'dataset' } },
  waterfall: {
    basic_contact_data: ['dataset'],
    basic_company_data: ['dataset'],
    emails: ['dataset'],
    phoneNumbers: ['dataset'],
    pronetPosts: ['dataset'],
  },
};

/**
 * Where the configuration comes from: `ENRICHMENT_CONFIG` holding JSON (starts with `{`) or a
 * file path (relative to `rootDir`), else `<rootDir>/config/enrichment.json`, else the default.
 */
export function readEnrichmentConfigSource(rootDir: string, env: NodeJS.ProcessEnv = process.env): { origin: string; raw: unknown } {
  const v = env.ENRICHMENT_CONFIG?.trim();
  const parse = (text: string, origin: string) => {
    try {
      return { origin, raw: JSON.parse(text) as unknown };
    } catch (e) {
      throw new EnrichmentConfigError([`${origin}: not valid JSON (${(e as Error).message})`]);
    }
  };
  if (v && v.startsWith('{')) return parse(v, 'ENRICHMENT_CONFIG');
  const path = v ? (isAbsolute(v) ? v : resolve(rootDir, v)) : resolve(rootDir, 'config', 'enrichment.json');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (!v && (e as NodeJS.ErrnoException).code === 'ENOENT') return { origin: 'default', raw: DEFAULT_ENRICHMENT_CONFIG };
    throw new EnrichmentConfigError([`${path}: ${(e as Error).message}`]);
  }
  return parse(text, path);
}

let cached: { key: string; config: EnrichmentConfig } | undefined;

/** Loads and validates the configuration; cached while ENRICHMENT_CONFIG stays the same. */
export function loadEnrichmentConfig(rootDir: string, env: NodeJS.ProcessEnv = process.env): EnrichmentConfig {
  const key = `${rootDir}\0${env.ENRICHMENT_CONFIG ?? ''}`;
  if (cached?.key === key) return cached.config;
  const { raw } = readEnrichmentConfigSource(rootDir, env);
  const config = parseEnrichmentConfig(raw);
  cached = { key, config };
  return config;
}

// ---------------------------------------------------------------------------------------------
// Request rules → plan
// ---------------------------------------------------------------------------------------------

export interface EnrichmentRequest {
  fields: EnrichmentSlice[];
  pronet?: string;
  firstName?: string;
  lastName?: string;
  fullName?: string;
  companyWebsite?: string;
}

/** One provider of a slice's planned waterfall. */
export interface PlannedProvider {
  provider: string;
  timeoutMs: number;
  /**
   * Answered inside the worker (the `dataset` provider reads PostgreSQL): run as a local
   * activity, without a task-queue round trip. Remote providers run as regular activities.
   */
  local: boolean;
}

/**
 * Everything the workflow needs, fixed at acceptance so that a configuration change never alters
 * a running job. Provider credentials stay in the worker's configuration, never in history.
 */
export interface EnrichmentPlan {
  lookup: EnrichmentLookup;
  slices: Partial<Record<EnrichmentSlice, PlannedProvider[]>>;
  retry: RetryPolicyConfig;
  postsLimit: number;
  /** The most this request can cost: what the balance must cover before any provider runs. */
  maxCredits: number;
}

const PROFILE_KEY = /^[a-z0-9-]+(\.[a-z0-9-]+)+\/.+$/;
const DOMAIN = /^[a-z0-9-]+(\.[a-z0-9-]+)+$/;

/**
 * The input rules of `POST /contacts/unified-data-api` (beyond the JSON Schema: enum, non-empty,
 * unique `fields`). Throws InvalidRequestError (400) naming the rule; returns the plan.
 */
export function planEnrichment(req: EnrichmentRequest, config: EnrichmentConfig): EnrichmentPlan {
  const fields = [...new Set(req.fields)];
  if (fields.length === 0) throw invalidField('/fields', 'must name at least one of ' + ENRICHMENT_SLICES.join(', '));

  const lookup: EnrichmentLookup = {};
  const trim = (s: string | undefined) => (s === undefined ? undefined : s.trim() || undefined);
  const pronet = trim(req.pronet);
  if (req.pronet !== undefined) {
    const key = normalizeProfileUrl(pronet);
    if (!key || !PROFILE_KEY.test(key)) throw invalidField('/pronet', 'must be a profile URL such as https://pronet.example/in/jane-doe');
    lookup.pronet = pronet;
    lookup.pronetKey = key;
  }
  const firstName = trim(req.firstName);
  const lastName = trim(req.lastName);
  const fullName = trim(req.fullName);
  const website = trim(req.companyWebsite);
  if ((firstName && !lastName) || (lastName && !firstName)) {
    throw invalidField(firstName ? '/lastName' : '/firstName', 'firstName and lastName are sent together (or send fullName)');
  }
  if (website !== undefined) {
    const domain = normalizeDomain(website);
    if (!domain || !DOMAIN.test(domain)) throw invalidField('/companyWebsite', 'must be a website or domain such as https://acme.com');
    lookup.companyWebsite = website;
    lookup.companyDomain = domain;
  }
  if (firstName) lookup.firstName = firstName;
  if (lastName) lookup.lastName = lastName;
  const name = fullName ?? (firstName && lastName ? `${firstName} ${lastName}` : undefined);
  if (name) lookup.fullName = name;

  // Names and companyWebsite sent beside pronet are accepted: every provider receives them, and
  // slices found by profile only simply do not use them.
  if (!lookup.pronetKey) {
    const profileBound = fields.filter((s) => !SLICE_LOOKUPS[s].includes('name_domain'));
    if (profileBound.length) {
      throw badRequest('pronet_required', `pronet is required for ${profileBound.join(', ')}`, [
        { path: '/pronet', message: `required for ${profileBound.join(', ')}` },
      ]);
    }
    if (!lookup.fullName) {
      throw badRequest('pronet_required', 'emails needs pronet, or fullName (or firstName and lastName), best with companyWebsite', [
        { path: lookup.companyDomain ? '/fullName' : '/pronet', message: 'missing lookup input' },
      ]);
    }
  }

  const kinds = lookupKindsOf(lookup);
  const slices: Partial<Record<EnrichmentSlice, PlannedProvider[]>> = {};
  let maxCredits = 0;
  for (const slice of ENRICHMENT_SLICES) {
    if (!fields.includes(slice)) continue;
    const configured = config.waterfall[slice];
    if (configured.length === 0) throw badRequest('slice_not_available', `No provider is configured for ${slice}`, [{ path: '/fields', message: `${slice} is not available` }]);
    const usable = configured
      .map((n) => config.providers[n]!)
      .filter((p) => p.lookups.some((k) => kinds.includes(k) && SLICE_LOOKUPS[slice].includes(k)));
    if (usable.length === 0) {
      throw badRequest(
        'lookup_not_supported',
        `No configured ${slice} provider can look a person up by ${kinds.map((k) => LOOKUP_LABELS[k]).join(' or ')}; send pronet`,
        [{ path: '/pronet', message: `required for ${slice} with the configured providers` }],
      );
    }
    slices[slice] = usable.map((p) => ({ provider: p.name, timeoutMs: p.timeoutMs, local: p.type === 'dataset' }));
    maxCredits += enrichmentSlicePrice(slice, usable.length);
  }
  return { lookup, slices, retry: { ...config.retry }, postsLimit: config.postsLimit, maxCredits };
}

// ---------------------------------------------------------------------------------------------
// Provider answers
// ---------------------------------------------------------------------------------------------

/**
 * Outcome of one (slice, provider) attempt: `found` data, `not_found` (the provider answered,
 * without data), `rejected` (a 4xx other than 429, an invalid answer or an unknown provider:
 * skipped at once), `unavailable` (429/5xx/timeout still failing after the retries: skipped).
 */
export const ATTEMPT_OUTCOMES = ['found', 'not_found', 'rejected', 'unavailable'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** Failure types the provider activity throws; the workflow maps them to outcomes. */
export const PROVIDER_FAILURE = {
  rejected: 'provider_rejected',
  badResponse: 'provider_bad_response',
  unknown: 'provider_unknown',
  rateLimited: 'provider_rate_limited',
  unavailable: 'provider_unavailable',
  timeout: 'provider_timeout',
} as const;

export type HttpClassification =
  | { kind: 'ok' }
  | { kind: 'rejected' }
  | { kind: 'retry'; type: string; delayMs?: number }
  | { kind: 'skip_rate_limited'; delayMs: number };

/**
 * Classifies a provider's HTTP status. 2xx ok; 429 retried after `Retry-After` (bounded by
 * `maxRetryAfterMs`: a longer wait skips the provider); other 4xx rejected; 5xx retried.
 */
export function classifyProviderStatus(status: number, retryAfter: string | null | undefined, maxRetryAfterMs: number, nowMs: number): HttpClassification {
  if (status >= 200 && status < 300) return { kind: 'ok' };
  if (status === 429) {
    const delayMs = parseRetryAfter(retryAfter, nowMs);
    if (delayMs !== null && delayMs > maxRetryAfterMs) return { kind: 'skip_rate_limited', delayMs };
    return delayMs === null ? { kind: 'retry', type: PROVIDER_FAILURE.rateLimited } : { kind: 'retry', type: PROVIDER_FAILURE.rateLimited, delayMs };
  }
  if (status >= 400 && status < 500) return { kind: 'rejected' };
  return { kind: 'retry', type: PROVIDER_FAILURE.unavailable };
}

/** `Retry-After` as delay-seconds or an HTTP date → milliseconds from now (≥ 0), or null. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
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
