import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import type { NewWorkspace } from '../../db/workspaces.js';
import { scheduleBatchWorkflowId } from '../../domain/publishing.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
});
afterAll(() => app?.close());

const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

async function connect(ws: NewWorkspace, provider: string, name = provider): Promise<string> {
  const r = await app.http('POST', '/integrations', { apiKey: ws.apiKey, body: { provider, name, externalAccountId: `ext-${name}`, credentials: { accessToken: 't' } } });
  expect(r.status).toBe(200);
  return r.body.data.id;
}

async function uploadGif(ws: NewWorkspace): Promise<string> {
  const fd = new FormData();
  fd.append('file', new Blob([new Uint8Array(GIF)], { type: 'image/gif' }), 'a.gif');
  const r = await app.http('POST', '/v1/media/upload', { apiKey: ws.apiKey, rawBody: fd });
  expect(r.status).toBe(200);
  return r.body.fileName;
}

async function draft(ws: NewWorkspace, body: Record<string, unknown>) {
  return app.http('POST', '/v1/posts', { apiKey: ws.apiKey, body });
}

/** Puts a post in a state the publishing pipeline would (scheduling is tested with the workflows). */
async function setState(id: string, status: string, scheduledTime: string | null) {
  await app.pool.query(`update posts set status = $2, scheduled_time = $3 where id = $1`, [id, status, scheduledTime]);
}

