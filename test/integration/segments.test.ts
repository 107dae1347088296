/** Segments through HTTP: create, search, get, patch, delete, clone, 400/401/404s; membership SQL on the real database. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import { sql } from 'kysely';
import { contactCatalog } from '../../domain/contactCatalog.js';
import { joinSql } from '../../db/contactColumns.js';
import { segmentMembershipWhere, type SegmentForMembership } from '../../db/segmentMembership.js';
import { compileSql } from '../../db/sqlFragments.js';
import { startTestApp, type TestApp } from '../harness.js';

let app: TestApp;
let key: string;
let ws: string;
let otherKey: string;

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
  const w = await app.createWorkspace();
  key = w.apiKey;
  ws = w.workspaceId;
  otherKey = (await app.createWorkspace()).apiKey;
});
afterAll(() => app?.close());

const req = (method: string, path: string, body?: unknown, k: string | undefined = key) => app.http(method, path, { apiKey: k, body });
const source = async (slug: string, k = key) =>
  (await req('POST', '/sources', { sourceType: 'pronetPost', sourceIdentifier: `https://www.pronet.com/posts/${slug}` }, k)).body.data.id as string;

/** A source id the workspace does not have: 404 naming the field. */
function expect404(res: { status: number; body: any }, path: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(404);
  expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
}

function expect400(res: { status: number; body: any }, path: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.details[0].path).toBe(path);
}

const fullBody = async () => ({
  name: 'Hot leads',
  segmentSources: [await source(`seg-${uuidv7()}`)],
  conditions: [{ field: 'contact.jobTitle', operator: 'LIKE', value: '%engineer%' }],
  groupedCondition: { operator: 'OR', conditions: [{ field: 'company.companyName', operator: '==', value: 'Acme' }, { field: 'contact.firstName', operator: 'IN', value: ['Ann', 'Bob'] }] },
  workflows: [{ name: 'Notify sales', trigger: 'contact.added', actions: [{ type: 'webhook', url: 'https://example.com/hook' }] }],
  savedViewTemplates: [{ name: 'Default view', fields: ['contact.fullName', 'company.companyName'] }],
});

