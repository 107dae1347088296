import { describe, expect, it } from 'vitest';
import {
  aggregatePostStatus,
  contentProblem,
  providerTaskQueue,
  publishWorkflowId,
  rateLimitMaxWaitMs,
  rateLimitWait,
  repostTime,
  retryAfterMs,
  scheduledTimeProblem,
  threadDelaySecs,
} from '../../domain/publishing.js';

const now = new Date('2026-11-21T18:00:00.000Z');

describe('scheduledTimeProblem', () => {
  it('accepts future ISO 8601 with a zone', () => {
    expect(scheduledTimeProblem('2026-11-21T18:00:01.000Z', now)).toBeNull();
    expect(scheduledTimeProblem('2026-11-21T19:30:00+01:00', now)).toBeNull();
    expect(scheduledTimeProblem('2026-11-22T00:00Z', now)).toBeNull();
  });
  it('rejects past, present, zoneless and garbage', () => {
    expect(scheduledTimeProblem('2026-11-21T18:00:00.000Z', now)).toBe('must be in the future');
    expect(scheduledTimeProblem('2026-11-21T17:00:00Z', now)).toBe('must be in the future');
    expect(scheduledTimeProblem('2026-11-22T10:00:00', now)).toMatch(/time zone/);
    expect(scheduledTimeProblem('2026-11-22', now)).toMatch(/ISO 8601/);
    expect(scheduledTimeProblem('tomorrow', now)).toMatch(/ISO 8601/);
    expect(scheduledTimeProblem('2026-13-45T10:00:00Z', now)).toMatch(/valid date-time/);
    // impossible calendar moments are refused, not rolled over (30 February → 2 March)
    for (const t of ['2027-02-30T10:00:00Z', '2027-04-31T10:00:00Z', '2027-02-29T10:00:00Z', '2027-01-01T24:30:00Z', '2027-01-01T10:00:00+25:00'])
      expect(scheduledTimeProblem(t, now), t).toMatch(/valid date-time/);
    expect(scheduledTimeProblem('2028-02-29T10:00:00Z', now)).toBeNull();
  });
});

describe('contentProblem', () => {
  const types = new Map([['a.png', 'image/png'], ['v.mp4', 'video/mp4'], ['d.pdf', 'application/pdf']]);
  const post = (over: object = {}) => ({ content: 'hi', media: [], threadItems: [], externalPost: false, ...over });
  it('checks length per network', () => {
    expect(contentProblem(post({ content: 'x'.repeat(280) }), 'microblog', types)).toBeNull();
    expect(contentProblem(post({ content: 'x'.repeat(281) }), 'microblog', types)?.[1]).toMatch(/281 characters; microblog allows 280/);
    expect(contentProblem(post({ content: 'x'.repeat(281) }), 'pronet', types)).toBeNull();
    expect(contentProblem(post({ threadItems: [{ content: 'ok' }, { content: 'y'.repeat(300) }] }), 'microblog', types)?.[1]).toMatch(/thread item 1/);
  });
  it('checks media counts and types', () => {
    expect(contentProblem(post({ media: [{ fileName: 'd.pdf' }] }), 'microblog', types)?.[1]).toMatch(/application\/pdf/);
    expect(contentProblem(post({ media: [{ fileName: 'd.pdf' }] }), 'pronetPage', types)).toBeNull();
    expect(contentProblem(post({ media: Array(5).fill({ fileName: 'a.png' }) }), 'microblog', types)?.[1]).toMatch(/5 media/);
    expect(contentProblem(post({ media: [{ fileName: 'v.mp4' }, { fileName: 'a.png' }] }), 'microblog', types)?.[1]).toMatch(/one video alone/);
  });
  it('external replies only on pronet', () => {
    expect(contentProblem(post({ externalPost: true }), 'microblog', types)?.[1]).toMatch(/pronet/);
    expect(contentProblem(post({ externalPost: true }), 'pronet', types)).toBeNull();
  });
});

describe('small rules', () => {
  it('ids and queues', () => {
    expect(publishWorkflowId('p1', 2)).toBe('publish-p1-2');
    expect(providerTaskQueue('q', 'microblog')).toBe('q-microblog');
    expect(providerTaskQueue('q', 'pronetPage')).toBe('q-pronet');
  });
  it('thread delay: row over post, disabled is 0', () => {
    expect(threadDelaySecs({ threadDelay: { enabled: true, scheduleInSecs: 5 } }, { threadDelay: { enabled: true, scheduleInSecs: 9 } })).toBe(5);
    expect(threadDelaySecs({}, { threadDelay: { enabled: true, scheduleInSecs: 9 } })).toBe(9);
    expect(threadDelaySecs(null, { threadDelay: { enabled: false, scheduleInSecs: 9 } })).toBe(0);
  });
  it('repost time', () => {
    expect(repostTime('2026-11-21T18:00:00.000Z', 300).toISOString()).toBe('2026-11-21T18:05:00.000Z');
  });
  it('post status from rows', () => {
    expect(aggregatePostStatus(['published', 'publishing', 'scheduled'])).toBe('publishing');
    expect(aggregatePostStatus(['published', 'scheduled'])).toBe('scheduled');
    expect(aggregatePostStatus(['published', 'failed', 'cancelled'])).toBe('published');
    expect(aggregatePostStatus(['failed', 'cancelled'])).toBe('failed');
    expect(aggregatePostStatus(['cancelled'])).toBe('draft');
    expect(aggregatePostStatus([])).toBe('draft');
  });
  it('retry-after', () => {
    const t = Date.parse('2026-11-21T18:00:00Z');
    expect(retryAfterMs('3', null, t)).toBe(3000);
    expect(retryAfterMs('0', null, t)).toBe(1000);
    expect(retryAfterMs('Sat, 21 Nov 2026 18:00:10 GMT', null, t)).toBe(10_000);
    expect(retryAfterMs(null, String(t / 1000 + 20), t)).toBe(20_000);
    expect(retryAfterMs(null, null, t)).toBe(60_000);
    expect(retryAfterMs('99999', null, t)).toBe(15 * 60_000);
  });
  it('a 429 wait: the reset unclamped above, the cap from PROVIDER_RATE_LIMIT_MAX_WAIT_SECS', () => {
    const t = Date.parse('2026-11-21T18:00:00Z');
    const twoHours = retryAfterMs(null, String(t / 1000 + 7200), t, Number.MAX_SAFE_INTEGER);
    expect(twoHours).toBe(7_200_000);
    expect(rateLimitWait(twoHours, 3_600_000, t)).toEqual({ waitMs: 7_200_000, retryAt: '2026-11-21T20:00:00.000Z', maxWaitMs: 3_600_000 });
    expect(rateLimitMaxWaitMs({})).toBe(3_600_000);
    expect(rateLimitMaxWaitMs({ PROVIDER_RATE_LIMIT_MAX_WAIT_SECS: '900' })).toBe(900_000);
    expect(rateLimitMaxWaitMs({ PROVIDER_RATE_LIMIT_MAX_WAIT_SECS: 'soon' })).toBe(3_600_000);
  });
});