describe('draft posts', () => {
  it('creates, reads, partially updates and deletes a draft', async () => {
    const ws = await app.createWorkspace();
    const x = await connect(ws, 'microblog');
    const file = await uploadGif(ws);
    const res = await draft(ws, {
      providerId: x,
      content: 'Hello world',
      media: [{ fileName: file }],
      articles: [{ fileName: file, title: 'Deck', sourceUrl: 'https://example.com/deck' }],
      threadItems: [{ content: 'second' }, { content: 'third', media: [{ fileName: file }] }],
      automation: { threadDelay: { enabled: true, scheduleInSecs: 60 } },
    });
    expect(res.status).toBe(200);
    const post = res.body.data;
    expect(Object.keys(post).sort()).toEqual(
      [
        'id', 'providerId', 'status', 'content', 'media', 'articles', 'threadItems', 'automation', 'externalPost', 'externalPostUrl', 'parentPostId',
        'repostDelaySecs', 'scheduledTime', 'publishedAt', 'externalId', 'externalUrl', 'error', 'retryAt', 'createdAt', 'updatedAt',
      ].sort(),
    );
    expect(post).toMatchObject({
      providerId: x,
      status: 'draft',
      content: 'Hello world',
      media: [{ fileName: file }],
      threadItems: [{ content: 'second' }, { content: 'third', media: [{ fileName: file }] }],
      automation: { threadDelay: { enabled: true, scheduleInSecs: 60 } },
      externalPost: false,
      parentPostId: null,
      scheduledTime: null,
      error: null,
    });
    expect(post.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    expect((await app.http('GET', `/v1/posts/${post.id}`, { apiKey: ws.apiKey })).body.data).toEqual(post);

    const patched = await app.http('PATCH', `/v1/posts/${post.id}`, { apiKey: ws.apiKey, body: { content: 'Edited' } });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ content: 'Edited', media: [{ fileName: file }], threadItems: post.threadItems, automation: post.automation });

    const cleared = await app.http('PATCH', `/v1/posts/${post.id}`, { apiKey: ws.apiKey, body: { media: [], automation: {} } });
    expect(cleared.body.data).toMatchObject({ content: 'Edited', media: [], automation: {} });

    const empty = await app.http('PATCH', `/v1/posts/${post.id}`, { apiKey: ws.apiKey, body: {} });
    expect(empty.status).toBe(400);

    const del = await app.http('DELETE', `/v1/posts/${post.id}`, { apiKey: ws.apiKey });
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ id: post.id, deleted: true, status: 'deleted' });
    expect((await app.http('GET', `/v1/posts/${post.id}`, { apiKey: ws.apiKey })).status).toBe(404);
  });

  it('rejects references to media, accounts and automation that are not valid for the workspace', async () => {
    const ws = await app.createWorkspace();
    const other = await app.createWorkspace();
    const x = await connect(ws, 'microblog');
    const foreignAccount = await connect(other, 'microblog');
    const mine = await uploadGif(ws);
    const foreignFile = await uploadGif(other);
    // A contacts file (CSV) is an upload of the workspace, but no media for posts.
    const fd = new FormData();
    fd.append('file', new Blob([new Uint8Array(Buffer.from('First Name,Email\nA,a@x.com\n'))], { type: 'text/csv' }), 'contacts.csv');
    const csv = (await app.http('POST', '/contact-files', { apiKey: ws.apiKey, rawBody: fd })).body;
    expect(csv.contentType).toBe('text/csv');

    const cases: [Record<string, unknown>, string][] = [
      [{ providerId: x, content: 'a', media: [{ fileName: csv.fileName }] }, '/media/0/fileName'],
      [{ providerId: x, content: 'a', media: [{ fileName: mine }, { fileName: `${ws.workspaceId}/nope.png` }] }, '/media/1/fileName'],
      [{ providerId: x, content: 'a', media: [{ fileName: foreignFile }] }, '/media/0/fileName'],
      [{ providerId: x, content: 'a', articles: [{ fileName: 'missing.pdf' }] }, '/articles/0/fileName'],
      [{ providerId: x, content: 'a', threadItems: [{ content: 'b' }, { content: 'c', media: [{ fileName: foreignFile }] }] }, '/threadItems/1/media/0/fileName'],
      [{ providerId: foreignAccount, content: 'a' }, '/providerId'],
      [{ providerId: 'not-an-id', content: 'a' }, '/providerId'],
      [{ providerId: x, content: 'a', automation: { crossAccountRepostConfig: { enabled: true, providersConfig: [] } } }, '/automation/crossAccountRepostConfig'],
      [{ providerId: x, content: 'a', automation: { threadDelay: { enabled: true, scheduleInSecs: -1 } } }, '/automation/threadDelay/scheduleInSecs'],
      [{ providerId: x, content: 'a', status: 'published' }, '/status'],
    ];
    for (const [body, path] of cases) {
      const r = await draft(ws, body);
      // A file or account the workspace does not have is a 404; other refusals are 400s.
      expect(r.status, path).toBe(/fileName$|^\/providerId$/.test(path) ? 404 : 400);
      expect(r.body.error.details[0].path, JSON.stringify(r.body)).toBe(path);
    }
    const msg = (await draft(ws, { providerId: x, content: 'a', media: [{ fileName: foreignFile }] })).body.error.message;
    expect(msg).toContain(foreignFile);

    // A disconnected account cannot take new drafts.
    await app.http('DELETE', `/integrations/${x}`, { apiKey: ws.apiKey });
    expect((await draft(ws, { providerId: x, content: 'a' })).body.error.details[0].path).toBe('/providerId');
  });

  it('edits drafts only', async () => {
    const ws = await app.createWorkspace();
    const x = await connect(ws, 'microblog');
    const p = (await draft(ws, { providerId: x, content: 'a' })).body.data;
    await setState(p.id, 'scheduled', new Date(Date.now() + 3600_000).toISOString());
    const r = await app.http('PATCH', `/v1/posts/${p.id}`, { apiKey: ws.apiKey, body: { content: 'b' } });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('post_not_editable');
  });

  it('DELETE of a scheduled post cancels its publishes and its repost children', async () => {
    const ws = await app.createWorkspace({ plan: 'enterprise' });
    const x = await connect(ws, 'microblog', 'main');
    const other = await connect(ws, 'microblog', 'other');
    const p = (await draft(ws, { providerId: x, content: 'launch day' })).body.data;
    const rp = await app.http('POST', `/v1/posts/${p.id}/reposting`, { apiKey: ws.apiKey, body: { reposting: { enable: true, reposts: [{ providerId: other, scheduleInSecs: 300 }] } } });
    expect(rp.status).toBe(200);
    const at = new Date(Date.now() + 3600_000).toISOString();
    const sched = await app.http('POST', '/v1/posts/bulk-schedule', { apiKey: ws.apiKey, body: { posts: [{ postId: p.id, schedules: [{ providerId: x, scheduledTime: at }] }] } });
    expect(sched.status, JSON.stringify(sched.body)).toBe(200);
    expect((await app.http('GET', `/v1/posts/${p.id}`, { apiKey: ws.apiKey })).body.data.status).toBe('scheduled');
    const childBefore = (await app.pool.query(`select status from posts where parent_post_id = $1`, [p.id])).rows;
    expect(childBefore).toEqual([{ status: 'scheduled' }]);

    const del = await app.http('DELETE', `/v1/posts/${p.id}`, { apiKey: ws.apiKey });
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ id: p.id, deleted: true, status: 'cancelled' });
    const got = await app.http('GET', `/v1/posts/${p.id}`, { apiKey: ws.apiKey });
    expect(got.body.data).toMatchObject({ status: 'cancelled', scheduledTime: null });
    const rows = await app.pool.query(`select status from post_schedules where post_id = $1`, [p.id]);
    expect(rows.rows).toEqual([{ status: 'cancelled' }]);
    expect((await app.pool.query(`select status from posts where parent_post_id = $1`, [p.id])).rows).toEqual([{ status: 'cancelled' }]);

    // A post whose publish is under way cannot be deleted.
    const q = (await draft(ws, { providerId: x, content: 'second' })).body.data;
    await app.http('POST', '/v1/posts/bulk-schedule', { apiKey: ws.apiKey, body: { posts: [{ postId: q.id, schedules: [{ providerId: x, scheduledTime: at }] }] } });
    await app.pool.query(`update post_schedules set status = 'publishing' where post_id = $1`, [q.id]);
    const busy = await app.http('DELETE', `/v1/posts/${q.id}`, { apiKey: ws.apiKey });
    expect(busy.status).toBe(409);
    expect(busy.body.error.code).toBe('post_publishing');

    // No worker runs in this file: end the dispatch workflows the schedules started.
    const batches = await app.pool.query<{ batch_id: string }>(`select distinct batch_id from post_schedules where workspace_id = $1`, [ws.workspaceId]);
    for (const b of batches.rows) {
      await app.deps.temporal.workflow.getHandle(scheduleBatchWorkflowId(b.batch_id)).terminate('test cleanup').catch(() => undefined);
    }
  });

  // Found by an outside probe: of 8 concurrent DELETEs of a scheduled post one cancelled it and the
  // others answered 409 `post_publishing` ("started publishing meanwhile") although nothing was
  // publishing; of concurrent DELETEs of a draft, some answered 409 `conflict` for a post another
  // DELETE had removed. Each answer must be the one the DELETE would get in some serial order.
  it('concurrent DELETEs answer as if sent one after the other: no post_publishing, no conflict', async () => {
    const ws = await app.createWorkspace();
    const x = await connect(ws, 'microblog');
    const at = new Date(Date.now() + 3600_000).toISOString();
    const p = (await draft(ws, { providerId: x, content: 'twice cancelled' })).body.data;
    const sched = await app.http('POST', '/v1/posts/bulk-schedule', { apiKey: ws.apiKey, body: { posts: [{ postId: p.id, schedules: [{ providerId: x, scheduledTime: at }] }] } });
    expect(sched.status, JSON.stringify(sched.body)).toBe(200);
    const dels = await Promise.all(Array.from({ length: 8 }, () => app.http('DELETE', `/v1/posts/${p.id}`, { apiKey: ws.apiKey })));
    const answers = dels.map((r) => (r.status === 200 ? `200 ${r.body.data.status}` : `${r.status} ${r.body.error.code}`));
    // Serially: the first DELETE cancels, the second removes the cancelled post, the others find nothing.
    expect(answers.sort()).toEqual(['200 cancelled', '200 deleted', ...Array(6).fill('404 not_found')]);
    expect((await app.http('GET', `/v1/posts/${p.id}`, { apiKey: ws.apiKey })).status).toBe(404);

    const d = (await draft(ws, { providerId: x, content: 'deleted at once' })).body.data;
    const draftDels = await Promise.all(Array.from({ length: 8 }, () => app.http('DELETE', `/v1/posts/${d.id}`, { apiKey: ws.apiKey })));
    expect(draftDels.map((r) => (r.status === 200 ? `200 ${r.body.data.status}` : `${r.status} ${r.body.error.code}`)).sort()).toEqual(['200 deleted', ...Array(7).fill('404 not_found')]);

    const batches = await app.pool.query<{ batch_id: string }>(`select distinct batch_id from post_schedules where workspace_id = $1`, [ws.workspaceId]);
    for (const b of batches.rows) {
      await app.deps.temporal.workflow.getHandle(scheduleBatchWorkflowId(b.batch_id)).terminate('test cleanup').catch(() => undefined);
    }
  });

  it('answers 404 for posts of another workspace', async () => {
    const a = await app.createWorkspace({ plan: 'enterprise' });
    const b = await app.createWorkspace({ plan: 'enterprise' });
    const pa = await connect(a, 'pronet');
    const pb = await connect(b, 'pronet', 'other');
    const post = (await draft(a, { providerId: pa, content: 'mine' })).body.data;
    expect((await app.http('GET', `/v1/posts/${post.id}`, { apiKey: b.apiKey })).status).toBe(404);
    expect((await app.http('PATCH', `/v1/posts/${post.id}`, { apiKey: b.apiKey, body: { content: 'x' } })).status).toBe(404);
    expect((await app.http('DELETE', `/v1/posts/${post.id}`, { apiKey: b.apiKey })).status).toBe(404);
    const rp = await app.http('POST', `/v1/posts/${post.id}/reposting`, { apiKey: b.apiKey, body: { reposting: { enable: true, reposts: [{ providerId: pb, scheduleInSecs: 300 }] } } });
    expect(rp.status).toBe(404);
    expect((await app.http('GET', `/v1/posts/not-a-uuid`, { apiKey: b.apiKey })).status).toBe(404);
    const list = await app.http('POST', '/v1/posts/filter-posts', { apiKey: b.apiKey, body: {} });
    expect(list.body.meta.totalRecords).toBe(0);
    expect((await app.http('GET', `/v1/posts/${post.id}`, { apiKey: a.apiKey })).body.data.content).toBe('mine');
  });
});

