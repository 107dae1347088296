/**
 * Scheduled publishing through HTTP on the real stack (PostgreSQL, Temporal, MinIO) against the
 * fake X and LinkedIn servers: bulk schedule, publish at scheduledTime, threads, media, external
 * replies, reposts, provider failures, unschedule/reschedule and tenant isolation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { FakeX } from '../fakes/x.js';
import { FakeLinkedIn } from '../fakes/linkedin.js';
import { png } from '../png.js';
import { startWebhookReceiver } from '../fakes/webhookReceiver.js';

let app: TestApp;
const x = new FakeX();
const li = new FakeLinkedIn();
let ws: { workspaceId: string; apiKey: string };
let other: { workspaceId: string; apiKey: string };
let xAccount: string;
let liMember: string;
let liPage: string;
let otherX: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const inSecs = (s: number) => new Date(Date.now() + s * 1000).toISOString();

async function connect(apiKey: string, provider: string, externalAccountId: string, token: string, baseUrl: string): Promise<string> {
  const r = await app.http('POST', '/integrations', {
    apiKey,
    body: { provider, name: `${provider} ${externalAccountId}`, externalAccountId, credentials: { accessToken: token }, apiBaseUrl: baseUrl },
  });
  expect(r.status).toBe(200);
  return r.body.data.id;
}

async function draft(body: Record<string, unknown>, apiKey = ws.apiKey): Promise<string> {
  const r = await app.http('POST', '/v1/posts', { apiKey, body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.id;
}

async function bulk(posts: unknown[], apiKey = ws.apiKey) {
  return app.http('POST', '/v1/posts/bulk-schedule', { apiKey, body: { posts } });
}

async function getPost(id: string, apiKey = ws.apiKey) {
  const r = await app.http('GET', `/v1/posts/${id}`, { apiKey });
  expect(r.status).toBe(200);
  return r.body.data;
}

/** Polls until the post leaves draft/scheduled/publishing. */
async function settled(id: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const p = await getPost(id);
    if (!['draft', 'scheduled', 'publishing'].includes(p.status)) return p;
    if (Date.now() > deadline) throw new Error(`post ${id} still ${p.status}`);
    await sleep(200);
  }
}

async function workflowStatus(workflowId: string): Promise<string> {
  return (await app.deps.temporal.workflow.getHandle(workflowId).describe()).status.name;
}

async function waitClosed(workflowId: string, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const s = await workflowStatus(workflowId).catch(() => 'NOT_FOUND');
    if (s !== 'RUNNING' && s !== 'NOT_FOUND') return s;
    if (Date.now() > deadline) throw new Error(`${workflowId} still ${s}`);
    await sleep(200);
  }
}


beforeAll(async () => {
  process.env.PROVIDER_TIMEOUT_MS = '1500';
  await Promise.all([x.listen(), li.listen()]);
  x.addUser('2001', 'x-token');
  x.addUser('2002', 'x-token-other');
  li.addAccount('li-token', ['urn:li:person:alice']);
  li.addAccount('li-page-token', ['urn:li:person:bob', 'urn:li:organization:777']);
  app = await startTestApp({ env: { PROVIDER_TIMEOUT_MS: '1500' } });
  ws = await app.createWorkspace({ plan: 'enterprise' });
  other = await app.createWorkspace({ plan: 'enterprise' });
  xAccount = await connect(ws.apiKey, 'microblog', '2001', 'x-token', x.url);
  liMember = await connect(ws.apiKey, 'pronet', 'alice', 'li-token', li.url);
  liPage = await connect(ws.apiKey, 'pronetPage', '777', 'li-page-token', li.url);
  otherX = await connect(other.apiKey, 'microblog', '2002', 'x-token-other', x.url);
});

afterAll(async () => {
  await app?.close();
  await Promise.all([x.close(), li.close()]);
  delete process.env.PROVIDER_TIMEOUT_MS;
});

