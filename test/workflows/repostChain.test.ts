/**
 * The repost chain (workflows/repostChain.ts) on the time-skipping test server: children created
 * by the real reposting configuration (+5 min, +30 min, +60 min after the parent) each wait on
 * the skipped clock until their own time, are claimed and finished by the real activities on
 * this file's database, reshare through the provider step (a third party: a test function), and
 * a child cancelled while the chain waits is skipped at its claim.
 *
 * Clocks: the real claim compares a child's stored time with the wall clock, the workflow sleeps
 * on the test server's skipped clock. `onSkippedClock` runs the real claim as if the wall clock
 * stood where the test server's does: it moves the child's stored time back by the skew for the
 * claim and forward again after it (and translates a `not_due` answer back).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { startTimeSkipping, type TimeSkippingWorld } from './timeSkipping.js';
import { repostChainWorkflow } from '../../workflows/repostChain.js';
import { PUBLISH_LEAD_MS } from '../../workflows/scheduling.js';
import type { Activities } from '../../activities/index.js';

let app: TestApp;
let world: TimeSkippingWorld;

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
  world = await startTimeSkipping(app);
});
afterAll(async () => {
  await world?.teardown();
  await app?.close();
});

it('reshares each child at its own time on the skipped clock and skips a cancelled one', async () => {
  const ws = await app.createWorkspace({ plan: 'enterprise' }); // cross-account reposting is an Enterprise feature
  const connect = async (provider: string, id: string) => {
    const r = await app.http('POST', '/integrations', {
      apiKey: ws.apiKey,
      // Never called: the provider step is a test function.
      body: { provider, name: `${provider} ${id}`, externalAccountId: id, credentials: { accessToken: 't' }, apiBaseUrl: 'http://127.0.0.1:9' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data.id as string;
  };
  const member = await connect('pronet', 'member');
  const pages = [await connect('pronetPage', '1'), await connect('pronetPage', '2'), await connect('pronetPage', '3')];
  const parent = (await app.http('POST', '/v1/posts', { apiKey: ws.apiKey, body: { providerId: member, content: 'parent' } })).body.data.id as string;
  const delays = [300, 1800, 3600];
  const rp = await app.http('POST', `/v1/posts/${parent}/reposting`, {
    apiKey: ws.apiKey,
    body: { reposting: { enable: true, reposts: pages.map((providerId, i) => ({ providerId, scheduleInSecs: delays[i] })) } },
  });
  expect(rp.status, JSON.stringify(rp.body)).toBe(200);
  const at = Date.now() + 3_000;
  const b = await app.http('POST', '/v1/posts/bulk-schedule', { apiKey: ws.apiKey, body: { posts: [{ postId: parent, schedules: [{ providerId: member, scheduledTime: new Date(at).toISOString() }] }] } });
  expect(b.status, JSON.stringify(b.body)).toBe(200);
  const kids = (await app.pool.query<{ id: string; scheduled_time: Date }>(`select id, scheduled_time from posts where parent_post_id = $1 order by repost_delay_secs`, [parent])).rows;
  expect(kids.map((k) => k.scheduled_time.getTime() - at)).toEqual(delays.map((d) => d * 1000));
  // The parent was published: its publish workflow starts the chain then.
  await app.pool.query(`update posts set status = 'published', external_id = 'urn:li:share:parent' where id = $1`, [parent]);

  const claims: Array<{ postId: string; at: number; status: string }> = [];
  const onSkippedClock: Activities['claimRepostChild'] = async ({ postId }) => {
    const now = await world.env.currentTimeMs();
    const skew = now - Date.now();
    const shift = (ms: number) => app.pool.query(`update posts set scheduled_time = scheduled_time + make_interval(secs => $2) where id = $1`, [postId, ms / 1000]);
    await shift(-skew);
    try {
      const r = await world.real.claimRepostChild({ postId });
      claims.push({ postId, at: now, status: r.status });
      return r.status === 'not_due' ? { ...r, scheduledTime: new Date(Date.parse(r.scheduledTime) + skew).toISOString() } : r;
    } finally {
      await shift(skew);
    }
  };
  const steps: Array<{ postId: string; kind: string; notBefore?: string; at: number }> = [];
  const publishStep: Activities['publishStep'] = async (input) => {
    steps.push({ postId: input.postId, kind: input.step.kind, notBefore: input.notBefore, at: await world.env.currentTimeMs() });
    return { externalId: `urn:li:share:${steps.length}`, externalUrl: `https://pronet.example/${steps.length}` };
  };

  let loaded: () => void = () => {};
  const childrenLoaded = new Promise<void>((r) => (loaded = r));
  const loadRepostChildren: Activities['loadRepostChildren'] = async (input) => {
    const children = await world.real.loadRepostChildren(input);
    loaded();
    return children;
  };

  const result = await world.withWorkers({ loadRepostChildren, claimRepostChild: onSkippedClock, publishStep }, async () => {
    const handle = await world.env.client.workflow.start(repostChainWorkflow, {
      workflowId: `repost-${parent}`,
      taskQueue: world.taskQueue,
      args: [{ workspaceId: ws.workspaceId, postId: parent, taskQueue: world.taskQueue }],
    });
    // The chain holds all three children; the middle one is cancelled while it waits (the
    // test server skips time only while the result is awaited).
    await childrenLoaded;
    expect((await app.http('POST', `/v1/posts/${kids[1]!.id}/unschedule`, { apiKey: ws.apiKey })).body.data.status).toBe('cancelled');
    return handle.result();
  });

  expect(result).toEqual([
    { postId: kids[0]!.id, status: 'published', externalId: expect.stringMatching(/^urn:li:share:\d$/) },
    { postId: kids[1]!.id, status: 'cancelled' },
    { postId: kids[2]!.id, status: 'published', externalId: expect.stringMatching(/^urn:li:share:\d$/) },
  ]);
  // Each published child was claimed and reshared on the skipped clock no earlier than its time less the lead, in order.
  expect(steps.map((s) => [s.postId, s.kind, s.notBefore])).toEqual([
    [kids[0]!.id, 'reshare', kids[0]!.scheduled_time.toISOString()],
    [kids[2]!.id, 'reshare', kids[2]!.scheduled_time.toISOString()],
  ]);
  for (const [i, k] of [0, 2].entries()) expect(steps[i]!.at).toBeGreaterThanOrEqual(kids[k]!.scheduled_time.getTime() - PUBLISH_LEAD_MS);
  expect(claims.map((c) => [c.postId, c.status])).toEqual([
    [kids[0]!.id, 'claimed'],
    [kids[1]!.id, 'cancelled'],
    [kids[2]!.id, 'claimed'],
  ]);

  const rows = (await app.pool.query<{ id: string; status: string; external_id: string | null; scheduled_time: Date }>(`select id, status, external_id, scheduled_time from posts where parent_post_id = $1 order by repost_delay_secs`, [parent])).rows;
  expect(rows.map((r) => r.status)).toEqual(['published', 'cancelled', 'published']);
  expect(rows[0]!.external_id).toBe(result[0]!.externalId);
  // The clock shim left every stored time as it was.
  expect(rows.map((r) => r.scheduled_time.getTime())).toEqual(kids.map((k) => k.scheduled_time.getTime()));
});
