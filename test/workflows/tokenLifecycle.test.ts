/**
 * The token lifecycle on the time-skipping test server (issue 29 item 2), against the fake X
 * OAuth server (2-hour access tokens, rotating refresh tokens, a spent one answering
 * `invalid_grant`): the refresh-ahead sweep (`tokenRefreshWorkflow`, run every 10 minutes by a
 * Schedule in production) refreshes a token that ends within its margin, and leaves a fresh one,
 * a token endpoint answering 503 (nothing visible changes) and turns a revoked grant into
 * `reauth_required`; a post scheduled 3 days ahead on a 2-hour token publishes with its token
 * refreshed on the way; a revoked grant fails the post with `integration_reauth_required`, and
 * after the reconnect (same integration id) the rescheduled post publishes; 20 concurrent
 * publishes on one account whose token has ended make one refresh (as on the real stack in
 * test/integration/oauthLifecycle.test.ts). That case moves the server's clock once with
 * `env.sleep` and awaits its 20 results on a client that does not skip time. Awaited on the
 * skipping client, under load the runs' tasks timed out, each run was handed a second one
 * ("Trying to send a new WFT for a run which already has one!") and some ended in "Workflow
 * execution timed out" (fresh-clone CI run of 01aa9e2, and 3 of 3 runs here at load 15): the
 * clock then jumps wherever the server finds nothing running, not only where the test means.
 *
 * Clocks: the test server skips its clock; this process's clock (the activities', the fake X's)
 * is moved with it (`vi.setSystemTime`, Date only, still advancing) before each activity of the
 * publish, so the database rows, the stored expiry, the fake's token lifetimes and the
 * workflow's timers all tell the same time. PostgreSQL's own clock is not moved and none of
 * these paths read it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { startTimeSkipping, type TimeSkippingWorld } from './timeSkipping.js';
import { FakeX } from '../fakes/x.js';
import { oauthConnect } from '../oauthFlow.js';
import { tokenRefreshWorkflow } from '../../workflows/tokenRefresh.js';
import type { Activities } from '../../activities/index.js';
import type { publishPostWorkflow } from '../../workflows/publishPost.js';

const REDIRECT = 'https://app.example.com/integrations/oauth/callback';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let app: TestApp;
let world: TimeSkippingWorld;
const x = new FakeX();
let ws: { workspaceId: string; apiKey: string };

beforeAll(async () => {
  await x.listen();
  x.oauth.addClient({ clientId: 'op-x', clientSecret: 'op-x-secret', redirectUris: [REDIRECT] });
  app = await startTestApp({
    workerMode: 'none',
    env: { PROVIDER_TIMEOUT_MS: '3000', OAUTH_REDIRECT_URL: REDIRECT, X_CLIENT_ID: 'op-x', X_CLIENT_SECRET: 'op-x-secret', X_AUTHORIZE_URL: `${x.url}/i/oauth2/authorize`, X_API_BASE_URL: x.url },
  });
  world = await startTimeSkipping(app);
  ws = await app.createWorkspace({ plan: 'enterprise' });
});
afterEach(() => {
  vi.useRealTimers();
});
afterAll(async () => {
  await world?.teardown();
  await app?.close();
  await x.close();
});

/** Moves this process's clock (Date only, still advancing) to `ms`. */
function clockAt(ms: number) {
  vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
  vi.setSystemTime(ms);
}

async function connect(user: { id: string; name: string; username: string }) {
  x.oauth.consentAs(user);
  const { res } = await oauthConnect(app, ws.apiKey, 'microblog', REDIRECT);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.integration as { id: string; accessExpiresAt: string };
}

/** Each activity of a publish runs on the skipped clock. */
const onServerClock =
  <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
  async (...a: A): Promise<R> => {
    clockAt(await world.env.currentTimeMs());
    return fn(...a);
  };
const onClock = (): Partial<Activities> => ({ claimSchedule: onServerClock(world.real.claimSchedule), publishStep: onServerClock(world.real.publishStep) });

async function draft(providerId: string, content: string): Promise<string> {
  const d = await app.http('POST', '/v1/posts', { apiKey: ws.apiKey, body: { providerId, content } });
  expect(d.status, JSON.stringify(d.body)).toBe(200);
  return d.body.data.id;
}

