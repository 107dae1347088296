/**
 * The audit trail on the real stack (api/audit.ts, docs/PRIVACY.md "Audit trail"): a sequence of
 * writes by three keys of three kinds is listed with the right key ids, kinds, actions, resources
 * and statuses; the trail holds none of the person's data (a scan of both tables); UPDATE, DELETE
 * and TRUNCATE are refused to the application's role and to the table owner; filters and keyset
 * pagination behave like the rest of the API; another workspace sees nothing.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { hashKey } from '../../infra/keyGeneration.js';
import { inWorkspaceScope } from '../../db/tenancy.js';
import type { NewWorkspace } from '../../db/workspaces.js';

let app: TestApp;
let ws: NewWorkspace;
const keys = {} as Record<'workspace' | 'user' | 'session', { key: string; id: string }>;
const tag = randomBytes(5).toString('hex');
const person = { first: `Audra${tag}`, email: `audra.${tag}@audit.example`, profile: `https://pronet.com/in/audra-${tag}` };
let contactId: string;
let erasureJobId: string;
let sourceId: string;
const ids = {} as { live: string };

const keyId = async (key: string) => (await app.pool.query<{ id: string }>(`select id from api_keys where key_hash = $1`, [hashKey(key)])).rows[0]!.id;
const trail = (query = '', key = keys.workspace.key) => app.http('GET', `/audit-events${query}`, { apiKey: key });

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'inline' });
  ws = await app.createWorkspace({ credits: 10 });
  keys.workspace = { key: ws.apiKey, id: await keyId(ws.apiKey) };
  for (const kind of ['user', 'session'] as const) {
    const key = await app.createApiKey(ws.workspaceId, kind);
    keys[kind] = { key, id: await keyId(key) };
  }

  // The sequence: each write by a named key.
  const src = await app.http('POST', '/sources', { apiKey: keys.workspace.key, body: { sourceType: 'pronetInbound', sourceIdentifier: `https://pronet.com/in/owner-${tag}`, sourceMeta: {} } });
  expect(src.status, JSON.stringify(src.body)).toBe(200);
  sourceId = src.body.data.id;
  const created = await app.http('POST', `/contacts/${sourceId}`, {
    apiKey: keys.user.key,
    body: { 'contact.pronet': person.profile, 'contact.firstName': person.first, 'contact.emails': [person.email] },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  contactId = created.body.data.id;
  const patched = await app.http('PATCH', `/contacts/${contactId}`, { apiKey: keys.session.key, body: { lastName: `Surname${tag}` } });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  // A write refused by the handler is recorded with its status; one refused by validation is not recorded.
  const missing = await app.http('PATCH', '/contacts/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a', { apiKey: keys.session.key, body: { lastName: 'X' } });
  expect(missing.status).toBe(404);
  const invalid = await app.http('PATCH', `/contacts/${contactId}`, { apiKey: keys.session.key, body: { noSuchField: person.email } });
  expect(invalid.status).toBe(400);
  const suppressed = await app.http('POST', '/privacy/suppressions', { apiKey: keys.user.key, body: { emails: [`other.${tag}@audit.example`] } });
  expect(suppressed.status, JSON.stringify(suppressed.body)).toBe(201);
  const erasure = await app.http('POST', '/privacy/erasure-requests', { apiKey: keys.workspace.key, body: { emails: [person.email] } });
  expect(erasure.status, JSON.stringify(erasure.body)).toBe(202);
  erasureJobId = erasure.body.jobId;
  expect((await app.waitForJob(erasureJobId, ws.apiKey)).jobStatus).toBe('completed');
}, 120_000);
afterAll(async () => {
  await app?.close();
});

describe('audit trail', () => {
  it('lists every write with its key id and kind, action, resource and status, newest first', async () => {
    const r = await trail();
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const got = (r.body.data as any[]).map((e) => [e.actor.kind, e.actor.apiKeyId, e.action, e.resource.type, e.resource.id, e.status]);
    expect(got).toEqual([
      ['workspace', keys.workspace.id, 'erasure.request', 'erasureRequest', erasureJobId, 202],
      ['user', keys.user.id, 'suppression.add', 'suppression', null, 201],
      ['session', keys.session.id, 'contact.update', 'contact', '01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a', 404],
      ['session', keys.session.id, 'contact.update', 'contact', contactId, 200],
      ['user', keys.user.id, 'contact.upsert', 'contact', contactId, 200],
      ['workspace', keys.workspace.id, 'source.create', 'source', sourceId, 200],
    ]);
    expect(r.body.meta).toEqual({ totalRecords: 6, previousToken: '', nextToken: '' });
    for (const e of r.body.data) {
      expect(Date.parse(e.occurredAt)).toBeGreaterThan(Date.now() - 120_000);
      expect(e.requestId).toEqual(expect.any(String));
    }
  });

  it('holds none of the person\'s data (scan of both tables)', async () => {
    const rows = await app.pool.query<{ t: string }>(
      `select row_to_json(e)::text as t from audit_events e where workspace_id = $1
       union all select row_to_json(o)::text from audit_outcomes o where workspace_id = $1`,
      [ws.workspaceId],
    );
    expect(rows.rows.length).toBe(12);
    const text = rows.rows.map((r) => r.t.toLowerCase()).join('\n');
    for (const needle of [person.email, person.first, person.profile, `audra-${tag}`, `surname${tag}`, `other.${tag}`, `owner-${tag}`]) expect(text).not.toContain(needle.toLowerCase());
  });

  it('refuses UPDATE, DELETE and TRUNCATE to the application role and to the owner', async () => {
    for (const table of ['audit_events', 'audit_outcomes']) {
      // The API's own pool: row-level security admits the workspace's rows, the grants refuse the change.
      await inWorkspaceScope(ws.workspaceId, async () => {
        await expect(app.deps.pool.query(`update ${table} set workspace_id = workspace_id`)).rejects.toMatchObject({ code: '42501' });
        await expect(app.deps.pool.query(`delete from ${table}`)).rejects.toMatchObject({ code: '42501' });
        await expect(app.deps.pool.query(`truncate ${table}`)).rejects.toMatchObject({ code: '42501' });
      });
      // The owner (who bypasses grants): the trigger refuses.
      await expect(app.pool.query(`update ${table} set workspace_id = workspace_id where workspace_id = $1`, [ws.workspaceId])).rejects.toThrow(/append-only/);
      await expect(app.pool.query(`delete from ${table} where workspace_id = $1`, [ws.workspaceId])).rejects.toThrow(/append-only/);
      await expect(app.pool.query(`truncate ${table} cascade`)).rejects.toThrow(/append-only/);
    }
    const count = await app.pool.query(`select count(*)::int as n from audit_events where workspace_id = $1`, [ws.workspaceId]);
    expect(count.rows[0].n).toBe(6);
  });

  it('filters by key, action, resource and time range', async () => {
    const ids = async (q: string) => {
      const r = await trail(q);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.data as any[]).map((e) => `${e.action}:${e.status}`);
    };
    expect(await ids(`?actorKeyId=${keys.session.id}`)).toEqual(['contact.update:404', 'contact.update:200']);
    expect(await ids(`?action=contact.upsert`)).toEqual(['contact.upsert:200']);
    expect(await ids(`?resourceType=contact&resourceId=${contactId}`)).toEqual(['contact.update:200', 'contact.upsert:200']);
    // A resource id known from the response only (the erasure request) is found too.
    expect(await ids(`?resourceId=${erasureJobId}`)).toEqual(['erasure.request:202']);
    const all = (await trail()).body.data as any[];
    const upsertAt = all.find((e) => e.action === 'contact.upsert').occurredAt;
    const updateAt = all.find((e) => e.action === 'contact.update' && e.status === 200).occurredAt;
    expect(await ids(`?since=${upsertAt}&until=${new Date(Date.parse(updateAt) + 1).toISOString()}`)).toEqual(
      all.filter((e) => e.occurredAt >= upsertAt && e.occurredAt <= updateAt).map((e) => `${e.action}:${e.status}`),
    );
    expect(await ids(`?until=1970-01-01T00:00:00.000Z`)).toEqual([]);
    const bad = await trail('?actorKeyId=someone@example.com');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('validation_failed');
  });

  it('pages forward and back with tokens bound to the filters', async () => {
    const all = ((await trail()).body.data as any[]).map((e) => e.id);
    const p1 = await trail('?limit=4');
    expect(p1.body.data.map((e: any) => e.id)).toEqual(all.slice(0, 4));
    expect(p1.body.meta).toMatchObject({ totalRecords: 6, previousToken: '' });
    const p2 = await trail(`?limit=4&paginationToken=${p1.body.meta.nextToken}`);
    expect(p2.body.data.map((e: any) => e.id)).toEqual(all.slice(4));
    expect(p2.body.meta.nextToken).toBe('');
    const back = await trail(`?limit=4&paginationToken=${p2.body.meta.previousToken}`);
    expect(back.body.data.map((e: any) => e.id)).toEqual(all.slice(0, 4));
    const other = await trail(`?limit=4&action=contact.update&paginationToken=${p1.body.meta.nextToken}`);
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe('invalid_pagination_token');
  });

  it('shows a workspace its own trail only', async () => {
    const other = await app.createWorkspace();
    const r = await trail('', other.apiKey);
    expect(r.status).toBe(200);
    // Its only entry would be its own; it has made no write.
    expect(r.body).toEqual({ data: [], meta: { totalRecords: 0, previousToken: '', nextToken: '' } });
    expect((await trail(`?resourceId=${contactId}`, other.apiKey)).body.data).toEqual([]);
  });

  // Last: these add events of their own.
  it('a write whose outcome cannot be recorded still succeeds; one whose event cannot be recorded does not run', async () => {
    const name = async () => (await app.pool.query<{ last_name: string }>(`select last_name from contacts where id = $1`, [ids.live])).rows[0]!.last_name;
    const live = await app.http('POST', `/contacts/${sourceId}`, { apiKey: keys.user.key, body: { 'contact.pronet': `https://pronet.com/in/live-${tag}`, 'contact.firstName': 'Live' } });
    expect(live.status, JSON.stringify(live.body)).toBe(200);
    ids.live = live.body.data.id;

    // Outcomes refused by the database: the write is answered 200 and kept; its event says status null.
    await app.pool.query(`alter table audit_outcomes add constraint refuse_all check (status < 0) not valid`);
    try {
      const r = await app.http('PATCH', `/contacts/${ids.live}`, { apiKey: keys.user.key, body: { lastName: 'Kept' } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    } finally {
      await app.pool.query(`alter table audit_outcomes drop constraint refuse_all`);
    }
    expect(await name()).toBe('Kept');
    const events = (await trail(`?resourceId=${ids.live}&action=contact.update`)).body.data;
    expect(events.map((e: any) => e.status)).toEqual([null]);

    // Events refused: the request fails before its handler, nothing is written.
    await app.pool.query(`alter table audit_events add constraint refuse_all check (action = '') not valid`);
    try {
      const r = await app.http('PATCH', `/contacts/${ids.live}`, { apiKey: keys.user.key, body: { lastName: 'Lost' } });
      expect(r.status).toBe(500);
    } finally {
      await app.pool.query(`alter table audit_events drop constraint refuse_all`);
    }
    expect(await name()).toBe('Kept');
  });
});
