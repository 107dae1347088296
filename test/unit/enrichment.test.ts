import { describe, expect, it } from 'vitest';
import { DEFAULT_ENRICHMENT_CONFIG, EnrichmentConfigError, parseEnrichmentConfig } from '../../domain/enrichmentConfig.js';
import { assembleEnrichmentResult, providersTried, sliceDataErrors, sliceDataHasContent, slicePrice, sliceStatus, type AttemptRecord, type SettledSlice } from '../../domain/enrichment.js';
import { classifyProviderStatus, parseRetryAfter } from '../../domain/providerStatus.js';
import { loadEnrichmentConfig } from '../../infra/enrichmentConfigFile.js';
import { planEnrichment } from '../../domain/enrichmentPlan.js';
import { InvalidRequestError } from '../../domain/errors.js';

const config = parseEnrichmentConfig({
  providers: {
    dataset: { type: 'dataset' },
    alpha: { type: 'http', baseUrl: 'http://127.0.0.1:9/', lookups: ['pronet', 'name_domain'] },
    beta: { type: 'http', baseUrl: 'http://127.0.0.1:9', slices: ['emails', 'phoneNumbers'] },
  },
  waterfall: {
    basic_contact_data: ['dataset'],
    basic_company_data: ['dataset'],
    emails: ['dataset', 'alpha', 'beta'],
    phoneNumbers: ['beta', 'dataset'],
    pronetPosts: ['dataset'],
  },
});

function rejects(fn: () => unknown): InvalidRequestError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidRequestError);
    return e as InvalidRequestError;
  }
  throw new Error('expected an InvalidRequestError');
}

const att = (provider: string, outcome: AttemptRecord['outcome']): AttemptRecord => ({ provider, outcome, durationMs: 5 });

describe('enrichment configuration', () => {
  it('fills defaults and normalises base URLs', () => {
    expect(config.providers.alpha).toMatchObject({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 5000, lookups: ['pronet', 'name_domain'] });
    expect(config.providers.beta!.lookups).toEqual(['pronet']);
    expect(config.providers.dataset!.lookups).toEqual(['pronet', 'name_domain', 'name']);
    expect(config.retry).toEqual({ maxAttempts: 3, initialIntervalMs: 200, maxIntervalMs: 5000, maxRetryAfterMs: 30000 });
    expect(config.postsLimit).toBe(20);
  });

  it('rejects unknown providers, slices a provider does not serve, and http without baseUrl', () => {
    const bad = () =>
      parseEnrichmentConfig({
        providers: { x: { type: 'http' }, y: { type: 'http', baseUrl: 'https://y.example', slices: ['emails'] } },
        waterfall: { emails: ['x', 'nope'], phoneNumbers: ['y'] },
      });
    expect(bad).toThrow(EnrichmentConfigError);
    try {
      bad();
    } catch (e) {
      const p = (e as EnrichmentConfigError).problems.join('\n');
      expect(p).toContain('/providers/x: an http provider needs baseUrl');
      expect(p).toContain('provider "nope" is not defined');
      expect(p).toContain('provider "y" does not serve phoneNumbers');
    }
    expect(() => parseEnrichmentConfig({ providers: {}, waterfall: { emails: [] }, extra: 1 })).toThrow(/extra|additional/i);
  });

  it('reads ENRICHMENT_CONFIG as inline JSON, and falls back to the default without a file', () => {
    const inline = loadEnrichmentConfig('/nonexistent-root', { ENRICHMENT_CONFIG: JSON.stringify(DEFAULT_ENRICHMENT_CONFIG) });
    expect(inline.waterfall.emails).toEqual(['dataset']);
    const fallback = loadEnrichmentConfig('/nonexistent-root', {});
    expect(fallback.waterfall.pronetPosts).toEqual(['dataset']);
    expect(() => loadEnrichmentConfig('/nonexistent-root', { ENRICHMENT_CONFIG: 'missing.json' })).toThrow(EnrichmentConfigError);
    expect(() => loadEnrichmentConfig('/nonexistent-root', { ENRICHMENT_CONFIG: '{not json' })).toThrow(/not valid JSON/);
  });
});

