import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from '../../domain/errors.js';
import { classifyPronetUrl, mergeSourceMeta, pullWindow, validateSourceInput, type SourceInput } from '../../domain/sourceRules.js';
import { parseInterval, validateRunFrequency } from '../../domain/runFrequency.js';
import { cloneSegmentContent, defaultCloneName } from '../../domain/segmentRules.js';

const catalog = (p: string) => ['contact.firstName', 'contact.pronet', 'contact.workEmail'].includes(p);

function failure(input: SourceInput): { path: string; message: string } {
  try {
    validateSourceInput(input, catalog);
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidRequestError);
    return (e as InvalidRequestError).details![0]!;
  }
  throw new Error('expected a 400');
}

describe('pronet URL shapes', () => {
  it.each([
    ['https://www.pronet.com/in/jane-doe-1a', 'profile'],
    ['pronet.com/in/jane-doe/', 'profile'],
    ['https://www.pronet.com/company/acme-12', 'company'],
    ['https://pronet.com/showcase/acme-cloud', 'company'],
    ['https://www.pronet.com/posts/1a-0-xyz', 'post'],
    ['https://www.pronet.com/feed/update/urn:li:activity:7123456789', 'post'],
    ['https://www.pronet.com/jobs/view/1', null],
    ['not a url', null],
    ['ftp://pronet.com/in/x', null],
    ['https://www.pronet.com/in/', null],
  ])('%s → %s', (url, kind) => expect(classifyPronetUrl(url)).toBe(kind));
});

describe('per-type source rules', () => {
  it('inbound/outbound take a profile or company URL and key on the normalised URL', () => {
    const a = validateSourceInput({ sourceType: 'pronetInbound', sourceIdentifier: 'https://www.Pronet.com/in/Jane-Doe/?x=1' }, catalog);
    const b = validateSourceInput({ sourceType: 'pronetInbound', sourceIdentifier: 'pronet.com/in/jane-doe' }, catalog);
    expect(a.identityKey).toBe('pronet.com/in/jane-doe');
    expect(b.identityKey).toBe(a.identityKey);
    expect(validateSourceInput({ sourceType: 'pronetOutbound', sourceIdentifier: 'https://pronet.com/company/acme' }, catalog).sourceIdentifier).toBe(
      'https://pronet.com/company/acme',
    );
    expect(failure({ sourceType: 'pronetOutbound', sourceIdentifier: 'https://pronet.com/posts/abc' }).path).toBe('/sourceIdentifier');
    expect(failure({ sourceType: 'pronetInbound' }).path).toBe('/sourceIdentifier');
  });
  it('pronetPost takes a post or activity URL', () => {
    expect(validateSourceInput({ sourceType: 'pronetPost', sourceIdentifier: 'https://pronet.com/posts/abc-1' }, catalog).identityKey).toBe('pronet.com/posts/abc-1');
    expect(failure({ sourceType: 'pronetPost', sourceIdentifier: 'https://pronet.com/in/jane' }).path).toBe('/sourceIdentifier');
  });
  it('keyword search: no identifier, keyword of at least 3 characters', () => {
    const s = validateSourceInput({ sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: '  Hiring ', authorTitle: 'CTO' } }, catalog);
    expect(s.sourceIdentifier).toBeNull();
    expect(s.sourceMeta.keyword).toBe('Hiring');
    expect(s.identityKey).toBe('hiring|cto|');
    expect(failure({ sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'ab' } })).toEqual({ path: '/sourceMeta/keyword', message: 'must have at least 3 characters' });
    expect(failure({ sourceType: 'pronetKeywordSearch', sourceMeta: {} }).path).toBe('/sourceMeta/keyword');
    expect(failure({ sourceType: 'pronetKeywordSearch', sourceIdentifier: 'x', sourceMeta: { keyword: 'abc' } }).path).toBe('/sourceIdentifier');
    expect(failure({ sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'abc', authorTitle: 3 } }).path).toBe('/sourceMeta/authorTitle');
  });
  // Found by an outside probe: POST /sources accepted the keyword "😀😀" (two characters, four
  // UTF-16 code units) as "at least 3 characters". Characters are counted as the schemas' minLength
  // (ajv) counts them: code points.
  it('keyword length counts characters (code points), not UTF-16 code units', () => {
    expect(failure({ sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: '😀😀' } })).toEqual({ path: '/sourceMeta/keyword', message: 'must have at least 3 characters' });
    expect(failure({ sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: ' 𝒜𝒷 ' } }).path).toBe('/sourceMeta/keyword');
    expect(validateSourceInput({ sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: '😀😀😀' } }, catalog).sourceMeta.keyword).toBe('😀😀😀');
    expect(validateSourceInput({ sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'été' } }, catalog).sourceMeta.keyword).toBe('été');
  });
  it('job posting: jobTitle, jobLocation, postedTime, jobType required; mapping checked', () => {
    const meta = { jobTitle: 'Engineer', jobLocation: 'Berlin', postedTime: 'past-week', jobType: 'full-time' };
    expect(validateSourceInput({ sourceType: 'pronetJobPosting', sourceMeta: meta }, catalog).identityKey).toBe('engineer|berlin|past-week|full-time');
    expect(failure({ sourceType: 'pronetJobPosting', sourceMeta: { ...meta, jobType: undefined } }).path).toBe('/sourceMeta/jobType');
    expect(
      failure({ sourceType: 'pronetJobPosting', sourceMeta: { ...meta, fieldMapping: [{ sourceFieldName: 'a', targetFieldName: 'contact.nope' }] } }).path,
    ).toBe('/sourceMeta/fieldMapping/0/targetFieldName');
  });
  it('importFromWebhook takes an optional config.fieldMapping with catalog targets', () => {
    const ok = validateSourceInput(
      { sourceType: 'importFromWebhook', sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'first', targetFieldName: 'contact.firstName' }] } } },
      catalog,
    );
    expect(ok.identityKey).toBeNull();
    expect(validateSourceInput({ sourceType: 'importFromWebhook', sourceMeta: {} }, catalog).sourceType).toBe('importFromWebhook');
    expect(validateSourceInput({ sourceType: 'importFromWebhook', sourceMeta: { config: { fieldMapping: [] } } }, catalog).sourceType).toBe('importFromWebhook');
    expect(failure({ sourceType: 'importFromWebhook', sourceMeta: { config: 'x' } }).path).toBe('/sourceMeta/config');
    expect(
      failure({ sourceType: 'importFromWebhook', sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'x', targetFieldName: 'contact.bogus' }] } } }),
    ).toEqual({ path: '/sourceMeta/config/fieldMapping/0/targetFieldName', message: "'contact.bogus' is not a field of GET /schema/contact" });
    expect(
      failure({
        sourceType: 'importFromWebhook',
        sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'x', targetFieldName: 'contact.firstName' }, { sourceFieldName: 'x', targetFieldName: 'contact.pronet' }] } },
      }).path,
    ).toBe('/sourceMeta/config/fieldMapping/1/sourceFieldName');
  });
  it('bulk items carry their index in the error path', () => {
    try {
      validateSourceInput({ sourceType: 'pronetPost', sourceIdentifier: 'x' }, catalog, '/sources/4');
      throw new Error('expected 400');
    } catch (e) {
      expect((e as InvalidRequestError).details![0]!.path).toBe('/sources/4/sourceIdentifier');
    }
  });
  it('merges sourceMeta and computes pull windows', () => {
    expect(mergeSourceMeta({ a: 1, b: 2 }, { b: null, c: 3 })).toEqual({ a: 1, c: 3 });
    expect(pullWindow(7, new Date('2026-11-21T00:00:00.000Z'))).toEqual({ since: '2026-11-14T00:00:00.000Z', until: '2026-11-21T00:00:00.000Z' });
  });
});