/** Schedules the posts (real bulk-schedule) at `at`; answers each post's row, as the dispatcher would hand it to its workflow. */
async function schedule(postIds: string[], providerId: string, at: string) {
  const b = await app.http('POST', '/v1/posts/bulk-schedule', { apiKey: ws.apiKey, body: { posts: postIds.map((postId) => ({ postId, schedules: [{ providerId, scheduledTime: at }] })) } });
  expect(b.status, JSON.stringify(b.body)).toBe(200);
  const rows = await app.pool.query<{ post_id: string; id: string; n: number; scheduled_time: Date }>(`select post_id, id, n, scheduled_time from post_schedules where post_id = any($1) and status = 'scheduled'`, [postIds]);
  expect(rows.rows).toHaveLength(postIds.length);
  return rows.rows;
}

/** Starts each row's publish workflow (update-with-start, as the dispatcher) and waits for the results (time skipped). */
async function publish(rows: Awaited<ReturnType<typeof schedule>>) {
  return world.withWorkers(onClock(), async () => {
    // One after another: with 3 concurrent update-with-starts the test server had not answered after 3 minutes.
    const handles = [];
    for (const row of rows) {
      handles.push(await world.startPublish({ workspaceId: ws.workspaceId, postId: row.post_id, n: row.n }, { scheduleId: row.id, scheduledTime: row.scheduled_time.toISOString() }));
    }
    return Promise.all(handles.map((h) => h.result()));
  });
}

const integration = async (id: string) => (await app.http('GET', `/integrations/${id}`, { apiKey: ws.apiKey })).body.data;
const refreshesOf = (userId: string) => x.oauth.refreshes.filter((r) => r.userId === userId).length;