describe('request rules', () => {
  it('plans each requested slice with its waterfall and the maximum price', () => {
    const plan = planEnrichment({ fields: ['emails', 'phoneNumbers', 'basic_contact_data'], pronet: 'https://www.Pronet.example/in/Jane-Doe/?x=1' }, config);
    expect(plan.lookup).toMatchObject({ pronetKey: 'pronet.example/in/jane-doe' });
    expect(plan.slices.emails!.map((p) => p.provider)).toEqual(['dataset', 'alpha', 'beta']);
    expect(plan.slices.phoneNumbers).toEqual([
      { provider: 'beta', timeoutMs: 5000, local: false },
      { provider: 'dataset', timeoutMs: 5000, local: true },
    ]);
    expect(Object.keys(plan.slices)).toEqual(['basic_contact_data', 'emails', 'phoneNumbers']);
    // emails 3 providers → 6, phones 2 providers → 20, contact 1
    expect(plan.maxCredits).toBe(27);
  });

  it('requires pronet for profile-bound slices, naming them', () => {
    const e = rejects(() => planEnrichment({ fields: ['basic_contact_data', 'phoneNumbers', 'emails'] }, config));
    expect(e.code).toBe('pronet_required');
    expect(e.message).toBe('pronet is required for basic_contact_data, phoneNumbers');
  });

  it('accepts emails by companyWebsite + fullName or firstName + lastName, only with providers that support it', () => {
    const plan = planEnrichment({ fields: ['emails'], firstName: 'Jane', lastName: 'Doe', companyWebsite: 'https://www.Acme.com/about' }, config);
    expect(plan.lookup).toMatchObject({ fullName: 'Jane Doe', companyDomain: 'acme.com' });
    // beta only looks people up by pronet
    expect(plan.slices.emails!.map((p) => p.provider)).toEqual(['dataset', 'alpha']);
    expect(plan.maxCredits).toBe(5);
    const only = parseEnrichmentConfig({ providers: { beta: { type: 'http', baseUrl: 'http://b' } }, waterfall: { emails: ['beta'] } });
    const e = rejects(() => planEnrichment({ fields: ['emails'], fullName: 'Jane Doe', companyWebsite: 'acme.com' }, only));
    expect(e.code).toBe('lookup_not_supported');
  });

  it('refuses emails without pronet and without a name', () => {
    // fullName alone is a lookup by name (providers that accept it: the dataset)
    expect(planEnrichment({ fields: ['emails'], fullName: 'Jane Doe' }, config).slices.emails!.map((p) => p.provider)).toEqual(['dataset']);
    expect(rejects(() => planEnrichment({ fields: ['emails'], companyWebsite: 'acme.com' }, config)).code).toBe('pronet_required');
    expect(rejects(() => planEnrichment({ fields: ['emails'] }, config)).code).toBe('pronet_required');
    const half = rejects(() => planEnrichment({ fields: ['emails'], firstName: 'Jane', companyWebsite: 'acme.com' }, config));
    expect(half.details?.[0]?.path).toBe('/lastName');
  });

  it('accepts name inputs beside pronet whatever the slices', () => {
    expect(planEnrichment({ fields: ['basic_contact_data'], pronet: 'pronet.example/in/x', fullName: 'X Y', companyWebsite: 'acme.com' }, config).lookup).toMatchObject({
      pronetKey: 'pronet.example/in/x',
      fullName: 'X Y',
      companyDomain: 'acme.com',
    });
    expect(() => planEnrichment({ fields: ['basic_contact_data', 'emails'], pronet: 'pronet.example/in/x', fullName: 'X Y', companyWebsite: 'acme.com' }, config)).not.toThrow();
  });

  it('validates pronet and companyWebsite shapes', () => {
    expect(rejects(() => planEnrichment({ fields: ['emails'], pronet: 'not a url' }, config)).details?.[0]?.path).toBe('/pronet');
    expect(rejects(() => planEnrichment({ fields: ['emails'], pronet: 'https://pronet.example/' }, config)).details?.[0]?.path).toBe('/pronet');
    expect(rejects(() => planEnrichment({ fields: ['emails'], fullName: 'A B', companyWebsite: 'localhost' }, config)).details?.[0]?.path).toBe('/companyWebsite');
  });

  it('answers slice_not_available for a slice without providers', () => {
    const none = parseEnrichmentConfig({ providers: { dataset: { type: 'dataset' } }, waterfall: { emails: ['dataset'] } });
    expect(rejects(() => planEnrichment({ fields: ['pronetPosts'], pronet: 'pronet.example/in/x' }, none)).code).toBe('slice_not_available');
  });
});

