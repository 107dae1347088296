/**
 * The enrichment waterfall's configuration (which providers serve which slice, in which order,
 * with which timeouts and retries), parsed and validated. Reading it from the environment or a
 * file is infra/enrichmentConfigFile.ts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ENRICHMENT_SLICES, type EnrichmentSlice } from './pricing.js';
import { LOOKUP_KINDS, type LookupKind } from './enrichment.js';
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