describe('filter-posts', () => {
  it('filters by status, providerId and scheduledTime ranges, sorts, and pages both ways', async () => {
    const ws = await app.createWorkspace();
    const x = await connect(ws, 'microblog');
    const li = await connect(ws, 'pronet');
    const base = Date.parse('2031-01-01T00:00:00.000Z');
    const t = (h: number) => new Date(base + h * 3600_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const p = (await draft(ws, { providerId: i % 2 ? li : x, content: `post ${i}` })).body.data;
      ids.push(p.id);
      if (i < 6) await setState(p.id, 'scheduled', t(10 - i));
    }
    const q = (body: Record<string, unknown>) => app.http('POST', '/v1/posts/filter-posts', { apiKey: ws.apiKey, body });

    const drafts = await q({ conditions: [{ field: 'status', operator: '==', value: 'draft' }] });
    expect(drafts.status).toBe(200);
    expect(drafts.body.meta.totalRecords).toBe(4);
    // Default order: newest first.
    expect(drafts.body.data.map((p: any) => p.id)).toEqual(ids.slice(6).reverse());

    const liScheduled = await q({
      conditions: [
        { field: 'providerId', operator: 'IN', value: [li] },
        { field: 'status', operator: 'IN', value: ['scheduled', 'published'] },
      ],
    });
    expect(liScheduled.body.data.map((p: any) => p.id).sort()).toEqual([ids[1], ids[3], ids[5]].sort());

    const window = await q({ conditions: [{ field: 'scheduledTime', operator: 'BETWEEN', value: [t(6), t(8)] }], sort: [{ field: 'scheduledTime', direction: 'asc' }] });
    expect(window.body.data.map((p: any) => p.scheduledTime)).toEqual([t(6), t(7), t(8)]);
    const after = await q({ conditions: [{ field: 'scheduledTime', operator: '>', value: t(8) }] });
    expect(after.body.meta.totalRecords).toBe(2);
    const unscheduled = await q({ conditions: [{ field: 'scheduledTime', operator: 'IS EMPTY' }] });
    expect(unscheduled.body.meta.totalRecords).toBe(4);
    const either = await q({
      groupedCondition: { operator: 'OR', conditions: [{ field: 'scheduledTime', operator: '<', value: t(6) }, { field: 'status', operator: '==', value: 'draft' }] },
    });
    expect(either.body.meta.totalRecords).toBe(5);

    // scheduledTime ascending, empty times last; pages of 3 forward, then back.
    const sort = [{ field: 'scheduledTime', direction: 'asc' }];
    const expected = [...ids.slice(0, 6).reverse(), ...ids.slice(6)];
    const seen: string[] = [];
    const tokens: string[] = [];
    let token: string | undefined;
    do {
      const page = await q({ sort, limit: 3, ...(token ? { paginationToken: token } : {}) });
      expect(page.status).toBe(200);
      expect(page.body.meta.totalRecords).toBe(10);
      seen.push(...page.body.data.map((p: any) => p.id));
      tokens.push(page.body.meta.previousToken);
      token = page.body.meta.nextToken || undefined;
    } while (token);
    expect(seen).toEqual(expected);
    expect(tokens[0]).toBe('');
    const back = await q({ sort, limit: 3, paginationToken: tokens[2] });
    expect(back.body.data.map((p: any) => p.id)).toEqual(expected.slice(3, 6));

    const reused = await q({ sort: [{ field: 'createdAt', direction: 'asc' }], limit: 3, paginationToken: tokens[1] });
    expect(reused.status).toBe(400);
    expect(reused.body.error.code).toBe('invalid_pagination_token');
  });

  it('names a bad condition', async () => {
    const ws = await app.createWorkspace();
    const q = (body: Record<string, unknown>) => app.http('POST', '/v1/posts/filter-posts', { apiKey: ws.apiKey, body });
    const badField = await q({ conditions: [{ field: 'content', operator: '==', value: 'x' }] });
    expect(badField.status).toBe(400);
    expect(badField.body.error.details[0].path).toBe('/conditions/0/field');
    const badOp = await q({ conditions: [{ field: 'status', operator: '>', value: 'draft' }] });
    expect(badOp.body.error.details[0].path).toBe('/conditions/0/operator');
    const badDate = await q({ conditions: [{ field: 'scheduledTime', operator: '>=', value: 'tomorrow' }] });
    expect(badDate.body.error.details[0].path).toBe('/conditions/0/value');
    const badId = await q({ conditions: [{ field: 'providerId', operator: 'IN', value: ['not-an-id'] }] });
    expect(badId.body.error.details[0].path).toBe('/conditions/0/value/0');
    const badSort = await q({ sort: [{ field: 'content', direction: 'asc' }] });
    expect(badSort.status).toBe(400);
    expect(badSort.body.error.details[0].path).toMatch(/^\/sort\/0\/field/);
  });
});

