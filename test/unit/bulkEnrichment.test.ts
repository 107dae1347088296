/** Row planning, estimate and trace of bulk enrichment (domain/bulkEnrichment.ts). */
import { describe, expect, it } from 'vitest';
import { addToEstimate, emptyEstimate, planRow, rowPrice, rowTrace, type BulkSliceOutcome } from '../../domain/bulkEnrichment.js';
import { parseEnrichmentConfig } from '../../domain/enrichmentConfig.js';

const config = parseEnrichmentConfig({
  providers: { alpha: { type: 'http', baseUrl: 'http://127.0.0.1:1' }, names: { type: 'http', baseUrl: 'http://127.0.0.1:2', lookups: ['pronet', 'name_domain'] } },
  waterfall: { basic_contact_data: ['alpha'], emails: ['alpha', 'names'] },
});
const none = new Set<string>();

describe('planRow', () => {
  it('plans each slice with the single-row rules and skips the ones the contact cannot be looked up for', () => {
    const byName = planRow({ fullName: 'Ada Lovelace', companyWebsite: 'analytical.example' }, ['basic_contact_data', 'emails'], config, none, false);
    expect(byName.skipped).toEqual({ basic_contact_data: { reason: 'no_lookup', code: 'pronet_required' } });
    expect(byName.slices.emails!.map((p) => p.provider)).toEqual(['names']);
    expect(byName.lookup).toMatchObject({ fullName: 'Ada Lovelace', companyDomain: 'analytical.example' });

    const byProfile = planRow({ pronet: 'https://pronet.example/in/ada' }, ['basic_contact_data', 'emails'], config, none, false);
    expect(Object.keys(byProfile.slices)).toEqual(['basic_contact_data', 'emails']);
    expect(byProfile.slices.emails!.map((p) => p.provider)).toEqual(['alpha', 'names']);
  });

  it('skips fresh slices unless forced, and ignores a website that is no domain', () => {
    const fresh = new Set(['emails']);
    expect(planRow({ pronet: 'https://pronet.example/in/ada' }, ['emails'], config, fresh, false).skipped).toEqual({ emails: { reason: 'fresh' } });
    expect(Object.keys(planRow({ pronet: 'https://pronet.example/in/ada' }, ['emails'], config, fresh, true).slices)).toEqual(['emails']);
    const badSite = planRow({ pronet: 'https://pronet.example/in/ada', companyWebsite: 'not a site' }, ['basic_contact_data'], config, none, false);
    expect(Object.keys(badSite.slices)).toEqual(['basic_contact_data']);
  });
});

describe('estimate and trace', () => {
  it('prices the first and the last provider of each slice to buy', () => {
    const e = emptyEstimate(['basic_contact_data', 'emails']);
    addToEstimate(e, planRow({ pronet: 'https://pronet.example/in/a' }, ['basic_contact_data', 'emails'], config, none, false));
    addToEstimate(e, planRow({ pronet: 'https://pronet.example/in/b' }, ['basic_contact_data', 'emails'], config, new Set(['basic_contact_data']), false));
    addToEstimate(e, planRow({}, ['basic_contact_data', 'emails'], config, none, false));
    expect(e).toMatchObject({ rows: 3, rowsToEnrich: 2, minCredits: 1 + 4 + 4, maxCredits: 1 + 5 + 5 });
    expect(e.slices.basic_contact_data).toMatchObject({ toBuy: 1, fresh: 1, noLookup: 1 });
    expect(e.slices.emails).toMatchObject({ toBuy: 2, fresh: 0, noLookup: 1 });
  });

  it('traces and prices a row as the single-row path does', () => {
    const plan = planRow({ pronet: 'https://pronet.example/in/a' }, ['basic_contact_data', 'emails'], config, none, false);
    const outcomes: BulkSliceOutcome[] = [
      { slice: 'basic_contact_data', attempts: [{ provider: 'alpha', outcome: 'not_found', durationMs: 1 }], rateLimitedWaits: [0] },
      {
        slice: 'emails',
        attempts: [
          { provider: 'alpha', outcome: 'unavailable', durationMs: 1, error: 'provider_timeout: …' },
          { provider: 'names', outcome: 'found', durationMs: 1 },
        ],
        rateLimitedWaits: [2, 0],
        data: { emails: [{ email: 'a@b.example', status: 'valid' }] },
      },
    ];
    expect(rowPrice(outcomes)).toBe(5);
    const trace = rowTrace(plan, outcomes, true);
    expect(trace.credits).toBe(5);
    expect(trace.slices.emails).toMatchObject({ status: 'found', provider: 'names', credits: 5, attempts: [{ provider: 'alpha', outcome: 'unavailable', rateLimitedWaits: 2 }, { provider: 'names', outcome: 'found' }] });
    expect(trace.slices.basic_contact_data).toMatchObject({ status: 'not_found', provider: null, credits: 0 });
    expect(rowTrace(plan, outcomes, false).credits).toBe(0);
  });
});