describe('runFrequency', () => {
  it.each([
    ['PT6H', 6 * 3600_000],
    ['P1D', 86_400_000],
    ['P1DT12H', 36 * 3600_000],
    ['PT30M', 1800_000],
    ['P1W', 7 * 86_400_000],
    ['6h', 6 * 3600_000],
    ['2d', 2 * 86_400_000],
    ['45m', 45 * 60_000],
    ['P', null],
    ['PT', null],
    ['6x', null],
    ['', null],
  ])('%s → %s ms', (s, ms) => expect(parseInterval(s)).toBe(ms));
  it('validates days and bounds', () => {
    expect(validateRunFrequency({ numberOfPastDaysToSync: '7', periodicInterval: '1d' })).toMatchObject({ pastDays: 7, intervalMs: 86_400_000 });
    expect(() => validateRunFrequency({ numberOfPastDaysToSync: '0', periodicInterval: '1d' })).toThrow(/numberOfPastDaysToSync/);
    expect(() => validateRunFrequency({ numberOfPastDaysToSync: '1', periodicInterval: '5m' })).toThrow(/between 15 minutes and 90 days/);
    expect(() => validateRunFrequency({ numberOfPastDaysToSync: '1', periodicInterval: 'daily' })).toThrow(/periodicInterval/);
  });
});

describe('segment clone rules', () => {
  const origin = {
    name: 'Leads',
    isDefault: false,
    segmentSources: ['s1', 's2'],
    conditions: [{ field: 'contact.firstName', operator: '==', value: 'Ann' }],
    groupedCondition: { operator: 'OR', conditions: [] },
    workflows: [{ name: 'notify', steps: [1] }],
    savedViewTemplates: [{ name: 'view' }],
  };
  const now = new Date('2026-11-21T18:00:00.123Z');
  it('copies everything by default, with the default name', () => {
    const c = cloneSegmentContent(origin, {}, now);
    expect(c).toEqual({ ...origin, isDefault: undefined, name: 'Copy of Leads - 2026-11-21T18:00:00.123Z' });
    expect(c.workflows).not.toBe(origin.workflows);
    expect(defaultCloneName('X', now)).toBe('Copy of X - 2026-11-21T18:00:00.123Z');
  });
  it('workflowOnly copies workflows only', () => {
    expect(cloneSegmentContent(origin, { workflowOnly: true, name: 'Mine' }, now)).toEqual({
      name: 'Mine',
      segmentSources: [],
      conditions: null,
      groupedCondition: null,
      workflows: origin.workflows,
      savedViewTemplates: [],
    });
  });
});