describe('provider answers', () => {
  it('classifies statuses: 2xx ok, 4xx rejected, 429 retried after Retry-After (bounded), 5xx retried', () => {
    const now = Date.parse('2026-11-21T18:00:00Z');
    expect(classifyProviderStatus(200, null, 30000, now)).toEqual({ kind: 'ok' });
    expect(classifyProviderStatus(401, null, 30000, now)).toEqual({ kind: 'rejected' });
    expect(classifyProviderStatus(404, null, 30000, now)).toEqual({ kind: 'rejected' });
    expect(classifyProviderStatus(429, '2', 30000, now)).toEqual({ kind: 'retry', type: 'provider_rate_limited', delayMs: 2000 });
    expect(classifyProviderStatus(429, null, 30000, now)).toEqual({ kind: 'retry', type: 'provider_rate_limited' });
    expect(classifyProviderStatus(429, '120', 30000, now)).toEqual({ kind: 'skip_rate_limited', delayMs: 120000 });
    expect(classifyProviderStatus(503, null, 30000, now)).toEqual({ kind: 'retry', type: 'provider_unavailable' });
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-21T18:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
    expect(parseRetryAfter('Sat, 21 Nov 2026 18:00:07 GMT', now)).toBe(7000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 17:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });

  it('checks slice data against the contract', () => {
    expect(sliceDataErrors('emails', { emails: [{ email: 'a@b.co', status: 'valid' }] })).toEqual([]);
    expect(sliceDataErrors('emails', { emails: [{ mail: 'a@b.co' }] }).length).toBeGreaterThan(0);
    expect(sliceDataErrors('basic_contact_data', { contact: { fullName: 'A', bogus: 1 } }).length).toBeGreaterThan(0);
    expect(sliceDataHasContent('emails', { emails: [] })).toBe(false);
    expect(sliceDataHasContent('basic_contact_data', { contact: {} })).toBe(false);
    expect(sliceDataHasContent('phoneNumbers', { phoneNumbers: [{ number: '+1555', type: 'mobile' }] })).toBe(true);
  });
});

describe('slice outcome → status, price, payload', () => {
  it('prices by providers tried until one found data; nothing when not found', () => {
    expect(slicePrice({ slice: 'emails', attempts: [att('a', 'found')] })).toBe(4);
    expect(slicePrice({ slice: 'emails', attempts: [att('a', 'not_found'), att('b', 'found')] })).toBe(5);
    expect(slicePrice({ slice: 'emails', attempts: [att('a', 'unavailable'), att('b', 'rejected'), att('c', 'found')] })).toBe(6);
    expect(slicePrice({ slice: 'phoneNumbers', attempts: [att('a', 'not_found'), att('b', 'found')] })).toBe(20);
    expect(slicePrice({ slice: 'phoneNumbers', attempts: [att('a', 'not_found'), att('b', 'not_found'), att('c', 'not_found'), att('d', 'found')] })).toBe(30);
    expect(slicePrice({ slice: 'pronetPosts', attempts: [att('a', 'not_found'), att('b', 'found')] })).toBe(10);
    expect(slicePrice({ slice: 'basic_contact_data', attempts: [att('a', 'found')] })).toBe(1);
    expect(slicePrice({ slice: 'emails', attempts: [att('a', 'not_found'), att('b', 'not_found')] })).toBe(0);
    expect(providersTried({ attempts: [att('a', 'not_found'), att('b', 'found')] })).toBe(2);
  });

  it('reports found / not_found / failed', () => {
    expect(sliceStatus({ attempts: [att('a', 'unavailable'), att('b', 'found')] })).toBe('found');
    expect(sliceStatus({ attempts: [att('a', 'unavailable'), att('b', 'not_found')] })).toBe('not_found');
    expect(sliceStatus({ attempts: [att('a', 'unavailable'), att('b', 'rejected')] })).toBe('failed');
  });

  it('assembles the job payload with provider tags, per-slice reports and the total charged', () => {
    const settled: SettledSlice[] = [
      { slice: 'basic_contact_data', attempts: [att('dataset', 'found')], data: { contact: { fullName: 'Jane Doe' } }, credits: 1 },
      { slice: 'emails', attempts: [att('alpha', 'not_found'), att('beta', 'found')], data: { emails: [{ email: 'jane@acme.com', status: 'valid' }] }, credits: 5 },
      { slice: 'phoneNumbers', attempts: [att('beta', 'not_found')], credits: 0 },
      { slice: 'pronetPosts', attempts: [att('dataset', 'unavailable')], credits: 0 },
      {
        slice: 'basic_company_data',
        attempts: [att('dataset', 'found')],
        data: { company: { companyName: 'Acme' } },
        credits: 0,
        chargeError: 'This request needs 1 credits; the balance is 0',
      },
    ];
    const r = assembleEnrichmentResult(settled);
    expect(r.contact).toEqual({ fullName: 'Jane Doe' });
    expect(r.company).toBeNull();
    expect(r.emails).toEqual([{ email: 'jane@acme.com', status: 'valid', provider: 'beta' }]);
    expect(r.phoneNumbers).toEqual([]);
    expect(r.creditsCharged).toBe(6);
    expect(r.slices.emails).toMatchObject({ status: 'found', provider: 'beta', credits: 5 });
    expect(r.slices.emails!.attempts).toEqual([att('alpha', 'not_found'), att('beta', 'found')]);
    expect(r.slices.phoneNumbers).toMatchObject({ status: 'not_found', provider: null, credits: 0 });
    expect(r.slices.pronetPosts).toMatchObject({ status: 'failed', error: { code: 'providers_failed' } });
    expect(r.slices.basic_company_data).toMatchObject({ status: 'failed', provider: null, credits: 0, error: { code: 'insufficient_credits' } });
  });
});
