/**
 * Issue 12, input rules (items 6–11, 13): what the contract accepts is accepted, what it refuses
 * is a 400 naming the field, through HTTP on the real stack.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import type { NewWorkspace } from '../../db/workspaces.js';
import { startTestApp, type TestApp } from '../harness.js';

let app: TestApp;
let ws: NewWorkspace;

beforeAll(async () => {
  app = await startTestApp();
  ws = await app.createWorkspace({ plan: 'enterprise', credits: 1000 });
});
afterAll(() => app?.close());

const post = (path: string, body: unknown, headers?: Record<string, string>) => app.http('POST', path, { apiKey: ws.apiKey, body, headers });

function expect400(res: { status: number; body: any }, path: string, message?: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  const detail = (res.body.error.details ?? []).find((d: { path: string }) => d.path === path);
  expect(detail, JSON.stringify(res.body.error)).toBeDefined();
  if (message) expect(detail.message).toMatch(message);
}

async function createSource(body: Record<string, unknown>): Promise<string> {
  const r = await post('/sources', body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.id;
}

describe('7: pull-contacts-from-source numberOfPastDaysToSync', () => {
  it('accepts any whole number of days 1–90 and refuses 0 and 91', async () => {
    const id = await createSource({ sourceType: 'pronetPost', sourceIdentifier: `https://www.pronet.com/posts/days-${randomBytes(3).toString('hex')}` });
    for (const days of [2, 14, 89]) {
      const r = await post(`/sources/pull-contacts-from-source/${id}`, { numberOfPastDaysToSync: days });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      const job = await app.waitForJob(r.body.jobId, ws.apiKey, 60_000);
      expect(job.jobResponsePayload.numberOfPastDaysToSync).toBe(days);
    }
    expect400(await post(`/sources/pull-contacts-from-source/${id}`, { numberOfPastDaysToSync: 0 }), '/numberOfPastDaysToSync');
    expect400(await post(`/sources/pull-contacts-from-source/${id}`, { numberOfPastDaysToSync: 91 }), '/numberOfPastDaysToSync');
    expect400(await post(`/sources/pull-contacts-from-source/${id}`, { numberOfPastDaysToSync: 2.5 }), '/numberOfPastDaysToSync');
    const rf = await app.http('PATCH', `/sources/${id}`, { apiKey: ws.apiKey, body: { runFrequency: { numberOfPastDaysToSync: '3', periodicInterval: '1d' } } });
    expect(rf.status, JSON.stringify(rf.body)).toBe(200);
    expect(rf.body.data.attributes.runFrequency.numberOfPastDaysToSync).toBe('3');
    const bad = await app.http('PATCH', `/sources/${id}`, { apiKey: ws.apiKey, body: { runFrequency: { numberOfPastDaysToSync: '91', periodicInterval: '1d' } } });
    expect400(bad, '/runFrequency/numberOfPastDaysToSync');
    // the Schedule the first PATCH created lives on the shared Temporal server: remove it again
    expect((await app.http('PATCH', `/sources/${id}`, { apiKey: ws.apiKey, body: { runFrequency: null } })).status).toBe(200);
  });
});

describe('8: importFromWebhook without a field mapping', () => {
  it('is created, takes rows keyed by catalog paths (nested objects flattened) and names unknown keys', async () => {
    const sourceId = await createSource({ sourceType: 'importFromWebhook', sourceMeta: {} });
    const email = `nested-${randomBytes(3).toString('hex')}@acme.example`;
    const one = await post(`/contacts/${sourceId}`, { contact: { firstName: 'Nia', lastName: 'Nested', workEmail: email }, company: { companyName: 'Nestco' } });
    expect(one.status, JSON.stringify(one.body)).toBe(200);
    expect(one.body.data).toMatchObject({ firstName: 'Nia', lastName: 'Nested', emails: [email], company: { companyName: 'Nestco' } });

    const unknown = await post(`/contacts/${sourceId}`, { contact: { firstName: 'X', shoeSize: 44 } });
    expect400(unknown, '/contact/shoeSize', /unknown field contact\.shoeSize/);
    const twice = await post(`/contacts/${sourceId}`, { 'contact.firstName': 'A', contact: { firstName: 'B' } });
    expect400(twice, '/contact/firstName', /twice/);

    const bulkUnknown = await post(`/contacts/${sourceId}/bulk-upsert-contacts`, { contactsData: [{ contact: { lastName: 'Ok' } }, { person: { name: 'x' } }] });
    expect400(bulkUnknown, '/contactsData/1/person/name', /unknown field person\.name/);
    const bulk = await post(`/contacts/${sourceId}/bulk-upsert-contacts`, {
      contactsData: [{ contact: { firstName: 'Bo', lastName: 'Bulk', workEmail: `b-${email}` } }, { 'contact.firstName': 'Flat', 'contact.lastName': 'Row' }],
    });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(202);
    const job = await app.waitForJob(bulk.body.jobId, ws.apiKey, 60_000);
    expect(job.jobStatus).toBe('completed');
    const names = await app.pool.query(`select full_name from contacts c join contact_sources cs on cs.contact_id = c.id where cs.source_id = $1 order by full_name`, [sourceId]);
    expect(names.rows.map((r) => r.full_name)).toEqual(['Bo Bulk', 'Flat Row', 'Nia Nested']);
  });

  it('still translates through a mapping when one is given, nested columns included', async () => {
    const sourceId = await createSource({
      sourceType: 'importFromWebhook',
      sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'person.first', targetFieldName: 'contact.firstName' }, { sourceFieldName: 'person.last', targetFieldName: 'contact.lastName' }] } },
    });
    const r = await post(`/contacts/${sourceId}`, { person: { first: 'Map', last: 'Ped' }, ignored: { x: 1 } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toMatchObject({ firstName: 'Map', lastName: 'Ped' });
  });
});

describe('9: enrichment lookups by name alone, and names beside pronet', () => {
  it('accepts them; a lookup that finds nothing ends not_found at no charge', async () => {
    const w = await app.createWorkspace({ credits: 50 });
    const tag = randomBytes(4).toString('hex');
    const fullName = `Unique Nameonly ${tag}`;
    await app.pool.query(`insert into ds_people (id, member_pronet_url, member_full_name, member_emails) values ($1, $2, $3, $4)`, [
      uuidv7(),
      `pronet.example/in/nameonly-${tag}`,
      fullName,
      JSON.stringify([{ email: `nameonly-${tag}@acme.example`, status: 'valid' }]),
    ]);
    const enrich = async (body: Record<string, unknown>) => {
      const r = await app.http('POST', '/contacts/unified-data-api', { apiKey: w.apiKey, body });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      return app.waitForJob(r.body.jobId, w.apiKey, 60_000);
    };
    const byName = await enrich({ fields: ['emails'], fullName: fullName.toLowerCase() });
    expect(byName.jobStatus).toBe('completed');
    expect(byName.jobResponsePayload.emails).toEqual([{ email: `nameonly-${tag}@acme.example`, status: 'valid', provider: 'dataset' }]);
    expect(byName.jobResponsePayload.creditsCharged).toBe(4);

    const nobody = await enrich({ fields: ['emails'], firstName: 'Nobody', lastName: `Known-${tag}` });
    expect(nobody.jobResponsePayload.slices.emails).toMatchObject({ status: 'not_found', credits: 0 });
    expect(nobody.jobResponsePayload.creditsCharged).toBe(0);

    const beside = await enrich({ fields: ['basic_contact_data', 'emails'], pronet: `https://pronet.example/in/nameonly-${tag}`, fullName, companyWebsite: 'acme.example' });
    expect(beside.jobStatus).toBe('completed');
    expect(beside.jobResponsePayload.contact).toMatchObject({ fullName });
    expect(beside.jobResponsePayload.creditsCharged).toBe(1 + 4);

    const none = await enrich({ fields: ['basic_company_data'], pronet: `https://pronet.example/in/nobody-${tag}`, firstName: 'No', lastName: 'Body' });
    expect(none.jobResponsePayload.slices.basic_company_data).toMatchObject({ status: 'not_found', credits: 0 });
    // 4 + 5 charged; every hold released.
    expect((await app.http('GET', '/credits/balance', { apiKey: w.apiKey })).body.data.balance).toBe(50 - 9);
  });
});

describe('10: companyHeadcount is a <min>-<max> range on every write path', () => {
  it('refuses anything else with a 400 naming the field (upsert, bulk upsert, PATCH)', async () => {
    const sourceId = await createSource({ sourceType: 'importFromWebhook', sourceMeta: {} });
    const base = { 'contact.firstName': 'Hedda', 'contact.lastName': `Count-${randomBytes(3).toString('hex')}`, 'company.companyName': 'Countco' };
    expect400(await post(`/contacts/${sourceId}`, { ...base, 'company.companyHeadcount': 'lots' }), '/company.companyHeadcount', /<min>-<max>/);
    expect400(await post(`/contacts/${sourceId}`, { ...base, 'company.companyHeadcount': '200-51' }), '/company.companyHeadcount', /min/);
    const ok = await post(`/contacts/${sourceId}`, { ...base, 'company.companyHeadcount': '51-200' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.data.company.companyHeadcount).toBe('51-200');
    const id = ok.body.data.id;

    expect400(await app.http('PATCH', `/contacts/${id}`, { apiKey: ws.apiKey, body: { company: { companyHeadcount: 'about 50' } } }), '/company/companyHeadcount', /<min>-<max>/);
    const patched = await app.http('PATCH', `/contacts/${id}`, { apiKey: ws.apiKey, body: { company: { companyName: `Countco ${randomBytes(3).toString('hex')}`, companyHeadcount: '11-50' } } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.data.company.companyHeadcount).toBe('11-50');

    const bulk = await post(`/contacts/${sourceId}/bulk-upsert-contacts`, {
      contactsData: [{ ...base, 'contact.lastName': 'Good', 'company.companyHeadcount': '1-10' }, { ...base, 'contact.lastName': 'Bad', 'company.companyHeadcount': '10+' }],
    });
    expect(bulk.status, JSON.stringify(bulk.body)).toBe(202);
    const job = await app.waitForJob(bulk.body.jobId, ws.apiKey, 60_000);
    expect(JSON.stringify(job.jobResponsePayload.errors)).toContain('/contactsData/1/company.companyHeadcount');
    const stored = await app.pool.query(`select distinct company_headcount from companies where workspace_id = $1 and company_name = 'Countco'`, [ws.workspaceId]);
    expect(stored.rows.map((r) => r.company_headcount).sort()).toEqual(['1-10']);
  });
});

describe('11: social-listening sources carry the display fields', () => {
  it('fills them from the source type at creation and the subject name from the first pull; client values stay', async () => {
    const tag = randomBytes(4).toString('hex');
    await app.pool.query(`insert into ds_people (id, member_pronet_url, member_full_name) values ($1, $2, $3)`, [uuidv7(), `pronet.com/in/owner-${tag}`, `Owen Owner ${tag}`]);
    const id = await createSource({ sourceType: 'pronetInbound', sourceIdentifier: `https://www.pronet.com/in/owner-${tag}/` });
    const read = async (sid: string) => (await app.http('GET', `/sources/${sid}`, { apiKey: ws.apiKey })).body.data.attributes.sourceMeta;
    // issue 27 item 15: profileImageUrl is there too (null until a pull learns it)
    expect(await read(id)).toEqual({ platformName: 'pronet', interactionType: 'inbound engagement', socialHandle: `owner-${tag}`, socialName: `owner-${tag}`, profileImageUrl: null });
    const pull = await post(`/sources/pull-contacts-from-source/${id}`, {});
    expect(pull.status).toBe(202);
    expect((await app.waitForJob(pull.body.jobId, ws.apiKey, 60_000)).jobStatus).toBe('completed');
    expect(await read(id)).toMatchObject({ socialName: `Owen Owner ${tag}`, socialHandle: `owner-${tag}` });

    const named = await createSource({ sourceType: 'pronetPost', sourceIdentifier: `https://www.pronet.com/posts/p-${tag}`, sourceMeta: { socialName: 'My post', platformName: 'LinkedIn' } });
    expect(await read(named)).toEqual({ socialName: 'My post', platformName: 'LinkedIn', interactionType: 'post engagement', socialHandle: `p-${tag}`, profileImageUrl: null });
    const kw = await createSource({ sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: `series-a-${tag}` } });
    expect(await read(kw)).toMatchObject({ keyword: `series-a-${tag}`, socialName: `series-a-${tag}`, socialHandle: `series-a-${tag}`, platformName: 'pronet', interactionType: 'keyword posts', profileImageUrl: null });
    const withImage = await createSource({ sourceType: 'pronetPost', sourceIdentifier: `https://www.pronet.com/posts/q-${tag}`, sourceMeta: { profileImageUrl: 'https://img.example/q.png' } });
    expect((await read(withImage)).profileImageUrl).toBe('https://img.example/q.png');
    // and in lists, like every other display field
    const listed = await post('/sources/filter-sources/pronetPost', {});
    for (const src of listed.body.data) expect(Object.keys(src.attributes.sourceMeta)).toEqual(expect.arrayContaining(['socialName', 'socialHandle', 'platformName', 'interactionType', 'profileImageUrl']));
  });
});

describe('13: Idempotency-Key on media upload and reposting', () => {
  const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
  const upload = (bytes: Buffer, key: string, boundaryName = 'a.gif') => {
    const fd = new FormData();
    fd.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/gif' }), boundaryName);
    return app.http('POST', '/v1/media/upload', { apiKey: ws.apiKey, rawBody: fd, headers: { 'idempotency-key': key } });
  };

  it('replays an upload by key + file hash, stores one object, and refuses the key for another file', async () => {
    const key = `up-${randomBytes(4).toString('hex')}`;
    const first = await upload(GIF, key);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // Another multipart framing (boundary, part file name) of the same bytes is the same request.
    const again = await upload(GIF, key, 'renamed.gif');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.fileName).toBe(first.body.fileName);
    // "A replay answers the first response verbatim": the same bytes, key order included.
    expect(again.text).toBe(first.text);
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    const rows = await app.pool.query(`select file_name from media_objects where workspace_id = $1`, [ws.workspaceId]);
    expect(rows.rows.map((r) => r.file_name)).toEqual([first.body.fileName]);
    const objects: string[] = [];
    for await (const o of app.deps.storage.client.listObjectsV2(app.deps.storage.bucket, `${ws.workspaceId}/`, true)) objects.push((o as { name: string }).name);
    expect(objects).toEqual([first.body.fileName]);

    const other = Buffer.concat([GIF, Buffer.from([0])]);
    const reused = await upload(other, key);
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
  });

  it('replays a reposting configuration by key', async () => {
    const connect = async (name: string) =>
      (await post('/integrations', { provider: 'pronet', name, externalAccountId: `ext-${name}-${randomBytes(3).toString('hex')}`, credentials: { accessToken: 't' } })).body.data.id as string;
    const parent = await connect('parent');
    const target = await connect('target');
    const p = (await post('/v1/posts', { providerId: parent, content: 'repost me' })).body.data;
    const key = `rp-${randomBytes(4).toString('hex')}`;
    const body = { reposting: { enable: true, reposts: [{ providerId: target, scheduleInSecs: 300 }] } };
    const first = await post(`/v1/posts/${p.id}/reposting`, body, { 'idempotency-key': key });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const again = await post(`/v1/posts/${p.id}/reposting`, body, { 'idempotency-key': key });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.text).toBe(first.text);
    const other = await post(`/v1/posts/${p.id}/reposting`, { reposting: { enable: false, reposts: [] } }, { 'idempotency-key': key });
    expect(other.status).toBe(422);
  });
});
