/** Sources through HTTP: per-type rules, dedupe, get/patch, schedules, filter, bulk paths, 401/404s. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScheduleNotFoundError } from '@temporalio/client';
import { startTestApp, type TestApp } from '../harness.js';
import { sourceRefreshWorkflow } from '../../workflows/sourcePull.js';

let app: TestApp;
let key: string;
let otherKey: string;

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
  key = (await app.createWorkspace()).apiKey;
  otherKey = (await app.createWorkspace()).apiKey;
});
afterAll(() => app?.close());

const post = (path: string, body: unknown, k = key) => app.http('POST', path, { apiKey: k, body });
const patch = (path: string, body: unknown, k = key) => app.http('PATCH', path, { apiKey: k, body });
const get = (path: string, k = key) => app.http('GET', path, { apiKey: k });

function expect400(res: { status: number; body: any }, path: string, message?: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe('validation_failed');
  expect(res.body.error.details[0].path).toBe(path);
  if (message) expect(res.body.error.details[0].message).toMatch(message);
}

describe('POST /sources', () => {
  it('creates a profile source with the documented envelope and refreshStatus null', async () => {
    const res = await post('/sources', {
      sourceType: 'pronetInbound',
      sourceIdentifier: 'https://www.pronet.com/in/jane-doe-1',
      sourceMeta: { socialName: 'Jane Doe', platformName: 'pronet' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      type: 'sources',
      attributes: {
        sourceType: 'pronetInbound',
        sourceIdentifier: 'https://www.pronet.com/in/jane-doe-1',
        sourceMeta: { socialName: 'Jane Doe', platformName: 'pronet' },
        refreshStatus: null,
        runFrequency: null,
      },
    });
    expect(res.body.data.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.data.attributes.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('returns the existing source for a repeated type + identifier (normalised URL)', async () => {
    const a = await post('/sources', { sourceType: 'pronetOutbound', sourceIdentifier: 'https://www.pronet.com/company/acme-1' });
    const b = await post('/sources', { sourceType: 'pronetOutbound', sourceIdentifier: 'pronet.com/company/ACME-1/' });
    expect(b.status).toBe(200);
    expect(b.body.data.id).toBe(a.body.data.id);
    // Another type with the same URL is another source.
    const c = await post('/sources', { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/company/acme-1' });
    expect(c.body.data.id).not.toBe(a.body.data.id);
    // Another workspace gets its own.
    const d = await post('/sources', { sourceType: 'pronetOutbound', sourceIdentifier: 'https://www.pronet.com/company/acme-1' }, otherKey);
    expect(d.body.data.id).not.toBe(a.body.data.id);
    const k1 = await post('/sources', { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'Series A' } });
    const k2 = await post('/sources', { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'series a ' } });
    expect(k2.body.data.id).toBe(k1.body.data.id);
    expect(k1.body.data.attributes.sourceIdentifier).toBeNull();
  });

  it('applies the per-type rules with 400s naming the field', async () => {
    expect400(await post('/sources', { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/posts/abc' }), '/sourceIdentifier', /profile URL/);
    expect400(await post('/sources', { sourceType: 'pronetInbound' }), '/sourceIdentifier', /required/);
    expect400(await post('/sources', { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/in/x' }), '/sourceIdentifier', /post URL/);
    expect(
      (await post('/sources', { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/feed/update/urn:li:activity:712345' })).status,
    ).toBe(200);
    expect400(await post('/sources', { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'ab' } }), '/sourceMeta/keyword', /at least 3/);
    expect400(await post('/sources', { sourceType: 'pronetKeywordSearch', sourceIdentifier: 'x', sourceMeta: { keyword: 'abc' } }), '/sourceIdentifier');
    // Every branch's sourceMeta keys follow the rule the response publishes (fuzzer, seed 20261122:
    // an empty key and one with a C1 control character were stored and answered).
    expect400(await post('/sources', { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'abc', '': 1 } }), '/sourceMeta/', /at least 1|fewer than 1|shorter/);
    expect400(
      await post('/sources', { sourceType: 'pronetJobPosting', sourceMeta: { jobTitle: 'E', jobLocation: 'B', postedTime: 'p', jobType: 'f', 'a\u0097': 1 } }),
      '/sourceMeta/a\u0097',
      /control characters/,
    );
    expect400(
      await post('/sources', { sourceType: 'pronetJobPosting', sourceMeta: { jobTitle: 'Engineer', jobLocation: 'Berlin', postedTime: 'past-week' } }),
      '/sourceMeta/jobType',
    );
    expect400(await post('/sources', { sourceType: 'importFromWebhook', sourceMeta: { config: [] } }), '/sourceMeta/config');
    expect400(
      await post('/sources', {
        sourceType: 'importFromWebhook',
        sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'first', targetFieldName: 'contact.nope' }] } },
      }),
      '/sourceMeta/config/fieldMapping/0/targetFieldName',
    );
    // Found by an outside client: a mapping from "__proto__" was accepted, though no row may carry
    // that key (input safety refuses it), so every bulk upsert into the source was refused.
    expect400(
      await post('/sources', {
        sourceType: 'importFromWebhook',
        sourceMeta: { config: { fieldMapping: [{ sourceFieldName: '__proto__', targetFieldName: 'contact.firstName' }] } },
      }),
      '/sourceMeta/config/fieldMapping/0/sourceFieldName',
    );
    expect400(await post('/sources', { sourceType: 'pronetFoo', sourceIdentifier: 'x' }), '/sourceType');
    expect400(await post('/sources', { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/x', extra: 1 }), '/extra');
  });

  it('accepts webhook sources with a catalog mapping (custom fields included) and never dedupes them without identifier', async () => {
    const body = {
      sourceType: 'importFromWebhook',
      sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'first', targetFieldName: 'contact.firstName' }, { sourceFieldName: 'org', targetFieldName: 'company.companyName' }] } },
    };
    const a = await post('/sources', body);
    const b = await post('/sources', body);
    expect(a.status).toBe(200);
    expect(b.body.data.id).not.toBe(a.body.data.id);
    const ws = await app.pool.query<{ workspace_id: string }>(`select workspace_id from sources where id = $1`, [a.body.data.id]);
    const cf = '0195f0a0-0000-7000-8000-000000000001';
    await app.pool.query(`insert into custom_field_definitions (id, workspace_id, label, type) values ($1, $2, 'Score', 'number')`, [cf, ws.rows[0]!.workspace_id]);
    const c = await post('/sources', {
      sourceType: 'importFromWebhook',
      sourceIdentifier: 'crm-export',
      sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'score', targetFieldName: `contact.customFields.${cf}` }] } },
    });
    expect(c.status).toBe(200);
    expect((await post('/sources', { ...c.body.data.attributes, createdAt: undefined, refreshStatus: undefined, runFrequency: undefined })).body.data.id).toBe(c.body.data.id);
  });

  it('attaches to a segment; 404 for an unknown or foreign segment', async () => {
    const seg = await post('/segments', { name: 'Attach target' });
    const s = await post('/sources', { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/posts/attach-1', segmentId: seg.body.data.id });
    expect(s.status).toBe(200);
    expect((await get(`/segments/${seg.body.data.id}`)).body.data.attributes.segmentSources).toEqual([s.body.data.id]);
    const foreignSeg = await post('/segments', { name: 'Foreign' }, otherKey);
    const r = await post('/sources', { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/posts/attach-2', segmentId: foreignSeg.body.data.id });
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not_found');
    expect((await post('/sources', { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/posts/attach-2', segmentId: 'nope' })).status).toBe(404);
  });

  it('401 without or with a bad key', async () => {
    expect((await app.http('POST', '/sources', { body: { sourceType: 'pronetPost' } })).status).toBe(401);
    expect((await app.http('GET', '/sources/x', { apiKey: 'bogus' })).status).toBe(401);
  });
});

describe('GET and PATCH /sources/{id}', () => {
  it('404 for unknown, malformed and foreign ids', async () => {
    const s = await post('/sources', { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/get-1' });
    expect((await get(`/sources/${s.body.data.id}`)).body.data.id).toBe(s.body.data.id);
    expect((await get(`/sources/${s.body.data.id}`, otherKey)).status).toBe(404);
    expect((await get('/sources/0195f0a0-0000-7000-8000-00000000ffff')).status).toBe(404);
    expect((await get('/sources/not-a-uuid')).status).toBe(404);
    expect((await patch(`/sources/${s.body.data.id}`, { sourceMeta: { socialName: 'x' } }, otherKey)).status).toBe(404);
  });

  it('merges sourceMeta and re-checks the per-type rules', async () => {
    const s = await post('/sources', { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'funding round', sourceName: 'Funding' } });
    const id = s.body.data.id;
    const r = await patch(`/sources/${id}`, { sourceMeta: { authorTitle: 'CEO', sourceName: null } });
    expect(r.status).toBe(200);
    // the display fields filled at creation stay (socialName came from the sourceName)
    expect(r.body.data.attributes.sourceMeta).toEqual({
      keyword: 'funding round', authorTitle: 'CEO', socialName: 'Funding', socialHandle: 'funding round', platformName: 'pronet', interactionType: 'keyword posts', profileImageUrl: null,
    });
    expect400(await patch(`/sources/${id}`, { sourceMeta: { keyword: 'no' } }), '/sourceMeta/keyword');
    expect400(await patch(`/sources/${id}`, { sourceIdentifier: 'x' }), '/sourceIdentifier');
    // Changing the search into one the workspace already has is a conflict.
    await post('/sources', { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'other round' } });
    const clash = await patch(`/sources/${id}`, { sourceMeta: { keyword: 'Other Round', authorTitle: null } });
    expect(clash.status).toBe(409);
    expect(clash.body.error.code).toBe('source_exists');
    expect((await get(`/sources/${id}`)).body.data.attributes.sourceMeta.keyword).toBe('funding round');
  });

  it('runFrequency creates, updates and deletes the Temporal Schedule', async () => {
    const s = await post('/sources', { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/scheduled-1' });
    const id = s.body.data.id;
    const r1 = await patch(`/sources/${id}`, { runFrequency: { numberOfPastDaysToSync: '7', periodicInterval: 'PT6H' } });
    expect(r1.status, JSON.stringify(r1.body)).toBe(200);
    expect(r1.body.data.attributes.runFrequency).toEqual({ numberOfPastDaysToSync: '7', periodicInterval: 'PT6H' });
    const handle = app.deps.temporal.schedule.getHandle(`source-refresh-${id}`);
    let d = await handle.describe();
    expect(d.spec.intervals?.[0]?.every).toBe(6 * 3600_000);
    expect(d.action).toMatchObject({ type: 'startWorkflow', workflowType: sourceRefreshWorkflow.name, taskQueue: app.config.temporal.taskQueue });
    expect((d.action as { args: unknown[] }).args).toEqual([{ workspaceId: expect.any(String), sourceId: id }]);

    const r2 = await patch(`/sources/${id}`, { runFrequency: { numberOfPastDaysToSync: '30', periodicInterval: '1d' } });
    expect(r2.body.data.attributes.runFrequency).toEqual({ numberOfPastDaysToSync: '30', periodicInterval: '1d' });
    d = await handle.describe();
    expect(d.spec.intervals?.[0]?.every).toBe(86_400_000);
    expect((await get(`/sources/${id}`)).body.data.attributes.runFrequency.periodicInterval).toBe('1d');

    // found by the contract review: one of the two fields answered 400 instead of merging with the stored value
    const r2b = await patch(`/sources/${id}`, { runFrequency: { periodicInterval: 'PT12H' } });
    expect(r2b.status, JSON.stringify(r2b.body)).toBe(200);
    expect(r2b.body.data.attributes.runFrequency).toEqual({ numberOfPastDaysToSync: '30', periodicInterval: 'PT12H' });
    expect((await handle.describe()).spec.intervals?.[0]?.every).toBe(12 * 3600_000);
    const r2c = await patch(`/sources/${id}`, { runFrequency: { numberOfPastDaysToSync: '14' } });
    expect(r2c.body.data.attributes.runFrequency).toEqual({ numberOfPastDaysToSync: '14', periodicInterval: 'PT12H' });
    await patch(`/sources/${id}`, { runFrequency: { numberOfPastDaysToSync: '30', periodicInterval: '1d' } });
    // Nothing stored to merge with: a conflict with the source's state (409), naming the missing field.
    const unscheduled = (await post('/sources', { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/scheduled-2' })).body.data.id;
    const half = await patch(`/sources/${unscheduled}`, { runFrequency: { numberOfPastDaysToSync: '7' } });
    expect([half.status, half.body.error.code, half.body.error.details[0].path]).toEqual([409, 'run_frequency_incomplete', '/runFrequency/periodicInterval']);
    expect400(await patch(`/sources/${id}`, { runFrequency: { numberOfPastDaysToSync: '91', periodicInterval: '1d' } }), '/runFrequency/numberOfPastDaysToSync');
    expect400(await patch(`/sources/${id}`, { runFrequency: { numberOfPastDaysToSync: '1', periodicInterval: 'often' } }), '/runFrequency/periodicInterval');
    expect400(await patch(`/sources/${id}`, { runFrequency: { numberOfPastDaysToSync: '1', periodicInterval: '5m' } }), '/runFrequency/periodicInterval', /15 minutes/);

    const r3 = await patch(`/sources/${id}`, { runFrequency: null });
    expect(r3.body.data.attributes.runFrequency).toBeNull();
    await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  });

  // Found by an outside probe: six concurrent PATCHes, each merging another sourceMeta key, all
  // answered 200 and only one key was kept (each merged into the meta it had read before the others wrote).
  it('concurrent PATCHes each merge their sourceMeta key: none is lost', async () => {
    const s = await post('/sources', { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'concurrent merge' } });
    const id = s.body.data.id;
    const keys = ['sourceName', 'authorTitle', 'socialName', 'socialHandle', 'platformName', 'interactionType'];
    const answers = await Promise.all(keys.map((k) => patch(`/sources/${id}`, { sourceMeta: { [k]: `v-${k}` } })));
    expect(answers.map((r) => r.status)).toEqual(keys.map(() => 200));
    const meta = (await get(`/sources/${id}`)).body.data.attributes.sourceMeta;
    for (const k of keys) expect(meta[k], k).toBe(`v-${k}`);
  });

  // Found by an outside probe: concurrent PATCHes that set and remove runFrequency answered 500
  // (the schedule deleted between another request's create and update) and left the stored
  // runFrequency and the Temporal Schedule disagreeing (a runFrequency with no schedule, or another interval).
  it('concurrent runFrequency PATCHes answer 200 and leave the stored runFrequency and the Schedule in agreement', async () => {
    for (let round = 0; round < 3; round++) {
      const s = await post('/sources', { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: `concurrent schedule ${round}` } });
      const id = s.body.data.id;
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => patch(`/sources/${id}`, { runFrequency: i % 2 === 0 ? null : { numberOfPastDaysToSync: '1', periodicInterval: `${i + 1}h` } })),
      );
      expect(answers.map((r) => r.status), JSON.stringify(answers.find((r) => r.status !== 200)?.body)).toEqual(answers.map(() => 200));
      const stored = (await get(`/sources/${id}`)).body.data.attributes.runFrequency;
      const handle = app.deps.temporal.schedule.getHandle(`source-refresh-${id}`);
      if (stored === null) await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
      else expect((await handle.describe()).spec.intervals?.[0]?.every).toBe(Number.parseInt(stored.periodicInterval, 10) * 3600_000);
      // No Schedule may outlive the test and fire into its throwaway task queue.
      expect((await patch(`/sources/${id}`, { runFrequency: null })).status).toBe(200);
      await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
    }
  });

  it('refuses a schedule on a webhook source', async () => {
    const s = await post('/sources', {
      sourceType: 'importFromWebhook',
      sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'a', targetFieldName: 'contact.firstName' }] } },
    });
    // A valid body the stored source's type refuses: a 409 (positive_data_acceptance found the 400).
    const r = await patch(`/sources/${s.body.data.id}`, { runFrequency: { numberOfPastDaysToSync: '1', periodicInterval: '1d' } });
    expect(r.status, JSON.stringify(r.body)).toBe(409);
    expect(r.body.error.code).toBe('source_not_pullable');
    expect(r.body.error.details[0].path).toBe('/runFrequency');
    const bulk = await patch('/sources/bulk-update', { sources: [{ id: s.body.data.id, runFrequency: { numberOfPastDaysToSync: '1', periodicInterval: '1d' } }] });
    expect(bulk.status).toBe(409);
    expect(bulk.body.error.details[0].path).toBe('/sources/0/runFrequency');
  });
});

describe('filter, bulk upsert, bulk fetch, bulk update', () => {
  it('filters by type with conditions and pages with tokens', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await post('/sources', { sourceType: 'pronetJobPosting', sourceMeta: { jobTitle: `Role ${i}`, jobLocation: i % 2 ? 'Berlin' : 'Paris', postedTime: 'past-week', jobType: 'full-time' } });
      ids.push(r.body.data.id);
    }
    const p1 = await post('/sources/filter-sources/pronetJobPosting', { limit: 2 });
    expect(p1.status).toBe(200);
    expect(p1.body.meta.totalRecords).toBe(5);
    expect(p1.body.data.map((s: any) => s.id)).toEqual(ids.slice(0, 2));
    const p2 = await post('/sources/filter-sources/pronetJobPosting', { limit: 2, paginationToken: p1.body.meta.nextToken });
    expect(p2.body.data.map((s: any) => s.id)).toEqual(ids.slice(2, 4));
    const berlin = await post('/sources/filter-sources/pronetJobPosting', { conditions: [{ field: 'sourceMeta.jobLocation', operator: '==', value: 'Berlin' }] });
    expect(berlin.body.data.map((s: any) => s.id)).toEqual([ids[1], ids[3]]);
    // A token of another query is refused.
    const bad = await post('/sources/filter-sources/pronetJobPosting', { limit: 2, paginationToken: p1.body.meta.nextToken, conditions: [{ field: 'refreshStatus', operator: 'IS EMPTY' }] });
    expect(bad.status).toBe(400);
    expect400(await post('/sources/filter-sources/pronetJobPosting', { conditions: [{ field: 'nope', operator: '==', value: 'x' }] }), '/conditions/0/field');
    expect400(await post('/sources/filter-sources/pronetJobPosting', { conditions: [{ field: 'createdAt', operator: 'LIKE', value: 'x' }] }), '/conditions/0/operator');
    expect((await post('/sources/filter-sources/nope', {})).status).toBe(400);
    expect((await post('/sources/filter-sources/pronetJobPosting', {}, otherKey)).body.meta.totalRecords).toBe(0);
  });

  it('lists the sources of a segment through segmentIds', async () => {
    const seg = await post('/segments', { name: 'Filter by segment' });
    const s = await post('/sources', { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/posts/seg-filter', segmentId: seg.body.data.id });
    const r = await post('/sources/filter-sources/pronetPost', { conditions: [{ field: 'segmentIds', operator: 'IN', value: [seg.body.data.id] }] });
    expect(r.body.data.map((x: any) => x.id)).toEqual([s.body.data.id]);
  });

  it('bulk upsert creates or merges, validates every item first', async () => {
    const existing = await post('/sources', { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/bulk-0', sourceMeta: { socialName: 'Zero' } });
    const res = await post('/sources/bulk-upsert', {
      sources: [
        { sourceType: 'pronetInbound', sourceIdentifier: 'pronet.com/in/bulk-0', sourceMeta: { socialHandle: '@zero' } },
        { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/bulk-1' },
        { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'bulk keyword' } },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.meta).toEqual({ created: 2, updated: 1 });
    expect(res.body.data[0].id).toBe(existing.body.data.id);
    expect(res.body.data[0].attributes.sourceMeta).toEqual({ socialName: 'Zero', socialHandle: '@zero', platformName: 'pronet', interactionType: 'inbound engagement', profileImageUrl: null });
    const before = (await post('/sources/filter-sources/pronetInbound', { limit: 100 })).body.meta.totalRecords;
    expect400(
      await post('/sources/bulk-upsert', {
        sources: [
          { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/bulk-2' },
          { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/in/bulk-3' },
        ],
      }),
      '/sources/1/sourceIdentifier',
    );
    expect((await post('/sources/filter-sources/pronetInbound', { limit: 100 })).body.meta.totalRecords).toBe(before);
    expect((await post('/sources/bulk-upsert', { sources: [] })).status).toBe(400);
    expect((await post('/sources/bulk-upsert', { sources: [{ sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/bulk-4', segmentId: '0195f0a0-0000-7000-8000-00000000ffff' }] })).status).toBe(404);
  });

  it('bulk fetch returns known ids in order, foreign and unknown absent', async () => {
    const a = await post('/sources', { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/posts/fetch-a' });
    const b = await post('/sources', { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/posts/fetch-b' });
    const f = await post('/sources', { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/posts/fetch-f' }, otherKey);
    const r = await post('/sources/bulk-fetch', { sourceIds: [b.body.data.id, 'nope', f.body.data.id, a.body.data.id] });
    expect(r.body.data.map((s: any) => s.id)).toEqual([b.body.data.id, a.body.data.id]);
    expect400(await post('/sources/bulk-fetch', { sourceIds: [] }), '/sourceIds');
    expect400(await post('/sources/bulk-fetch', { sourceIds: Array.from({ length: 101 }, (_, i) => `id-${i}`) }), '/sourceIds');
  });

  it('bulk update patches several sources; a foreign id is a 404 and nothing changes', async () => {
    const a = await post('/sources', { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/bu-a' });
    const b = await post('/sources', { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/bu-b' });
    const f = await post('/sources', { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/bu-f' }, otherKey);
    const r = await patch('/sources/bulk-update', {
      sources: [
        { id: a.body.data.id, sourceMeta: { socialName: 'A' } },
        { id: b.body.data.id, runFrequency: { numberOfPastDaysToSync: '1', periodicInterval: '12h' } },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data[0].attributes.sourceMeta).toMatchObject({ socialName: 'A' });
    expect(r.body.data[1].attributes.runFrequency).toEqual({ numberOfPastDaysToSync: '1', periodicInterval: '12h' });
    const handle = app.deps.temporal.schedule.getHandle(`source-refresh-${b.body.data.id}`);
    expect((await handle.describe()).spec.intervals?.[0]?.every).toBe(12 * 3600_000);
    const nf = await patch('/sources/bulk-update', { sources: [{ id: a.body.data.id, sourceMeta: { socialName: 'B' } }, { id: f.body.data.id, sourceMeta: { socialName: 'X' } }] });
    expect(nf.status).toBe(404);
    expect((await get(`/sources/${a.body.data.id}`)).body.data.attributes.sourceMeta).toMatchObject({ socialName: 'A' });
    // An id listed twice gets both PATCHes in order (positiveDataAcceptance.test.ts).
    expect((await patch('/sources/bulk-update', { sources: [{ id: a.body.data.id, sourceMeta: {} }, { id: a.body.data.id, sourceMeta: {} }] })).status).toBe(200);
    await patch('/sources/bulk-update', { sources: [{ id: b.body.data.id, runFrequency: null }] });
    await expect(handle.describe()).rejects.toBeInstanceOf(ScheduleNotFoundError);
  });
});

describe('POST /sources/pull-contacts-from-source/{id} (validation; pulls run in sourcePull.test.ts)', () => {
  it('404 for unknown and foreign sources and segments; 400 for bad days, 409 for webhook sources', async () => {
    const s = await post('/sources', { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/pull-v' });
    const id = s.body.data.id;
    expect((await post(`/sources/pull-contacts-from-source/${id}`, {}, otherKey)).status).toBe(404);
    expect((await post('/sources/pull-contacts-from-source/0195f0a0-0000-7000-8000-00000000ffff', {})).status).toBe(404);
    expect((await post(`/sources/pull-contacts-from-source/${id}`, { segmentId: '0195f0a0-0000-7000-8000-00000000ffff' })).status).toBe(404);
    expect400(await post(`/sources/pull-contacts-from-source/${id}`, { numberOfPastDaysToSync: 91 }), '/numberOfPastDaysToSync');
    const w = await post('/sources', { sourceType: 'importFromWebhook', sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'a', targetFieldName: 'contact.firstName' }] } } });
    const r = await post(`/sources/pull-contacts-from-source/${w.body.data.id}`, {});
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('source_not_pullable');
    expect((await app.http('POST', `/sources/pull-contacts-from-source/${id}`, { body: {} })).status).toBe(401);
  });
});
