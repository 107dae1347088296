/** The input rules of `POST /contacts/unified-data-api` and the enrichment plan they produce. */
import { badRequest, invalidField } from './errors.js';
import { normalizeDomain, normalizeProfileUrl } from './identity.js';
import { ENRICHMENT_SLICES, enrichmentSlicePrice, type EnrichmentSlice } from './pricing.js';
import { LOOKUP_LABELS, SLICE_LOOKUPS, lookupKindsOf, type EnrichmentLookup } from './enrichment.js';
import type { EnrichmentConfig, RetryPolicyConfig } from './enrichmentConfig.js';

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