describe('reposting', () => {
  it('is an Enterprise feature', async () => {
    const ws = await app.createWorkspace({ plan: 'pro' });
    const a = await connect(ws, 'pronet', 'a');
    const b = await connect(ws, 'pronet', 'b');
    const p = (await draft(ws, { providerId: a, content: 'x' })).body.data;
    const r = await app.http('POST', `/v1/posts/${p.id}/reposting`, { apiKey: ws.apiKey, body: { reposting: { enable: true, reposts: [{ providerId: b, scheduleInSecs: 300 }] } } });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('feature_not_available');
    const children = await app.pool.query(`select count(*)::int as n from posts where parent_post_id = $1`, [p.id]);
    expect(children.rows[0].n).toBe(0);
  });

  it('keeps one child per target, follows the parent schedule, and cancels children when disabled', async () => {
    const ws = await app.createWorkspace({ plan: 'enterprise' });
    const parentAcct = await connect(ws, 'pronet', 'parent');
    const b = await connect(ws, 'pronet', 'b');
    const page = await connect(ws, 'pronetPage', 'page');
    const x = await connect(ws, 'microblog', 'x');
    const p = (await draft(ws, { providerId: parentAcct, content: 'big news', automation: { threadDelay: { enabled: false, scheduleInSecs: 0 } } })).body.data;
    const repost = (reposting: Record<string, unknown>) => app.http('POST', `/v1/posts/${p.id}/reposting`, { apiKey: ws.apiKey, body: { reposting } });
    const children = async () =>
      (await app.http('POST', '/v1/posts/filter-posts', {
        apiKey: ws.apiKey,
        body: { conditions: [{ field: 'parentPostId', operator: '==', value: p.id }], sort: [{ field: 'createdAt', direction: 'asc' }] },
      })).body.data;

    const res = await repost({ enable: true, reposts: [{ providerId: b, scheduleInSecs: 300 }, { providerId: page, scheduleInSecs: 3600 }] });
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(p.id);
    expect(res.body.data.status).toBe('draft');
    expect(res.body.data.automation).toEqual({
      threadDelay: { enabled: false, scheduleInSecs: 0 },
      crossAccountRepostConfig: { enabled: true, providersConfig: [{ providerId: b, scheduleInSecs: 300 }, { providerId: page, scheduleInSecs: 3600 }] },
    });
    let kids = await children();
    expect(kids.map((c: any) => [c.providerId, c.status, c.repostDelaySecs, c.scheduledTime, c.parentPostId])).toEqual([
      [b, 'draft', 300, null, p.id],
      [page, 'draft', 3600, null, p.id],
    ]);
    // Children are not the parent's drafts: listing without the condition shows them too, the parent filter hides them.
    const roots = await app.http('POST', '/v1/posts/filter-posts', { apiKey: ws.apiKey, body: { conditions: [{ field: 'parentPostId', operator: 'IS EMPTY' }] } });
    expect(roots.body.data.map((r: any) => r.id)).toEqual([p.id]);

    // Once the parent is scheduled, re-configuring schedules the children at parent time + delay.
    const at = '2031-05-01T10:00:00.000Z';
    await setState(p.id, 'scheduled', at);
    const res2 = await repost({ enable: true, reposts: [{ providerId: b, scheduleInSecs: 1800 }, { providerId: page, scheduleInSecs: 86400 }] });
    expect(res2.status).toBe(200);
    kids = await children();
    expect(kids.map((c: any) => [c.providerId, c.status, c.repostDelaySecs, c.scheduledTime])).toEqual([
      [b, 'scheduled', 1800, '2031-05-01T10:30:00.000Z'],
      [page, 'scheduled', 86400, '2031-05-02T10:00:00.000Z'],
    ]);

    // Dropping a target cancels its child; the other keeps its row.
    await repost({ enable: true, reposts: [{ providerId: page, scheduleInSecs: 7200 }] });
    kids = await children();
    expect(kids.map((c: any) => [c.providerId, c.status, c.scheduledTime])).toEqual([
      [b, 'cancelled', '2031-05-01T10:30:00.000Z'],
      [page, 'scheduled', '2031-05-01T12:00:00.000Z'],
    ]);

    // A published child is left alone; disabling cancels the rest.
    const pageChild = kids[1].id;
    await repost({ enable: true, reposts: [{ providerId: page, scheduleInSecs: 7200 }, { providerId: b, scheduleInSecs: 300 }] });
    await app.pool.query(`update posts set status = 'published' where id = $1`, [pageChild]);
    const off = await repost({ enable: false, reposts: [] });
    expect(off.status).toBe(200);
    expect(off.body.data.automation.crossAccountRepostConfig).toEqual({ enabled: false, providersConfig: [] });
    kids = await children();
    expect(kids.map((c: any) => [c.providerId, c.status])).toEqual([
      [b, 'cancelled'],
      [page, 'published'],
      [b, 'cancelled'],
    ]);

    // Invalid targets are named.
    const bad = [
      [{ providerId: b, scheduleInSecs: 999 }, '/reposting/reposts/0/scheduleInSecs'],
      [{ providerId: x, scheduleInSecs: 300 }, '/reposting/reposts/0/providerId'],
      [{ providerId: parentAcct, scheduleInSecs: 300 }, '/reposting/reposts/0/providerId'],
      [{ providerId: '01950000-0000-7000-8000-000000000000', scheduleInSecs: 300 }, '/reposting/reposts/0/providerId'],
    ] as const;
    for (const [target, path] of bad) {
      const r = await repost({ enable: true, reposts: [target] });
      // An account the workspace does not have is a 404; one of the wrong kind a 400.
      expect(r.status, path).toBe(target.providerId.startsWith('01950000') ? 404 : 400);
      expect(r.body.error.details[0].path).toBe(path);
    }
    const dup = await repost({ enable: true, reposts: [{ providerId: b, scheduleInSecs: 300 }, { providerId: b, scheduleInSecs: 600 }] });
    expect(dup.status).toBe(400);
  });

  it('refuses to repost a child or a finished post', async () => {
    const ws = await app.createWorkspace({ plan: 'enterprise' });
    const a = await connect(ws, 'microblog', 'a');
    const b = await connect(ws, 'microblog', 'b');
    const p = (await draft(ws, { providerId: a, content: 'x' })).body.data;
    const ok = await app.http('POST', `/v1/posts/${p.id}/reposting`, { apiKey: ws.apiKey, body: { reposting: { enable: true, reposts: [{ providerId: b, scheduleInSecs: 300 }] } } });
    expect(ok.status).toBe(200);
    const child = (await app.pool.query(`select id from posts where parent_post_id = $1`, [p.id])).rows[0].id;
    const nested = await app.http('POST', `/v1/posts/${child}/reposting`, { apiKey: ws.apiKey, body: { reposting: { enable: true, reposts: [{ providerId: a, scheduleInSecs: 300 }] } } });
    expect(nested.status).toBe(409);
    await setState(p.id, 'published', null);
    const done = await app.http('POST', `/v1/posts/${p.id}/reposting`, { apiKey: ws.apiKey, body: { reposting: { enable: true, reposts: [{ providerId: b, scheduleInSecs: 300 }] } } });
    expect(done.status).toBe(409);
    expect(done.body.error.code).toBe('invalid_post_state');
  });
});