describe('token lifecycle (time skipping)', () => {
  it('the sweep refreshes a token ending within its margin once, leaves fresh ones, changes nothing on a 503 and marks a revoked grant reauth_required', async () => {
    const ending = await connect({ id: '8001', name: 'Ending', username: 'ending' });
    const revoked = await connect({ id: '8002', name: 'Revoked', username: 'revoked' });
    x.oauth.revokeUser('8002');
    const sweep = () => world.withWorkers({}, () => world.env.client.workflow.execute(tokenRefreshWorkflow, { workflowId: `token-refresh-${Date.now()}`, taskQueue: world.taskQueue }));

    // Right after the connect: 2 hours left, outside the margin (5 min + 2 × 10 min): nothing to do.
    expect(await sweep()).toEqual({ due: 0, refreshed: 0, reauthRequired: 0, deferred: 0 });

    // 1 h 45 min later both are due; the token endpoint first answers 503: nothing visible changes.
    clockAt(Date.now() + 105 * 60_000);
    x.inject('POST /2/oauth2/token', { status: 503, body: { error: 'temporarily_unavailable' } }, 2);
    expect(await sweep()).toMatchObject({ due: 2, refreshed: 0, deferred: 2 });
    expect(await integration(ending.id)).toMatchObject({ status: 'connected', accessExpiresAt: ending.accessExpiresAt });
    expect(await integration(revoked.id)).toMatchObject({ status: 'connected' });

    expect(await sweep()).toEqual({ due: 2, refreshed: 1, reauthRequired: 1, deferred: 0 });
    const after = await integration(ending.id);
    expect(after.status).toBe('connected');
    expect(Date.parse(after.accessExpiresAt)).toBeGreaterThan(Date.parse(ending.accessExpiresAt) + HOUR);
    expect(refreshesOf('8001')).toBe(1);
    expect((await integration(revoked.id)).status).toBe('reauth_required');

    // Refreshed: outside the margin again, not refreshed twice.
    expect(await sweep()).toEqual({ due: 0, refreshed: 0, reauthRequired: 0, deferred: 0 });
    expect(refreshesOf('8001')).toBe(1);
   }, 120_000);

  it('a post scheduled 3 days ahead on a 2-hour token publishes, its token refreshed on the way', async () => {
    clockAt(await world.env.currentTimeMs());
    const account = await connect({ id: '8003', name: 'Patient', username: 'patient' });
    const before = refreshesOf('8003');
    const postId = await draft(account.id, 'three days later');
    const at = new Date(Date.now() + 3 * DAY).toISOString();
    const [result] = await publish(await schedule([postId], account.id, at));
    expect(result, JSON.stringify(result)).toMatchObject({ phase: 'published', error: null });
    expect(await world.env.currentTimeMs()).toBeGreaterThanOrEqual(Date.parse(at) - 15_000);
    // The connect's token had ended 2 days 22 hours before: one refresh, then the post.
    expect(refreshesOf('8003') - before).toBe(1);
    const tweet = x.tweets.find((t) => t.text === 'three days later');
    expect(tweet?.authorId).toBe('8003');
    const post = (await app.http('GET', `/v1/posts/${postId}`, { apiKey: ws.apiKey })).body.data;
    expect(post).toMatchObject({ status: 'published', externalId: tweet!.id, error: null });
    expect(Date.parse((await integration(account.id)).accessExpiresAt)).toBeGreaterThan(Date.parse(at));
   }, 120_000);

  it('a revoked grant: reauth_required, the post fails with integration_reauth_required; the reconnect keeps the id and the rescheduled post publishes', async () => {
    clockAt(await world.env.currentTimeMs());
    const account = await connect({ id: '8005', name: 'Gone', username: 'gone' });
    x.oauth.revokeUser('8005');
    const postId = await draft(account.id, 'after the revocation');
    const [failed] = await publish(await schedule([postId], account.id, new Date(Date.now() + 3 * HOUR).toISOString()));
    expect(failed).toMatchObject({ phase: 'failed', error: { code: 'integration_reauth_required', provider: 'microblog' } });
    expect((await integration(account.id)).status).toBe('reauth_required');
    expect((await app.http('GET', `/v1/posts/${postId}`, { apiKey: ws.apiKey })).body.data).toMatchObject({ status: 'failed', error: { code: 'integration_reauth_required' } });
    expect(x.tweets.filter((t) => t.authorId === '8005')).toHaveLength(0);

    clockAt(await world.env.currentTimeMs());
    x.oauth.consentAs({ id: '8005', name: 'Gone', username: 'gone' });
    const again = await oauthConnect(app, ws.apiKey, 'microblog', REDIRECT);
    expect(again.res.body.data).toMatchObject({ reconnected: true, integration: { id: account.id, status: 'connected' } });
    const [published] = await publish(await schedule([postId], account.id, new Date(Date.now() + HOUR).toISOString()));
    expect(published, JSON.stringify(published)).toMatchObject({ phase: 'published', error: null });
    expect(x.tweets.filter((t) => t.authorId === '8005').map((t) => t.text)).toEqual(['after the revocation']);
  }, 120_000);

  it('20 concurrent publishes on one account whose token has ended make exactly one refresh', { timeout: 240_000 }, async () => {
    const now = await world.env.currentTimeMs();
    clockAt(now);
    const account = await connect({ id: '8007', name: 'Busy', username: 'busy' });
    const before = refreshesOf('8007');
    const N = 20;
    const postIds = await Promise.all(Array.from({ length: N }, (_, i) => draft(account.id, `concurrent ${i}`)));
    // Three hours ahead: the 2-hour token has ended when all 20 come due at the same instant.
    const at = now + 3 * HOUR;
    const rows = await schedule(postIds, account.id, new Date(at).toISOString());
    const results = await world.withWorkers(onClock(), async () => {
      const handles = [];
      for (const row of rows) handles.push(await world.startPublish({ workspaceId: ws.workspaceId, postId: row.post_id, n: row.n }, { scheduleId: row.id, scheduledTime: row.scheduled_time.toISOString() }));
      // The clock is moved once, past the due time, and the results are awaited without skipping:
      // 20 results awaited on the skipping client let the server skip its clock while runs were
      // still between tasks, past their timeouts (CI run of 01aa9e2).
      await world.env.sleep(at + 10 * 60_000 - now);
      return Promise.all(handles.map((h) => world.plainClient.workflow.getHandle<typeof publishPostWorkflow>(h.workflowId).result()));
    });
    // Any that did not publish, with its error (what a failure here needs to be understood).
    expect(results.filter((r) => r.phase !== 'published')).toEqual([]);
    // X rotates refresh tokens: a second refresh with the same one would have killed the grant.
    expect(x.oauth.refreshes.filter((r) => r.userId === '8007').slice(before)).toHaveLength(1);
    expect(x.tweets.filter((t) => t.authorId === '8007')).toHaveLength(N);
    expect((await integration(account.id)).status).toBe('connected');
  });
});
