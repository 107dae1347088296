/**
 * The token lifecycle on the time-skipping test server (issue 29 item 2), against the fake X
 * OAuth server (2-hour access tokens, rotating refresh tokens, a spent one answering
 * `invalid_grant`): the refresh-ahead sweep (`tokenRefreshWorkflow`, run every 10 minutes by a
 * Schedule in production) refreshes a token that ends within its margin, and leaves a fresh one,
 * a token endpoint answering 503 (nothing visible changes) and turns a revoked grant into
 * `reauth_required`; a post scheduled 3 days ahead on a 2-hour token publishes with its token
 * refreshed on the way.
 *
 * Clocks: the test server skips its clock; this process's clock (the activities', the fake X's)
 * is moved with it (`vi.setSystemTime`, Date only, still advancing) before each activity of the
 * publish, so the database rows, the stored expiry, the fake's token lifetimes and the
 * workflow's timers all tell the same time. PostgreSQL's own clock is not moved and none of
 * these paths read it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { startTestApp, type TestApp } from '../harness.js';
import { startTimeSkipping, type TimeSkippingWorld } from './timeSkipping.js';
import { FakeX } from '../fakes/x.js';
import { oauthConnect } from '../oauthFlow.js';
import { publishPostWorkflow } from '../../workflows/publishPost.js';
import { tokenRefreshWorkflow } from '../../workflows/tokenRefresh.js';
import { rescheduleUpdate } from '../../workflows/scheduling.js';
import { publishWorkflowId } from '../../domain/publishing.js';
import type { Activities } from '../../activities/index.js';

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
  });

  it('a post scheduled 3 days ahead on a 2-hour token publishes, its token refreshed on the way', async () => {
    clockAt(await world.env.currentTimeMs());
    const account = await connect({ id: '8003', name: 'Patient', username: 'patient' });
    const before = refreshesOf('8003');
    const d = await app.http('POST', '/v1/posts', { apiKey: ws.apiKey, body: { providerId: account.id, content: 'three days later' } });
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    const postId: string = d.body.data.id;
    const at = new Date(Date.now() + 3 * DAY).toISOString();
    const b = await app.http('POST', '/v1/posts/bulk-schedule', { apiKey: ws.apiKey, body: { posts: [{ postId, schedules: [{ providerId: account.id, scheduledTime: at }] }] } });
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    const row = (await app.pool.query<{ id: string; scheduled_time: Date }>(`select id, scheduled_time from post_schedules where post_id = $1`, [postId])).rows[0]!;

    // Each activity runs on the skipped clock.
    const onServerClock =
      <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
      async (...a: A): Promise<R> => {
        clockAt(await world.env.currentTimeMs());
        return fn(...a);
      };
    const activities: Partial<Activities> = { claimSchedule: onServerClock(world.real.claimSchedule), publishStep: onServerClock(world.real.publishStep) };
    const result = await world.withWorkers(activities, async () => {
      const startWorkflowOperation = new WithStartWorkflowOperation(publishPostWorkflow, {
        workflowId: publishWorkflowId(postId, 0),
        taskQueue: world.taskQueue,
        args: [{ workspaceId: ws.workspaceId, postId, n: 0, taskQueue: world.taskQueue }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      await world.env.client.workflow.executeUpdateWithStart(rescheduleUpdate, { args: [{ scheduleId: row.id, scheduledTime: row.scheduled_time.toISOString() }], startWorkflowOperation });
      return (await startWorkflowOperation.workflowHandle()).result();
    });
    expect(result, JSON.stringify(result)).toMatchObject({ phase: 'published', error: null });
    expect(await world.env.currentTimeMs()).toBeGreaterThanOrEqual(Date.parse(at) - 15_000);
    // The connect's token had ended 2 days 22 hours before: one refresh, then the post.
    expect(refreshesOf('8003') - before).toBe(1);
    const tweet = x.tweets.find((t) => t.text === 'three days later');
    expect(tweet?.authorId).toBe('8003');
    const post = (await app.http('GET', `/v1/posts/${postId}`, { apiKey: ws.apiKey })).body.data;
    expect(post).toMatchObject({ status: 'published', externalId: tweet!.id, error: null });
    expect(Date.parse((await integration(account.id)).accessExpiresAt)).toBeGreaterThan(Date.parse(at));
  });
});
