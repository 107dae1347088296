/**
 * Durability of scheduled publishing with the worker in a child process that is killed and
 * started again: a worker down between scheduling and scheduledTime still publishes exactly
 * once, and a worker killed while the network holds its answer does not post twice (the retry
 * finds the `sending` record and looks the tweet up).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { FakeX } from '../fakes/x.js';

let app: TestApp;
let apiKey: string;
let account: string;
const x = new FakeX();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const inSecs = (s: number) => new Date(Date.now() + s * 1000).toISOString();

beforeAll(async () => {
  await x.listen();
  x.addUser('3001', 'restart-token');
  app = await startTestApp({ workerMode: 'process', env: { PROVIDER_TIMEOUT_MS: '20000' } });
  const ws = await app.createWorkspace({});
  apiKey = ws.apiKey;
  const r = await app.http('POST', '/integrations', {
    apiKey,
    body: { provider: 'microblog', name: 'restart', externalAccountId: '3001', credentials: { accessToken: 'restart-token' }, apiBaseUrl: x.url },
  });
  account = r.body.data.id;
});
afterAll(async () => {
  await app?.close();
  await x.close();
});

async function draftAndSchedule(content: string, at: string): Promise<string> {
  const d = await app.http('POST', '/v1/posts', { apiKey, body: { providerId: account, content } });
  expect(d.status).toBe(200);
  const b = await app.http('POST', '/v1/posts/bulk-schedule', { apiKey, body: { posts: [{ postId: d.body.data.id, schedules: [{ providerId: account, scheduledTime: at }] }] } });
  expect(b.status).toBe(200);
  return d.body.data.id;
}

async function settled(id: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const p = (await app.http('GET', `/v1/posts/${id}`, { apiKey })).body.data;
    if (!['draft', 'scheduled', 'publishing'].includes(p.status)) return p;
    if (Date.now() > deadline) throw new Error(`post ${id} still ${p.status}`);
    await sleep(250);
  }
}

it('a worker down across scheduledTime still publishes exactly once', async () => {
  // Later than the workflow's early wake-up (10 s before scheduledTime), so the worker dies before the claim.
  const at = inSecs(20);
  const id = await draftAndSchedule('survives a restart', at);
  await expect.poll(async () => (await app.deps.temporal.workflow.getHandle(`publish-${id}-0`).describe().catch(() => null))?.status.name, { timeout: 10_000 }).toBe('RUNNING');
  await app.killWorker();
  expect(Date.now()).toBeLessThan(Date.parse(at));
  await sleep(Math.max(0, Date.parse(at) - Date.now()) + 1500);
  expect(x.calls('POST /2/tweets')).toHaveLength(0);
  await app.startWorker();
  const p = await settled(id, 30_000);
  expect(p.status).toBe('published');
  expect(x.tweets.filter((t) => t.text === 'survives a restart')).toHaveLength(1);
  await app.recordHistory(`publish-${id}-0`, 'publishPost/worker-restart');
}, 90_000);

it('a worker killed while the network holds the answer does not post twice', async () => {
  x.inject('POST /2/tweets', { timeoutMs: 8000, afterCommit: true });
  const id = await draftAndSchedule('killed mid-call', inSecs(2));
  await expect.poll(() => x.calls('POST /2/tweets').filter((c) => (c.body as { text: string }).text === 'killed mid-call').length, { timeout: 20_000 }).toBe(1);
  await app.killWorker();
  await app.startWorker();
  const p = await settled(id, 60_000);
  expect(p.status).toBe('published');
  const tweets = x.tweets.filter((t) => t.text === 'killed mid-call');
  expect(tweets).toHaveLength(1);
  expect(p.externalId).toBe(tweets[0]!.id);
  expect(x.calls('POST /2/tweets').filter((c) => (c.body as { text: string }).text === 'killed mid-call')).toHaveLength(1);
  expect(x.calls('GET /2/users/{id}/tweets').length).toBeGreaterThanOrEqual(1);
}, 120_000);
