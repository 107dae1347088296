/** The HTTP listening adapter against the fake provider: contract, paging and failure classes. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHttpListeningProvider, parseRetryAfter } from '../../activities/providers/listeningHttp.js';
import { ListeningProviderError, type ListeningPerson, type ListeningQuery } from '../../activities/providers/listening.js';
import { startFakeListeningProvider, type FakeListeningProvider } from '../fakes/listeningProvider.js';

let fake: FakeListeningProvider;
beforeAll(async () => {
  fake = await startFakeListeningProvider();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const now = Date.parse('2026-11-21T12:00:00.000Z');
const person = (i: number, hoursAgo: number): ListeningPerson => ({
  pronet: `https://www.pronet.com/in/p-${i}`,
  firstName: `P${i}`,
  lastName: 'Doe',
  fullName: `P${i} Doe`,
  jobTitle: 'Engineer',
  company: { companyName: 'Acme', companyWebsite: 'https://acme.com' },
  interaction: { type: 'like', postUrl: 'https://www.pronet.com/posts/x', occurredAt: new Date(now - hoursAgo * 3600_000).toISOString() },
});
const query: ListeningQuery = {
  sourceType: 'pronetInbound',
  sourceIdentifier: 'https://www.pronet.com/in/owner',
  sourceMeta: {},
  since: new Date(now - 24 * 3600_000).toISOString(),
  until: new Date(now).toISOString(),
};

async function failureOf(p: Promise<unknown>): Promise<ListeningProviderError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ListeningProviderError);
    return e as ListeningProviderError;
  }
  throw new Error('expected a failure');
}

describe('http listening provider', () => {
  it('sends the documented request and pages through the window', async () => {
    fake.setAudience(query.sourceIdentifier!, [person(1, 1), person(2, 2), person(3, 30), person(4, 5)]);
    const provider = createHttpListeningProvider({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, timeoutMs: 2000, allowList: ['127.0.0.1'] });
    const p1 = await provider.fetchAudience(query, { cursor: null, limit: 2 });
    expect(p1.people.map((p) => p.pronet)).toEqual(['https://www.pronet.com/in/p-1', 'https://www.pronet.com/in/p-2']);
    expect(p1.nextCursor).not.toBeNull();
    const p2 = await provider.fetchAudience(query, { cursor: p1.nextCursor, limit: 2 });
    expect(p2.people.map((p) => p.pronet)).toEqual(['https://www.pronet.com/in/p-4']);
    expect(p2.nextCursor).toBeNull();
    const r = fake.requests[0]!;
    expect(r.path).toBe('/v1/audience');
    expect(r.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(r.body).toEqual({
      sourceType: 'pronetInbound',
      sourceIdentifier: query.sourceIdentifier,
      filters: {},
      postedAfter: query.since,
      postedBefore: query.until,
      cursor: null,
      limit: 2,
    });
  });

  it('sends keyword filters', async () => {
    const provider = createHttpListeningProvider({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, timeoutMs: 2000, allowList: ['127.0.0.1'] });
    await provider.fetchAudience({ ...query, sourceType: 'pronetKeywordSearch', sourceIdentifier: null, sourceMeta: { keyword: 'hiring', authorTitle: 'CTO', sourceName: 'n' } }, { cursor: null, limit: 10 });
    expect(fake.requests[0]!.body!.filters).toEqual({ keyword: 'hiring', authorTitle: 'CTO' });
  });

  it('classifies 401 as credentials with the provider reason', async () => {
    const provider = createHttpListeningProvider({ baseUrl: fake.baseUrl, apiKey: 'wrong', timeoutMs: 2000, allowList: ['127.0.0.1'] });
    const e = await failureOf(provider.fetchAudience(query, { cursor: null, limit: 10 }));
    expect(e.kind).toBe('credentials');
    expect(e.message).toContain('invalid_api_key: The API key is invalid or revoked');
  });

  it('classifies 429 with Retry-After, 500, 400 and timeouts', async () => {
    const provider = createHttpListeningProvider({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, timeoutMs: 300, allowList: ['127.0.0.1'] });
    fake.script({ status: 429, retryAfter: '3' }, { status: 500 }, { status: 422 }, { delayMs: 1000 });
    const rl = await failureOf(provider.fetchAudience(query, { cursor: null, limit: 10 }));
    expect([rl.kind, rl.retryAfterMs]).toEqual(['rate_limited', 3000]);
    expect((await failureOf(provider.fetchAudience(query, { cursor: null, limit: 10 }))).kind).toBe('transient');
    expect((await failureOf(provider.fetchAudience(query, { cursor: null, limit: 10 }))).kind).toBe('invalid_input');
    const to = await failureOf(provider.fetchAudience(query, { cursor: null, limit: 10 }));
    expect(to.kind).toBe('transient');
    expect(to.message).toContain('did not answer within 300 ms');
  });

  it('parses Retry-After forms', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(null)).toBe(30_000);
    expect(parseRetryAfter(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThan(8000);
    expect(parseRetryAfter('0')).toBe(1000);
  });
});