describe('create, get, patch, delete', () => {
  it('creates a segment with every part and reads it back', async () => {
    const body = await fullBody();
    const res = await req('POST', '/segments', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({
      type: 'segments',
      attributes: { ...body, clonedFrom: null, isDefault: false },
    });
    const got = await req('GET', `/segments/${res.body.data.id}`);
    expect(got.body).toEqual(res.body);
  });

  it('rejects bad bodies with 400s naming the field', async () => {
    expect400(await req('POST', '/segments', { name: '' }), '/name');
    expect400(await req('POST', '/segments', {}), '/name');
    expect404(await req('POST', '/segments', { name: 'x', segmentSources: ['0195f0a0-0000-7000-8000-00000000ffff'] }), '/segmentSources/0');
    const foreign = await source('foreign-src', otherKey);
    expect404(await req('POST', '/segments', { name: 'x', segmentSources: [foreign] }), '/segmentSources/0');
    expect400(await req('POST', '/segments', { name: 'x', conditions: [{ field: 'contact.nope', operator: '==', value: 'a' }] }), '/conditions/0/field');
    expect400(await req('POST', '/segments', { name: 'x', conditions: [{ field: 'contact.createdAt', operator: 'LIKE', value: 'a' }] }), '/conditions/0/operator');
    expect400(await req('POST', '/segments', { name: 'x', color: 'red' }), '/color');
    expect((await app.http('POST', '/segments', { body: { name: 'x' } })).status).toBe(401);
  });

  it('404 for unknown, malformed and foreign ids on get, patch, delete, clone', async () => {
    const mine = (await req('POST', '/segments', { name: 'Mine' })).body.data.id;
    for (const id of ['0195f0a0-0000-7000-8000-00000000ffff', 'not-an-id']) {
      expect((await req('GET', `/segments/${id}`)).status).toBe(404);
    }
    expect((await req('GET', `/segments/${mine}`, undefined, otherKey)).status).toBe(404);
    expect((await req('PATCH', `/segments/${mine}`, { name: 'x' }, otherKey)).status).toBe(404);
    expect((await req('DELETE', `/segments/${mine}`, undefined, otherKey)).status).toBe(404);
    expect((await req('POST', `/segments/${mine}/clone`, {}, otherKey)).status).toBe(404);
    expect((await req('GET', `/segments/${mine}`)).status).toBe(200);
    expect((await app.http('GET', `/segments/${mine}`)).status).toBe(401);
  });

  it('patch changes only the given properties', async () => {
    const body = await fullBody();
    const id = (await req('POST', '/segments', body)).body.data.id;
    const r = await req('PATCH', `/segments/${id}`, { name: 'Renamed', savedViewTemplates: [] });
    expect(r.status).toBe(200);
    expect(r.body.data.attributes).toMatchObject({ ...body, name: 'Renamed', savedViewTemplates: [] });
    const r2 = await req('PATCH', `/segments/${id}`, { groupedCondition: null, segmentSources: [] });
    expect(r2.body.data.attributes).toMatchObject({ name: 'Renamed', groupedCondition: null, segmentSources: [], conditions: body.conditions, workflows: body.workflows });
    expect400(await req('PATCH', `/segments/${id}`, { conditions: [{ field: 'contact.firstName', operator: '>', value: 'a' }] }), '/conditions/0/operator');
    expect404(await req('PATCH', `/segments/${id}`, { segmentSources: ['nope'] }), '/segmentSources/0');
  });

  it('protects the default segment', async () => {
    const search = await req('GET', '/segments/search?q=all');
    const def = search.body.data.find((s: any) => s.attributes.isDefault);
    expect(def.attributes.name).toBe('All contacts');
    expect400(await req('PATCH', `/segments/${def.id}`, { conditions: [] }), '/conditions');
    expect((await req('PATCH', `/segments/${def.id}`, { workflows: [{ name: 'w' }] })).status).toBe(200);
    const del = await req('DELETE', `/segments/${def.id}`);
    expect(del.status).toBe(409);
    expect(del.body.error.code).toBe('default_segment_protected');
  });

  it('concurrent first uses of a new workspace create one default segment', async () => {
    const fresh = (await app.createWorkspace()).apiKey;
    const answers = await Promise.all(Array.from({ length: 6 }, () => req('GET', '/segments/search?q=all', undefined, fresh)));
    const ids = new Set(answers.map((a) => (expect(a.status).toBe(200), a.body.data.filter((s: any) => s.attributes.isDefault).map((s: any) => s.id))).flat());
    expect(ids.size).toBe(1);
  });

  it('deletes a segment', async () => {
    const id = (await req('POST', '/segments', { name: 'Doomed' })).body.data.id;
    const r = await req('DELETE', `/segments/${id}`);
    expect(r.body).toEqual({ data: { id, deleted: true } });
    expect((await req('GET', `/segments/${id}`)).status).toBe(404);
    expect((await req('DELETE', `/segments/${id}`)).status).toBe(404);
  });

  it('concurrent DELETEs answer as if sent one after the other: one 200, then 404s', async () => {
    // found by the outsider probe: 20 concurrent DELETEs all answered 200 deleted:true
    for (let round = 0; round < 5; round++) {
      const id = (await req('POST', '/segments', { name: 'Doomed twice' })).body.data.id;
      // twenty open connections first, so that the DELETEs arrive together
      await Promise.all(Array.from({ length: 20 }, () => req('GET', `/segments/${id}`)));
      const answers = await Promise.all(Array.from({ length: 20 }, () => req('DELETE', `/segments/${id}`)));
      expect(answers.map((a) => a.status).sort(), `round ${round}`).toEqual([200, ...Array(19).fill(404)]);
    }
  });
});

describe('GET /segments/search', () => {
  it('type-ahead: contains q, prefix matches first, workspace only', async () => {
    for (const name of ['Zeta partners', 'Partners EMEA', 'Old partners list', 'Unrelated']) await req('POST', '/segments', { name });
    await req('POST', '/segments', { name: 'Partners foreign' }, otherKey);
    const r = await req('GET', '/segments/search?q=PART');
    expect(r.status).toBe(200);
    expect(r.body.data.map((s: any) => s.attributes.name)).toEqual(['Partners EMEA', 'Old partners list', 'Zeta partners']);
    const limited = await req('GET', '/segments/search?q=part&limit=1');
    expect(limited.body.data).toHaveLength(1);
    const all = await req('GET', '/segments/search');
    expect(all.body.data.length).toBeGreaterThanOrEqual(5);
    expect((await req('GET', '/segments/search?q=%25')).body.data).toEqual([]);
    expect400(await req('GET', '/segments/search?limit=0'), '/query/limit');
    expect400(await req('GET', '/segments/search?foo=1'), '/query/foo');
    expect((await app.http('GET', '/segments/search?q=x')).status).toBe(401);
  });

  it('a q with placeholder characters (?, ??, $1, :name) is text: found by the fuzzer as a 500 for q=">?¹"', async () => {
    for (const name of ['Who? Me?', 'Costs $1 :each', 'a ?? b']) await req('POST', '/segments', { name });
    for (const [q, names] of [
      ['>?¹', []],
      ['who?', ['Who? Me?']],
      ['?', ['a ?? b', 'Who? Me?']],
      ['??', ['a ?? b']],
      ['$1', ['Costs $1 :each']],
      [':each', ['Costs $1 :each']],
    ] as const) {
      const r = await req('GET', `/segments/search?q=${encodeURIComponent(q)}`);
      expect(r.status, `q=${q}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.body.data.map((s: any) => s.attributes.name), `q=${q}`).toEqual(names);
    }
  });
});

describe('POST /segments/{id}/clone', () => {
  it('copies everything with the default name', async () => {
    const body = await fullBody();
    const origin = (await req('POST', '/segments', body)).body.data;
    const before = Date.now();
    const r = await req('POST', `/segments/${origin.id}/clone`, {});
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const c = r.body.data;
    expect(c.type).toBe('segments');
    expect(c.id).not.toBe(origin.id);
    const m = /^Copy of Hot leads - (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)$/.exec(c.attributes.name);
    expect(m, c.attributes.name).not.toBeNull();
    expect(Date.parse(m![1]!)).toBeGreaterThanOrEqual(before - 1000);
    expect(c.attributes).toMatchObject({
      clonedFrom: origin.id,
      isDefault: false,
      segmentSources: body.segmentSources,
      conditions: body.conditions,
      groupedCondition: body.groupedCondition,
      workflows: body.workflows,
      savedViewTemplates: body.savedViewTemplates,
    });
    expect((await req('GET', `/segments/${c.id}`)).body.data).toEqual(c);
  });

  it('workflowOnly copies only the workflows; name overrides the default', async () => {
    const body = await fullBody();
    const origin = (await req('POST', '/segments', body)).body.data;
    const r = await req('POST', `/segments/${origin.id}/clone`, { name: 'Just the automations', workflowOnly: true });
    expect(r.body.data.attributes).toMatchObject({
      name: 'Just the automations',
      clonedFrom: origin.id,
      segmentSources: [],
      conditions: [],
      groupedCondition: null,
      workflows: body.workflows,
      savedViewTemplates: [],
    });
    // The origin is unchanged.
    expect((await req('GET', `/segments/${origin.id}`)).body.data).toEqual(origin);
    expect400(await req('POST', `/segments/${origin.id}/clone`, { workflowOnly: 'yes' }), '/workflowOnly');
    expect((await app.http('POST', `/segments/${origin.id}/clone`, { body: {} })).status).toBe(401);
  });
});

describe('membership (domain/segmentMembership.ts on the real schema)', () => {
  it('holds the contacts of its sources that match its conditions; the default holds all', async () => {
    const s1 = await source('member-1');
    const s2 = await source('member-2');
    const s3 = await source('member-3');
    const people = [
      { name: 'Ann', title: 'Software Engineer', src: s1 },
      { name: 'Bob', title: 'Sales Manager', src: s1 },
      { name: 'Cid', title: 'Data Engineer', src: s2 },
      { name: 'Dee', title: 'Staff Engineer', src: s3 },
      { name: 'Eve', title: 'Engineer', src: s1, deleted: true },
    ];
    const ids: Record<string, string> = {};
    for (const p of people) {
      const id = uuidv7();
      ids[p.name] = id;
      await app.pool.query(
        `insert into contacts (id, workspace_id, status, first_name, title, created_at, updated_at) values ($1, $2, $3, $4, $5, now(), now())`,
        [id, ws, p.deleted ? 'deleted' : 'active', p.name, p.title],
      );
      await app.pool.query(`insert into contact_sources (source_id, row_key, contact_id) values ($1, $2, $3)`, [p.src, `k:${p.name}`, id]);
    }
    const catalog = contactCatalog([]);
    const members = async (seg: SegmentForMembership) => {
      const w = segmentMembershipWhere(seg, catalog);
      const r = await app.pool.query<{ first_name: string }>(
        compileSql(
          sql`select c.first_name from contacts c ${sql.raw(joinSql(w.joins))} where c.workspace_id = ${ws} and c.status = 'active' and (${w.sql}) and c.id = any(${Object.values(ids)}::uuid[]) order by c.first_name`,
        ),
      );
      return r.rows.map((x) => x.first_name);
    };
    expect(await members({ isDefault: true, segmentSources: [] })).toEqual(['Ann', 'Bob', 'Cid', 'Dee']);
    expect(await members({ isDefault: false, segmentSources: [] })).toEqual([]);
    expect(await members({ isDefault: false, segmentSources: [s1, s2] })).toEqual(['Ann', 'Bob', 'Cid']);
    expect(
      await members({ isDefault: false, segmentSources: [s1, s2], conditions: [{ field: 'contact.jobTitle', operator: 'LIKE', value: '%engineer%' }] }),
    ).toEqual(['Ann', 'Cid']);
    expect(
      await members({
        isDefault: false,
        segmentSources: [s1, s2, s3],
        conditions: [{ field: 'contact.jobTitle', operator: 'LIKE', value: '%engineer%' }],
        groupedCondition: { operator: 'NOT', conditions: [{ field: 'contact.firstName', operator: '==', value: 'Cid' }] },
      }),
    ).toEqual(['Ann', 'Dee']);
  });
});