describe('bulk-schedule', () => {
  it('validates every row first: one bad row → 400 naming it, nothing scheduled', async () => {
    const ids = await Promise.all([0, 1, 2, 3].map((i) => draft({ providerId: xAccount, content: `validation ${i}` })));
    const rows = ids.map((postId) => ({ postId, schedules: [{ providerId: xAccount, scheduledTime: inSecs(60) }] }));
    rows[3]!.schedules[0]!.scheduledTime = '2020-01-01T00:00:00.000Z';
    const r = await bulk(rows);
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('validation_failed');
    expect(r.body.error.details[0].path).toBe('/posts/3/schedules/0/scheduledTime');
    expect(r.body.error.message).toMatch(/\/posts\/3\/schedules\/0\/scheduledTime: must be in the future/);
    const rowsInDb = await app.pool.query(`select count(*)::int as n from post_schedules where post_id = any($1::uuid[])`, [ids]);
    expect(rowsInDb.rows[0].n).toBe(0);
    for (const id of ids) expect((await getPost(id)).status).toBe('draft');

    // Other row problems, each named by its path.
    const long = await draft({ providerId: liMember, content: 'y'.repeat(300) });
    const cases: Array<[unknown, string]> = [
      [{ postId: ids[0], schedules: [{ providerId: xAccount, scheduledTime: 'next tuesday' }] }, '/posts/0/schedules/0/scheduledTime'],
      [{ postId: ids[0], schedules: [{ providerId: liMember, scheduledTime: inSecs(60) }] }, '/posts/0/schedules/0/providerId'],
      [{ postId: long, schedules: [{ providerId: liPage, scheduledTime: inSecs(60) }] }, ''],
      [{ postId: ids[0], schedules: [{ providerId: xAccount, scheduledTime: inSecs(60), automation: { threadDelay: { enabled: true, scheduleInSecs: -1 } } }] }, '/posts/0/schedules/0/automation/threadDelay/scheduleInSecs'],
    ];
    // Another workspace's account is one this workspace does not have: 404, like a missing resource.
    const foreignAccount = await bulk([{ postId: ids[0], schedules: [{ providerId: otherX, scheduledTime: inSecs(60) }] }]);
    expect(foreignAccount.status, JSON.stringify(foreignAccount.body)).toBe(404);
    expect(foreignAccount.body.error.details.map((d: { path: string }) => d.path)).toContain('/posts/0/schedules/0/providerId');
    for (const [row, path] of cases) {
      const res = await bulk([row]);
      if (path === '') {
        expect(res.status).toBe(200); // 300 characters suit pronet
        continue;
      }
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    const tooLong = await draft({ providerId: xAccount, content: 'z'.repeat(281) });
    const res = await bulk([{ postId: tooLong, schedules: [{ providerId: xAccount, scheduledTime: inSecs(60) }] }]);
    expect(res.status).toBe(400);
    expect(res.body.error.details[0]).toEqual({ path: '/posts/0/schedules/0/providerId', message: 'post content has 281 characters; microblog allows 280' });
    await app.http('POST', `/v1/posts/${long}/unschedule`, { apiKey: ws.apiKey });
  });

  it('schedules many rows and publishes each at its scheduledTime, exactly once', async () => {
    const n = 25;
    const ids = await Promise.all(Array.from({ length: n }, (_, i) => draft({ providerId: xAccount, content: `bulk post ${i}` })));
    const at = inSecs(4);
    const t0 = Date.now();
    const r = await bulk(ids.map((postId) => ({ postId, schedules: [{ providerId: xAccount, scheduledTime: at }] })));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.message).toMatch(/Scheduled 25 publishes for 25 posts/);
    expect(Date.now() - t0).toBeLessThan(3000);
    const scheduled = await getPost(ids[0]!);
    expect(scheduled).toMatchObject({ status: 'scheduled', scheduledTime: at });

    const posts = await Promise.all(ids.map((id) => settled(id)));
    for (const [i, p] of posts.entries()) {
      expect(p.status, JSON.stringify(p.error)).toBe('published');
      const tweets = x.tweets.filter((t) => t.text === `bulk post ${i}`);
      expect(tweets).toHaveLength(1);
      expect(p.externalId).toBe(tweets[0]!.id);
      expect(p.externalUrl).toContain(tweets[0]!.id);
      expect(Date.parse(tweets[0]!.createdAt)).toBeGreaterThanOrEqual(Date.parse(at));
      expect(Date.parse(p.publishedAt)).toBeGreaterThanOrEqual(Date.parse(at));
    }
  });
});

