/**
 * A 429 from the network on the time-skipping test server (issue 29 item 5): the real publish
 * workflow and activities against the fake X server. The 429's `x-rate-limit-reset` (15 minutes
 * ahead) becomes a workflow timer of that length, not an activity retry; the post shows `retryAt`
 * (the reset) while it waits, stays `publishing` with no error, then publishes. A reset beyond the
 * configured cap (1 hour) fails the post with `provider_rate_limited` without a second send.
 *
 * Clocks: the test server's clock starts at the wall clock; rows are stored due in a few seconds
 * and the Update carries the same time, so the provider step sends at once (real time) and only
 * the 429's wait is skipped.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { startTimeSkipping, type TimeSkippingWorld } from './timeSkipping.js';
import { FakeX } from '../fakes/x.js';

let app: TestApp;
let world: TimeSkippingWorld;
const x = new FakeX();
let ws: { workspaceId: string; apiKey: string };
let account: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  await x.listen();
  x.addUser('5001', 'limited-token');
  app = await startTestApp({ workerMode: 'none' });
  world = await startTimeSkipping(app);
  ws = await app.createWorkspace();
  const r = await app.http('POST', '/integrations', {
    apiKey: ws.apiKey,
    body: { provider: 'microblog', name: 'limited', externalAccountId: '5001', credentials: { accessToken: 'limited-token' }, apiBaseUrl: x.url },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  account = r.body.data.id;
});

afterAll(async () => {
  await world?.teardown();
  await app?.close();
  await x.close();
});

/** A draft scheduled (real bulk-schedule) a few seconds from now, and its publish workflow started with that row. */
async function scheduled(content: string) {
  const d = await app.http('POST', '/v1/posts', { apiKey: ws.apiKey, body: { providerId: account, content } });
  expect(d.status, JSON.stringify(d.body)).toBe(200);
  const postId: string = d.body.data.id;
  const at = new Date(Date.now() + 2_000).toISOString();
  const b = await app.http('POST', '/v1/posts/bulk-schedule', { apiKey: ws.apiKey, body: { posts: [{ postId, schedules: [{ providerId: account, scheduledTime: at }] }] } });
  expect(b.status, JSON.stringify(b.body)).toBe(200);
  const row = (await app.pool.query<{ id: string; scheduled_time: Date }>(`select id, scheduled_time from post_schedules where post_id = $1 and status = 'scheduled'`, [postId])).rows[0]!;
  return { postId, handle: await world.startPublish({ workspaceId: ws.workspaceId, postId }, { scheduleId: row.id, scheduledTime: row.scheduled_time.toISOString() }) };
}

const getPost = async (id: string) => (await app.http('GET', `/v1/posts/${id}`, { apiKey: ws.apiKey })).body.data;

/** The post once it shows `retryAt` (the first step answered 429); time is not skipped until a result is awaited. */
async function whenRateLimited(id: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const p = await getPost(id);
    if (p.retryAt || !['scheduled', 'publishing'].includes(p.status)) return p;
    if (Date.now() > deadline) throw new Error(`post ${id} still ${p.status} without retryAt`);
    await sleep(100);
  }
}

describe('provider rate limits (time skipping)', () => {
  it('waits out a 429 until x-rate-limit-reset (15 min) on a workflow timer, then publishes with no failure', async () => {
    const resetSecs = Math.ceil((Date.now() + 15 * 60_000) / 1000);
    x.inject('POST /2/tweets', { status: 429, body: { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 }, headers: { 'x-rate-limit-reset': String(resetSecs), 'x-rate-limit-remaining': '0' } });
    await world.withWorkers({}, async () => {
      const { postId, handle } = await scheduled('after the rate limit window');
      const waiting = await whenRateLimited(postId);
      expect(waiting).toMatchObject({ status: 'publishing', error: null });
      // The post shows the network's own reset time.
      expect(Math.abs(Date.parse(waiting.retryAt) - resetSecs * 1000)).toBeLessThan(1500);
      expect(x.calls('POST /2/tweets')).toHaveLength(1);

      const result = await handle.result();
      expect(result).toMatchObject({ phase: 'published', error: null });

      const events = (await handle.fetchHistory()).events ?? [];
      // A timer that fires at the network's reset, however long the first attempt took.
      const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);
      const fires = events.filter((e) => e.timerStartedEventAttributes).map((e) => ms(e.eventTime) + ms(e.timerStartedEventAttributes!.startToFireTimeout));
      expect(fires.some((at) => Math.abs(at - resetSecs * 1000) <= 2000), JSON.stringify(fires)).toBe(true);
      // Two provider steps, each on its first attempt: the 429 spent no activity retry.
      const started = events.filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes!.attempt);
      const publishSteps = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'publishStep');
      expect(publishSteps).toHaveLength(2);
      expect(started.every((a) => a === 1)).toBe(true);
      // The second send happened on the skipped clock no earlier than the reset.
      expect(ms(publishSteps[1]!.eventTime)).toBeGreaterThanOrEqual(resetSecs * 1000 - 1000);
    });
    const calls = x.calls('POST /2/tweets');
    expect(calls).toHaveLength(2);
    const tweets = x.tweets.filter((t) => t.text === 'after the rate limit window');
    expect(tweets).toHaveLength(1);
    const post = await getPost((await app.pool.query<{ id: string }>(`select id from posts where content = 'after the rate limit window'`)).rows[0]!.id);
    expect(post).toMatchObject({ status: 'published', error: null, retryAt: null, externalId: tweets[0]!.id });
  });

  it('fails with provider_rate_limited when the reset lies beyond the cap, without sending again', async () => {
    const before = x.calls('POST /2/tweets').length;
    x.inject('POST /2/tweets', { status: 429, body: { title: 'Too Many Requests' }, headers: { 'x-rate-limit-reset': String(Math.ceil((Date.now() + 2 * 3600_000) / 1000)) } });
    await world.withWorkers({}, async () => {
      const { postId, handle } = await scheduled('reset too far ahead');
      const result = await handle.result();
      expect(result.phase).toBe('failed');
      expect(result.error).toMatchObject({ code: 'provider_rate_limited', provider: 'microblog' });
      const post = await getPost(postId);
      expect(post).toMatchObject({ status: 'failed', retryAt: null, error: { code: 'provider_rate_limited' } });
      expect(post.error.message).toMatch(/beyond the 3600 s/);
    });
    expect(x.calls('POST /2/tweets').length - before).toBe(1);
  });
});