describe('threads, media and external replies', () => {
  it('publishes a microblog thread as a reply chain spaced by threadDelay, with an image from MinIO', async () => {
    const image = png();
    const form = new FormData();
    form.set('file', new Blob([image], { type: 'image/png' }), 'pic.png');
    const up = await app.http('POST', '/v1/media/upload', { apiKey: ws.apiKey, rawBody: form });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const fileName = up.body.data?.fileName ?? up.body.fileName;

    const id = await draft({
      providerId: xAccount,
      content: 'thread head',
      media: [{ fileName }],
      threadItems: [{ content: 'thread 1' }, { content: 'thread 2' }],
    });
    const r = await bulk([{ postId: id, schedules: [{ providerId: xAccount, scheduledTime: inSecs(2), automation: { threadDelay: { enabled: true, scheduleInSecs: 2 } } }] }]);
    expect(r.status).toBe(200);
    const p = await settled(id, 40_000);
    expect(p.status).toBe('published');
    const head = x.tweets.find((t) => t.text === 'thread head')!;
    const t1 = x.tweets.find((t) => t.text === 'thread 1')!;
    const t2 = x.tweets.find((t) => t.text === 'thread 2')!;
    expect(t1.replyTo).toBe(head.id);
    expect(t2.replyTo).toBe(t1.id);
    expect(Date.parse(t1.createdAt) - Date.parse(head.createdAt)).toBeGreaterThanOrEqual(1900);
    expect(Date.parse(t2.createdAt) - Date.parse(t1.createdAt)).toBeGreaterThanOrEqual(1900);
    // The image went MinIO → worker → X unchanged.
    expect(head.mediaIds).toHaveLength(1);
    const upload = x.calls('POST /2/media/upload').at(-1)!;
    const sent = Buffer.from(await ((upload.body as FormData).get('media') as Blob).arrayBuffer());
    expect(sent.equals(image)).toBe(true);
    await app.recordHistory(`publish-${id}-0`, 'publishPost/thread-microblog');
  });

  it('publishes a pronet thread as comments on the post', async () => {
    const id = await draft({ providerId: liMember, content: 'pronet head', threadItems: [{ content: 'first comment' }] });
    expect((await bulk([{ postId: id, schedules: [{ providerId: liMember, scheduledTime: inSecs(2) }] }])).status).toBe(200);
    const p = await settled(id);
    expect(p.status).toBe('published');
    expect(p.externalId).toMatch(/^urn:li:share:/);
    const comment = li.comments.find((c) => c.text === 'first comment')!;
    expect(comment).toMatchObject({ object: p.externalId, actor: 'urn:li:person:alice' });
  });

  it('schedules a comment on an external pronet post from its URL', async () => {
    const ext = li.seedExternalPost('activity');
    const url = `https://www.linkedin.com/posts/someone_great-news-activity-${ext.urn.split(':').pop()}-AbCd`;
    const at = inSecs(2);
    const r = await app.http('POST', '/v1/posts/external-linkedin-reply', {
      apiKey: ws.apiKey,
      body: { externalPostUrl: url, content: 'Congratulations!', scheduledTime: at, providerId: liPage },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toMatchObject({ externalPost: true, externalPostUrl: url, status: 'scheduled', scheduledTime: at, providerId: liPage });
    const p = await settled(r.body.data.id);
    expect(p.status).toBe('published');
    const c = li.comments.find((cm) => cm.text === 'Congratulations!')!;
    expect(c).toMatchObject({ object: ext.urn, actor: 'urn:li:organization:777' });
    expect(p.externalId).toBe(c.urn);
    await app.recordHistory(`publish-${p.id}-0`, 'externalReply/comment');

    const bad = await app.http('POST', '/v1/posts/external-linkedin-reply', {
      apiKey: ws.apiKey,
      body: { externalPostUrl: 'https://www.linkedin.com/in/someone', content: 'x', scheduledTime: inSecs(60), providerId: liPage },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe('/externalPostUrl');
    const wrongKind = await app.http('POST', '/v1/posts/external-linkedin-reply', {
      apiKey: ws.apiKey,
      body: { externalPostUrl: ext.urn, content: 'x', scheduledTime: inSecs(60), providerId: xAccount },
    });
    expect(wrongKind.status).toBe(400);
    expect(wrongKind.body.error.details[0].path).toBe('/providerId');
    const missing = await app.http('POST', '/v1/posts/external-linkedin-reply', { apiKey: ws.apiKey, body: { externalPostUrl: ext.urn, content: 'x', providerId: liPage } });
    expect(missing.status).toBe(400);
  });
});

describe('provider failures', () => {
  it('401 → failed with the provider reason, no retry', async () => {
    x.addUser('2009', 'x-token-revoked');
    const acct = await connect(ws.apiKey, 'microblog', '2009', 'x-token-revoked', x.url);
    x.revoke('x-token-revoked');
    const id = await draft({ providerId: acct, content: 'revoked post' });
    await bulk([{ postId: id, schedules: [{ providerId: acct, scheduledTime: inSecs(1) }] }]);
    const p = await settled(id);
    expect(p.status).toBe('failed');
    expect(p.error).toMatchObject({ code: 'credentials_revoked', provider: 'microblog' });
    expect(p.error.message).toMatch(/401 Unauthorized/);
    expect(x.calls('POST /2/tweets').filter((c) => (c.body as { text: string }).text === 'revoked post')).toHaveLength(1);
  });

  it('429 with Retry-After (waited on a workflow timer) and 500 are retried, honouring Retry-After', async () => {
    const a = await draft({ providerId: liMember, content: 'rate limited once' });
    li.inject('POST /rest/posts', { status: 429, headers: { 'retry-after': '2' }, body: { status: 429, message: 'Resource level throttle limit' } });
    await bulk([{ postId: a, schedules: [{ providerId: liMember, scheduledTime: inSecs(1) }] }]);
    const pa = await settled(a);
    expect(pa.status).toBe('published');
    const calls = li.calls('POST /rest/posts').filter((c) => (c.body as { commentary: string }).commentary === 'rate limited once');
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(1900);
    expect(li.posts.filter((p) => p.commentary === 'rate limited once')).toHaveLength(1);
    // The workflow waited on a timer (patch rate-limit-timer); its history keeps replaying.
    await app.recordHistory(`publish-${a}-0`, 'publishPost/rate-limit-timer');

    const b = await draft({ providerId: xAccount, content: 'server error once' });
    x.inject('POST /2/tweets', { status: 500, body: { title: 'Internal Server Error' } });
    await bulk([{ postId: b, schedules: [{ providerId: xAccount, scheduledTime: inSecs(1) }] }]);
    expect((await settled(b)).status).toBe('published');
    expect(x.calls('POST /2/tweets').filter((c) => (c.body as { text: string }).text === 'server error once')).toHaveLength(2);
    expect(x.tweets.filter((t) => t.text === 'server error once')).toHaveLength(1);
  });

  it('a timeout after sending is looked up, never sent again', async () => {
    const id = await draft({ providerId: xAccount, content: 'answer lost' });
    x.inject('POST /2/tweets', { timeoutMs: 4000, afterCommit: true });
    await bulk([{ postId: id, schedules: [{ providerId: xAccount, scheduledTime: inSecs(1) }] }]);
    const p = await settled(id);
    expect(p.status).toBe('published');
    const tweets = x.tweets.filter((t) => t.text === 'answer lost');
    expect(tweets).toHaveLength(1);
    expect(p.externalId).toBe(tweets[0]!.id);
    expect(x.calls('POST /2/tweets').filter((c) => (c.body as { text: string }).text === 'answer lost')).toHaveLength(1);

    const lost = await draft({ providerId: xAccount, content: 'request lost' });
    x.inject('POST /2/tweets', { timeoutMs: 4000, afterCommit: false });
    await bulk([{ postId: lost, schedules: [{ providerId: xAccount, scheduledTime: inSecs(1) }] }]);
    const pl = await settled(lost);
    expect(pl.status).toBe('failed');
    expect(pl.error.code).toBe('publish_outcome_unknown');
    expect(x.calls('POST /2/tweets').filter((c) => (c.body as { text: string }).text === 'request lost')).toHaveLength(1);
  });
});

describe('unschedule, reschedule, tenancy', () => {
  it('unschedule stops the workflow and returns the post to draft', { timeout: 60_000 }, async () => {
    const id = await draft({ providerId: xAccount, content: 'never published' });
    const deadlineAt = inSecs(15);
    await bulk([{ postId: id, schedules: [{ providerId: xAccount, scheduledTime: inSecs(14) }, { providerId: xAccount, scheduledTime: inSecs(15) }] }]);
    // Wait until the dispatch started both workflows.
    await expect.poll(() => workflowStatus(`publish-${id}-1`).catch(() => 'NOT_FOUND'), { timeout: 10_000 }).toBe('RUNNING');
    const r = await app.http('POST', `/v1/posts/${id}/unschedule`, { apiKey: ws.apiKey });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({ status: 'draft', scheduledTime: null });
    expect(await waitClosed(`publish-${id}-0`)).toBe('COMPLETED');
    expect(await waitClosed(`publish-${id}-1`)).toBe('COMPLETED');
    await app.recordHistory(`publish-${id}-1`, 'publishPost/unschedule-update');
    await sleep(Math.max(0, Date.parse(deadlineAt) - Date.now()) + 500);
    expect(x.calls('POST /2/tweets').filter((c) => (c.body as { text: string }).text === 'never published')).toHaveLength(0);
    expect((await getPost(id)).status).toBe('draft');
    const again = await app.http('POST', `/v1/posts/${id}/unschedule`, { apiKey: ws.apiKey });
    expect(again.status).toBe(409);
  });

  it('a new bulk-schedule reschedules the running workflow', async () => {
    const id = await draft({ providerId: xAccount, content: 'rescheduled' });
    await bulk([{ postId: id, schedules: [{ providerId: xAccount, scheduledTime: inSecs(120) }] }]);
    await expect.poll(() => workflowStatus(`publish-${id}-0`).catch(() => 'NOT_FOUND'), { timeout: 10_000 }).toBe('RUNNING');
    const at = inSecs(2);
    const r = await bulk([{ postId: id, schedules: [{ providerId: xAccount, scheduledTime: at }] }]);
    expect(r.status).toBe(200);
    const p = await settled(id, 20_000);
    expect(p.status).toBe('published');
    expect(p.scheduledTime).toBe(at);
    expect(x.tweets.filter((t) => t.text === 'rescheduled')).toHaveLength(1);
    expect(await waitClosed(`publish-${id}-0`)).toBe('COMPLETED');
    await app.recordHistory(`publish-${id}-0`, 'publishPost/reschedule-update');
  });

  it("another workspace's posts and integrations are invisible", async () => {
    const mine = await draft({ providerId: xAccount, content: 'mine only' });
    const un = await app.http('POST', `/v1/posts/${mine}/unschedule`, { apiKey: other.apiKey });
    expect(un.status).toBe(404);
    const b = await bulk([{ postId: mine, schedules: [{ providerId: otherX, scheduledTime: inSecs(60) }] }], other.apiKey);
    expect(b.status).toBe(404);
    expect(b.body.error.details[0]).toEqual({ path: '/posts/0/postId', message: 'is not a post of this workspace' });
    const ext = await app.http('POST', '/v1/posts/external-linkedin-reply', {
      apiKey: other.apiKey,
      body: { externalPostUrl: 'urn:li:activity:1', content: 'x', scheduledTime: inSecs(60), providerId: liPage },
    });
    expect(ext.status).toBe(404);
    expect(ext.body.error.details[0].path).toBe('/providerId');
    expect((await app.http('POST', '/v1/posts/not-a-uuid/unschedule', { apiKey: ws.apiKey })).status).toBe(404);
  });
});

describe('reposts', () => {
  it('children reshare the parent at their time, each with its post.published event; a cancelled child is skipped', async () => {
    const hook = await startWebhookReceiver();
    const sub = await app.http('POST', '/webhook-subscriptions', { apiKey: ws.apiKey, body: { url: hook.url, eventTypes: ['post.published', 'post.failed'] } });
    expect(sub.status, JSON.stringify(sub.body)).toBe(200);
    li.addAccount('li-third', ['urn:li:organization:888']);
    const third = await connect(ws.apiKey, 'pronetPage', '888', 'li-third', li.url);
    const parent = await draft({ providerId: liMember, content: 'parent post' });
    const rp = await app.http('POST', `/v1/posts/${parent}/reposting`, {
      apiKey: ws.apiKey,
      body: { reposting: { enable: true, reposts: [{ providerId: liPage, scheduleInSecs: 300 }, { providerId: third, scheduleInSecs: 1800 }] } },
    });
    expect(rp.status, JSON.stringify(rp.body)).toBe(200);
    const at = inSecs(2);
    expect((await bulk([{ postId: parent, schedules: [{ providerId: liMember, scheduledTime: at }] }])).status).toBe(200);
    const kids = await app.pool.query<{ id: string; provider_id: string; scheduled_time: Date; status: string }>(
      `select id, provider_id, scheduled_time, status from posts where parent_post_id = $1 order by repost_delay_secs`,
      [parent],
    );
    expect(kids.rows.map((k) => [k.status, k.scheduled_time.getTime() - Date.parse(at)])).toEqual([
      ['scheduled', 300_000],
      ['scheduled', 1_800_000],
    ]);
    // The real delays are 5 and 30 minutes; the chain reads each child's time from the database,
    // so the test moves the first child's time close (the +300 s rule is asserted above).
    await app.pool.query(`update posts set scheduled_time = $2 where id = $1`, [kids.rows[0]!.id, new Date(Date.parse(at) + 3000)]);
    await app.pool.query(`update posts set scheduled_time = $2 where id = $1`, [kids.rows[1]!.id, new Date(Date.parse(at) + 4000)]);
    const cancel = await app.http('POST', `/v1/posts/${kids.rows[1]!.id}/unschedule`, { apiKey: ws.apiKey });
    expect(cancel.status).toBe(200);
    expect(cancel.body.data.status).toBe('cancelled');

    const p = await settled(parent);
    expect(p.status).toBe('published');
    const child = await settled(kids.rows[0]!.id);
    expect(child.status).toBe('published');
    const reshare = li.posts.find((x) => x.urn === child.externalId)!;
    expect(reshare).toMatchObject({ reshareParent: p.externalId, author: 'urn:li:organization:777' });
    expect(reshare.createdAt).toBeGreaterThanOrEqual(Date.parse(at) + 3000);
    expect(await waitClosed(`repost-${parent}`, 15_000)).toBe('COMPLETED');
    expect(li.posts.filter((x) => x.author === 'urn:li:organization:888')).toHaveLength(0);
    expect((await getPost(kids.rows[1]!.id)).status).toBe('cancelled');
    // A repost child is a publish too: one event, naming its parent (it has no schedule row).
    const event = await hook.waitFor((b) => b.type === 'post.published' && b.data.postId === child.id);
    expect(event.body.data).toEqual({ postId: child.id, scheduleId: null, parentPostId: parent, integrationId: liPage, externalId: child.externalId, externalUrl: child.externalUrl ?? null, publishedAt: expect.any(String) });
    await new Promise((r) => setTimeout(r, 500));
    expect(hook.received.filter((h) => h.body.data.postId === child.id)).toHaveLength(1);
    expect(hook.received.filter((h) => h.body.data.postId === kids.rows[1]!.id)).toHaveLength(0);
    await app.http('DELETE', `/webhook-subscriptions/${sub.body.data.id}`, { apiKey: ws.apiKey });
    await hook.close();
    await app.recordHistory(`repost-${parent}`, 'repostChain/reshare');
  });

  it("the parent's failure cancels the children", async () => {
    li.addAccount('li-doomed', ['urn:li:person:doomed']);
    const doomed = await connect(ws.apiKey, 'pronet', 'doomed', 'li-doomed', li.url);
    const parent = await draft({ providerId: doomed, content: 'doomed parent' });
    expect(
      (await app.http('POST', `/v1/posts/${parent}/reposting`, { apiKey: ws.apiKey, body: { reposting: { enable: true, reposts: [{ providerId: liPage, scheduleInSecs: 300 }] } } })).status,
    ).toBe(200);
    li.revoke('li-doomed');
    await bulk([{ postId: parent, schedules: [{ providerId: doomed, scheduledTime: inSecs(1) }] }]);
    const p = await settled(parent);
    expect(p.status).toBe('failed');
    expect(p.error.code).toBe('credentials_revoked');
    const kids = await app.pool.query<{ status: string }>(`select status from posts where parent_post_id = $1`, [parent]);
    expect(kids.rows.map((k) => k.status)).toEqual(['cancelled']);
  });
});
