/**
 * Contacts and the contact schema through HTTP against the real stack: single and bulk upserts
 * with identity resolution, reads, partial updates, soft delete, bulk fetch, filters with
 * `fields` and keyset pages, segment membership, unique values, custom fields and options,
 * plus every 400/401/404 and the cross-workspace 404s.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOneValidationDetail, startTestApp, type TestApp } from '../harness.js';
import { startJob } from '../../api/jobs.js';
import { stageRows } from '../../db/contactStaging.js';
import { inWorkspaceScope } from '../../db/tenancy.js';
import { hash53, unpackHashes } from '../../domain/hash53.js';

let app: TestApp;
let key: string;
let otherKey: string;
let workspaceId: string;
let listenSource: string; // pronetInbound: rows keyed by catalog paths
let importSource: string; // importFromWebhook with a field mapping
let otherSource: string; // of the other workspace

const post = (path: string, body: unknown, k = key, headers?: Record<string, string>) => app.http('POST', path, { apiKey: k, body, headers });
const patch = (path: string, body: unknown, k = key) => app.http('PATCH', path, { apiKey: k, body });
const get = (path: string, k = key) => app.http('GET', path, { apiKey: k });
const del = (path: string, k = key) => app.http('DELETE', path, { apiKey: k });

function expect400(res: { status: number; body: any }, path: string, message?: RegExp) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toMatch(/validation_failed|invalid_pagination_token/);
  expect(res.body.error.details.map((d: any) => d.path)).toContain(path);
  if (message) expect(JSON.stringify(res.body.error.details)).toMatch(message);
}

async function createSource(body: unknown, k = key): Promise<string> {
  const res = await post('/sources', body, k);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.id;
}

const MAPPING = [
  { sourceFieldName: 'First Name', targetFieldName: 'contact.firstName' },
  { sourceFieldName: 'Last Name', targetFieldName: 'contact.lastName' },
  { sourceFieldName: 'Email', targetFieldName: 'contact.workEmail' },
  { sourceFieldName: 'Profile', targetFieldName: 'contact.pronet' },
  { sourceFieldName: 'Title', targetFieldName: 'contact.jobTitle' },
  { sourceFieldName: 'Company', targetFieldName: 'company.companyName' },
  { sourceFieldName: 'Website', targetFieldName: 'company.companyWebsite' },
];

beforeAll(async () => {
  app = await startTestApp();
  const ws = await app.createWorkspace();
  key = ws.apiKey;
  workspaceId = ws.workspaceId;
  otherKey = (await app.createWorkspace()).apiKey;
  listenSource = await createSource({ sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/owner-one', sourceMeta: {} });
  importSource = await createSource({ sourceType: 'importFromWebhook', sourceIdentifier: 'crm-export', sourceMeta: { config: { fieldMapping: MAPPING } } });
  otherSource = await createSource({ sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/owner-two', sourceMeta: {} }, otherKey);
});
afterAll(() => app?.close());

describe('authentication', () => {
  it.each([
    ['GET', '/schema/contact'],
    ['POST', '/schema/contact/custom-fields'],
    ['GET', '/schema/contact/options?field=contact.firstName'],
    ['POST', '/contacts/bulk-fetch'],
    ['POST', '/contacts/filter-contacts'],
    ['POST', '/contacts/unique-values'],
    ['POST', '/contacts/by-segment/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a'],
    ['GET', '/contacts/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a'],
    ['PATCH', '/contacts/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a'],
    ['DELETE', '/contacts/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a'],
    ['POST', '/contacts/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a'],
    ['POST', '/contacts/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a/bulk-upsert-contacts'],
  ])('%s %s without a key is 401', async (method, path) => {
    const res = await app.http(method, path, { body: method === 'GET' || method === 'DELETE' ? undefined : {} });
    expect(res.status).toBe(401);
    const bad = await app.http(method, path, { apiKey: 'nope', body: method === 'GET' || method === 'DELETE' ? undefined : {} });
    expect(bad.status).toBe(401);
  });
});

describe('schema', () => {
  it('lists the built-in paths with access paths, types and labels', async () => {
    const res = await get('/schema/contact');
    expect(res.status).toBe(200);
    const paths = res.body.data.map((f: any) => f.writeAccessPath);
    for (const p of [
      'contact.firstName', 'contact.lastName', 'contact.fullName', 'contact.jobTitle', 'contact.workEmail', 'contact.emails',
      'contact.pronet', 'contact.createdAt', 'contact.updatedAt', 'company.companyName', 'company.companyWebsite',
      'company.companyIndustry', 'company.companyHeadcount',
    ])
      expect(paths).toContain(p);
    expect(res.body.data.find((f: any) => f.writeAccessPath === 'company.companyName')).toMatchObject({
      readAccessPath: 'company.companyName', type: 'string', label: 'Company name', filteringSupported: true, writable: true,
    });
    expect(res.body.data.find((f: any) => f.writeAccessPath === 'contact.emails').type).toBe('multi');
    expect(res.body.meta.operators.multi).toEqual(['IN', 'ALL', 'NOT IN', 'IS EMPTY', 'IS NOT EMPTY']);
  });

  it('creates custom fields, lists them for this workspace only, and rejects bad ones', async () => {
    const res = await post('/schema/contact/custom-fields', { label: 'Score', type: 'number' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ type: 'number', label: 'Score', custom: true, writable: true });
    expect(res.body.data.writeAccessPath).toBe(`contact.customFields.${res.body.data.writeAccessPath.split('.')[2]}`);
    expect(res.body.data.readAccessPath).toBe(`customFields.${res.body.data.writeAccessPath.split('.')[2]}`);
    const mine = (await get('/schema/contact')).body.data.map((f: any) => f.writeAccessPath);
    expect(mine).toContain(res.body.data.writeAccessPath);
    const theirs = (await get('/schema/contact', otherKey)).body.data.map((f: any) => f.writeAccessPath);
    expect(theirs).not.toContain(res.body.data.writeAccessPath);
    expect((await post('/schema/contact/custom-fields', { label: 'score', type: 'string' })).status).toBe(409);
    expect400(await post('/schema/contact/custom-fields', { label: 'X', type: 'color' }), '/type');
    expect400(await post('/schema/contact/custom-fields', { label: 'Flag', type: 'boolean', options: [{ label: 'a', value: 'a' }] }), '/options');
    expect400(await post('/schema/contact/custom-fields', { label: 'Y', type: 'string', extra: 1 }), '/extra');
  });

  it('refuses options the field type does not take, naming the pointer', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ label: 'Flag opt', type: 'boolean', options: [{ label: 'a', value: 'a' }] }, '/options', /string"?, "?number"? (and|or) "?multi/],
      [{ label: 'Date opt', type: 'date', options: [] }, '/options', /string"?, "?number"? (and|or) "?multi/],
      [{ label: 'Num opt', type: 'number', options: [{ label: 'a', value: 'a' }] }, '/options/0/value', /number/],
      [{ label: 'Num opt', type: 'number', options: [{ label: 'a', value: true }] }, '/options/0/value', /number/],
      [{ label: 'Num opt', type: 'number', options: [{ label: 'a', value: 1e300 }] }, '/options/0/value', /<= 1000000000000000/],
      [{ label: 'Str opt', type: 'string', options: [{ label: 'a', value: 1 }] }, '/options/0/value', /string/],
      [{ label: 'Multi opt', type: 'multi', options: [{ label: 'a', value: 'x' }, { label: 'b', value: 2 }] }, '/options/1/value', /string/],
      [{ label: 'Str opt', type: 'string', options: [{ label: 'a', value: 'x'.repeat(501) }] }, '/options/0/value', /more than 500 characters/],
      [{ label: 'Str opt', type: 'string', options: [{ label: 'a', value: 'a', z: 1 }] }, '/options/0/z', /not a known property/],
      [{ label: 'Color', type: 'color' }, '/type', /"string", "number", "date", "boolean", "multi"/],
      [{ label: 'No type' }, '/type', /is required/],
    ];
    for (const [body, path, message] of cases) {
      expectOneValidationDetail(await post('/schema/contact/custom-fields', body), path, message, body);
    }
    // Each type still takes the options it allows.
    for (const [type, value] of [['number', 3], ['string', 'a'], ['multi', 'b']] as const) {
      const ok = await post('/schema/contact/custom-fields', { label: `Opt ok ${type}`, type, options: [{ label: 'v', value }] });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body.data.options).toEqual([{ label: 'v', value }]);
    }
  });

  it('answers options from a pick list or from present values', async () => {
    const tier = await post('/schema/contact/custom-fields', { label: 'Tier', type: 'string', options: [{ label: 'Gold', value: 'gold' }, { label: 'Silver', value: 'silver' }] });
    const res = await get(`/schema/contact/options?field=${tier.body.data.writeAccessPath}`);
    expect(res.body).toEqual({ data: [{ label: 'Gold', value: 'gold' }, { label: 'Silver', value: 'silver' }], meta: { source: 'definition' } });
    // a path outside the catalog is refused by the query schema, which names query parameters `/query/<name>`
    expect400(await get('/schema/contact/options?field=contact.nope'), '/query/field');
    expect((await get('/schema/contact/options')).status).toBe(400);
  });
});

describe('single upsert, identity resolution, read, update, delete', () => {
  let janeId: string;

  it('upserts a row keyed by catalog paths and keeps _ORIGIN_', async () => {
    const res = await post(`/contacts/${listenSource}`, {
      'contact.firstName': 'Jane',
      'contact.lastName': 'Doe',
      'contact.pronet': 'https://www.pronet.com/in/Jane-Doe/',
      'contact.workEmail': 'Jane@Acme.com',
      'contact.jobTitle': 'VP Sales',
      'company.companyName': 'Acme',
      'company.companyWebsite': 'https://www.acme.com/about',
      'company.companyIndustry': 'Software',
      'company.companyHeadcount': '51-200',
      _ORIGIN_: 'crm-sync',
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const c = res.body.data;
    janeId = c.id;
    expect(c).toMatchObject({
      firstName: 'Jane', lastName: 'Doe', fullName: 'Jane Doe', title: 'VP Sales', pronet: 'https://www.pronet.com/in/Jane-Doe/',
      emails: ['jane@acme.com'], workEmail: 'jane@acme.com', sources: [listenSource],
      company: { companyName: 'Acme', companyWebsite: 'https://www.acme.com/about', companyIndustry: 'Software', companyHeadcount: '51-200' },
      customFields: {},
    });
    expect(c.companies).toEqual([c.primaryCompanyId]);
    expect(c.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const origin = await app.pool.query(`select origin from contact_sources where contact_id = $1`, [c.id]);
    expect(origin.rows).toEqual([{ origin: 'crm-sync' }]);
  });

  it('matches the same person again by normalised profile URL, and through a second source by email', async () => {
    const again = await post(`/contacts/${listenSource}`, { 'contact.pronet': 'pronet.com/in/jane-doe', 'contact.jobTitle': 'CRO' });
    expect(again.body.data.id).toBe(janeId);
    expect(again.body.data.title).toBe('CRO');
    expect(again.body.data.firstName).toBe('Jane');
    const viaImport = await post(`/contacts/${importSource}`, { Email: 'JANE@acme.com', 'Last Name': 'Doe-Smith', Unmapped: 'ignored' });
    expect(viaImport.status, JSON.stringify(viaImport.body)).toBe(200);
    expect(viaImport.body.data.id).toBe(janeId);
    expect(viaImport.body.data.lastName).toBe('Doe-Smith');
    expect(viaImport.body.data.sources.sort()).toEqual([listenSource, importSource].sort());
    const n = await app.pool.query(`select count(*)::int as n from contacts where workspace_id = $1`, [workspaceId]);
    expect(n.rows[0].n).toBe(1);
  });

  it('matches a row without profile or email by (source, row key)', async () => {
    const a = await post(`/contacts/${listenSource}`, { 'contact.firstName': 'Nobody', _ROW_KEY_: 'row-77' });
    const b = await post(`/contacts/${listenSource}`, { 'contact.firstName': 'Nobody Renamed', _ROW_KEY_: 'row-77' });
    expect(b.body.data.id).toBe(a.body.data.id);
    expect(b.body.data.firstName).toBe('Nobody Renamed');
    const other = await post(`/contacts/${importSource}`, { 'First Name': 'Nobody', _ROW_KEY_: 'row-77' });
    expect(other.body.data.id).not.toBe(a.body.data.id);
  });

  it('rejects bad rows with 400 naming the key, and unknown or foreign sources with 404', async () => {
    expect400(await post(`/contacts/${listenSource}`, { 'contact.nope': 'x' }), '/contact.nope');
    expect400(await post(`/contacts/${listenSource}`, { 'contact.workEmail': 'not-an-email' }), '/contact.workEmail');
    expect400(await post(`/contacts/${listenSource}`, { 'contact.createdAt': '2026-01-01' }), '/contact.createdAt', /read-only/);
    expect400(await post(`/contacts/${importSource}`, { Email: 'bad' }), '/Email');
    expect400(await post(`/contacts/${listenSource}`, { _ORIGIN_: 'x' }), '/', /no value/);
    expect400(await post(`/contacts/${importSource}`, { Unmapped: 'only' }), '/', /no value/);
    expect((await post(`/contacts/${otherSource}`, { 'contact.firstName': 'X' })).status).toBe(404);
    expect((await post(`/contacts/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a`, { 'contact.firstName': 'X' })).status).toBe(404);
    expect((await post(`/contacts/not-a-uuid`, { 'contact.firstName': 'X' })).status).toBe(404);
  });

  it('reads a contact; other workspaces get 404', async () => {
    const res = await get(`/contacts/${janeId}`);
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(janeId);
    expect((await get(`/contacts/${janeId}`, otherKey)).status).toBe(404);
    expect((await get(`/contacts/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a`)).status).toBe(404);
    expect((await get(`/contacts/garbage`)).status).toBe(404);
  });

  it('patches only the given properties, type-checks custom fields, re-links the company', async () => {
    const score = (await post('/schema/contact/custom-fields', { label: 'Patch score', type: 'number' })).body.data.writeAccessPath.split('.')[2];
    const before = (await get(`/contacts/${janeId}`)).body.data;
    // Same website → the same company record, which a PATCH of a contact does not rename (409, nothing written).
    const renamed = await patch(`/contacts/${janeId}`, { firstName: 'Janet', company: { companyName: 'Acme Corp' } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(409);
    expect((await get(`/contacts/${janeId}`)).body.data).toEqual(before);
    const res = await patch(`/contacts/${janeId}`, { firstName: 'Janet', customFields: { [score]: '42' }, company: { companyWebsite: 'acme.com' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ firstName: 'Janet', lastName: before.lastName, title: before.title, emails: before.emails, customFields: { [score]: 42 } });
    expect(res.body.data.company).toEqual(before.company);
    expect(res.body.data.updatedAt >= before.updatedAt).toBe(true);
    const moved = await patch(`/contacts/${janeId}`, { company: { companyName: 'Globex', companyWebsite: 'globex.com' } });
    expect(moved.body.data.company.id).not.toBe(before.company.id);
    expect(moved.body.data.companies).toEqual([before.company.id, moved.body.data.company.id]);
    const cleared = await patch(`/contacts/${janeId}`, { customFields: { [score]: null }, title: null });
    expect(cleared.body.data.customFields[score]).toBeNull();
    expect(cleared.body.data.title).toBeNull();
    expect400(await patch(`/contacts/${janeId}`, { customFields: { [score]: 'many' } }), `/customFields/${score}`);
    expect400(await patch(`/contacts/${janeId}`, { customFields: { '01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a': 1 } }), '/customFields/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a');
    expect400(await patch(`/contacts/${janeId}`, { nickname: 'J' }), '/nickname');
    expect400(await patch(`/contacts/${janeId}`, { workEmail: 'nope' }), '/workEmail');
    expect((await patch(`/contacts/${janeId}`, { firstName: 'X' }, otherKey)).status).toBe(404);
    expect((await patch(`/contacts/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a`, { firstName: 'X' })).status).toBe(404);
  });

  it('a PATCH with company changes the contact it names and never the company record others share', async () => {
    // found by the contract review: the shared record was edited in place (other contacts changed, their updatedAt did not move)
    const row = (n: string) => ({ 'contact.pronet': `https://pronet.com/in/shared-${n}`, 'company.companyName': 'Sharedco', 'company.companyWebsite': 'sharedco.example', 'company.companyIndustry': 'Software' });
    const a = (await post(`/contacts/${listenSource}`, row('a'))).body.data;
    const b = (await post(`/contacts/${listenSource}`, row('b'))).body.data;
    expect(b.company.id).toBe(a.company.id);

    // A value the shared record does not have: a clear 409 naming the field, nothing written.
    for (const company of [{ companyIndustry: 'Retail' }, { companyName: 'Sharedco Renamed' }, { companyIndustry: null }]) {
      const res = await patch(`/contacts/${a.id}`, { company });
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body.error.code).toBe('company_conflict');
      expect(res.body.error.message).toContain(Object.keys(company)[0]);
    }
    expect((await get(`/contacts/${a.id}`)).body.data).toEqual(a);
    expect((await get(`/contacts/${b.id}`)).body.data).toEqual(b);

    // Another company: the contact is linked to a new record; the shared one and its other contact are as they were.
    const moved = await patch(`/contacts/${a.id}`, { company: { companyName: 'Ownco', companyWebsite: 'ownco.example' } });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.data.company).toMatchObject({ companyName: 'Ownco', companyWebsite: 'ownco.example', companyIndustry: null });
    expect(moved.body.data.company.id).not.toBe(a.company.id);
    expect((await get(`/contacts/${b.id}`)).body.data).toEqual(b);
    // Back to the shared one by its own values: linked, not rewritten.
    const back = await patch(`/contacts/${a.id}`, { company: { companyName: 'Sharedco', companyWebsite: 'sharedco.example' } });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.body.data.company).toEqual(b.company);
    expect((await get(`/contacts/${b.id}`)).body.data).toEqual(b);
  });

  it('a PATCH of firstName or lastName alone re-derives fullName; a fullName sent with them wins', async () => {
    // found by the contract review: fullName kept the old name
    const c = (await post(`/contacts/${listenSource}`, { 'contact.pronet': 'https://pronet.com/in/renamed-person', 'contact.firstName': 'Ann', 'contact.lastName': 'Lee' })).body.data;
    expect(c.fullName).toBe('Ann Lee');
    expect((await patch(`/contacts/${c.id}`, { firstName: 'Anna' })).body.data).toMatchObject({ firstName: 'Anna', lastName: 'Lee', fullName: 'Anna Lee' });
    expect((await patch(`/contacts/${c.id}`, { lastName: 'Li' })).body.data).toMatchObject({ firstName: 'Anna', lastName: 'Li', fullName: 'Anna Li' });
    expect((await patch(`/contacts/${c.id}`, { lastName: null })).body.data).toMatchObject({ firstName: 'Anna', lastName: null, fullName: 'Anna' });
    expect((await patch(`/contacts/${c.id}`, { firstName: 'Dr. Anna', fullName: 'Dr. Anna Li-Lee' })).body.data).toMatchObject({ firstName: 'Dr. Anna', fullName: 'Dr. Anna Li-Lee' });
    expect((await patch(`/contacts/${c.id}`, { title: 'CTO' })).body.data.fullName).toBe('Dr. Anna Li-Lee');
  });

  it('a PATCH of emails logs the removed and the added ones for ingests in flight', async () => {
    const c = (await post(`/contacts/${listenSource}`, { 'contact.pronet': 'https://pronet.com/in/relogged', 'contact.workEmail': 'old@relog.com' })).body.data;
    const ws = (await app.pool.query(`select workspace_id from contacts where id = $1`, [c.id])).rows[0].workspace_id;
    const before = (await app.pool.query(`select coalesce(max(seq), 0) as seq from contact_identity_log where workspace_id = $1`, [ws])).rows[0].seq;
    const res = await patch(`/contacts/${c.id}`, { emails: ['new@relog.com'] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const logged = await app.pool.query(`select email_hashes from contact_identity_log where workspace_id = $1 and seq > $2`, [ws, before]);
    expect(logged.rowCount).toBe(1);
    expect(new Set(unpackHashes(logged.rows[0].email_hashes))).toEqual(new Set([hash53('old@relog.com'), hash53('new@relog.com')]));
  });

  it('soft-deletes; deleted contacts are 404 and absent; an explicit single upsert revives them', async () => {
    const c = (await post(`/contacts/${listenSource}`, { 'contact.pronet': 'https://pronet.com/in/gone', 'contact.firstName': 'Gone' })).body.data;
    expect((await del(`/contacts/${c.id}`, otherKey)).status).toBe(404);
    const res = await del(`/contacts/${c.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { id: c.id, deleted: true } });
    expect((await del(`/contacts/${c.id}`)).status).toBe(404);
    expect((await get(`/contacts/${c.id}`)).status).toBe(404);
    expect((await patch(`/contacts/${c.id}`, { firstName: 'X' })).status).toBe(404);
    expect((await post('/contacts/bulk-fetch', { contactIds: [c.id] })).body.data).toEqual([]);
    const listed = await post('/contacts/filter-contacts', { fields: ['contact.firstName'], conditions: [{ field: 'contact.firstName', operator: '==', value: 'Gone' }] });
    expect(listed.body.data).toEqual([]);
    const back = await post(`/contacts/${listenSource}`, { 'contact.pronet': 'https://pronet.com/in/gone' });
    expect(back.body.data.id).toBe(c.id);
    expect((await get(`/contacts/${c.id}`)).status).toBe(200);
  });
});

describe('bulk fetch', () => {
  it('returns the workspace\'s contacts in request order; foreign, deleted and unknown ids are absent', async () => {
    const a = (await post(`/contacts/${listenSource}`, { 'contact.pronet': 'https://pronet.com/in/bf-a' })).body.data.id;
    const b = (await post(`/contacts/${listenSource}`, { 'contact.pronet': 'https://pronet.com/in/bf-b' })).body.data.id;
    const d = (await post(`/contacts/${listenSource}`, { 'contact.pronet': 'https://pronet.com/in/bf-d' })).body.data.id;
    await del(`/contacts/${d}`);
    const foreign = (await post(`/contacts/${otherSource}`, { 'contact.pronet': 'https://pronet.com/in/bf-a' }, otherKey)).body.data.id;
    const res = await post('/contacts/bulk-fetch', { contactIds: [b, foreign, a, d, 'junk', '01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a'] });
    expect(res.status).toBe(200);
    expect(res.body.data.map((c: any) => c.id)).toEqual([b, a]);
  });
  it('needs 1 to 100 ids', async () => {
    expect400(await post('/contacts/bulk-fetch', { contactIds: [] }), '/contactIds');
    expect400(await post('/contacts/bulk-fetch', { contactIds: Array.from({ length: 101 }, (_, i) => `id-${i}`) }), '/contactIds');
    expect400(await post('/contacts/bulk-fetch', {}), '/contactIds');
  });
});

describe('filter-contacts, pages, unique values', () => {
  let pageWs: { apiKey: string };
  beforeAll(async () => {
    pageWs = await app.createWorkspace();
    const src = await createSource({ sourceType: 'pronetInbound', sourceIdentifier: 'https://pronet.com/company/pages', sourceMeta: {} }, pageWs.apiKey);
    for (let i = 0; i < 7; i++)
      await post(`/contacts/${src}`, {
        'contact.pronet': `https://pronet.com/in/page-${i}`,
        'contact.firstName': `P${i}`,
        'contact.jobTitle': i % 2 ? 'Engineer' : 'Manager',
        'contact.emails': [`p${i}@x.com`, `alt${i}@y.com`],
        'company.companyName': i < 4 ? 'Initech' : 'Hooli',
      }, pageWs.apiKey);
  });

  it('projects `fields` into the contact shape with id', async () => {
    const res = await post('/contacts/filter-contacts', {
      fields: ['contact.firstName', 'company.companyName', 'contact.emails'],
      conditions: [{ field: 'contact.firstName', operator: '==', value: 'P1' }],
    }, pageWs.apiKey);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual([{ id: expect.any(String), firstName: 'P1', company: { companyName: 'Initech' }, emails: ['p1@x.com', 'alt1@y.com'] }]);
    expect(res.body.meta).toEqual({ totalRecords: 1, previousToken: '', nextToken: '' });
  });

  it('pages forward and back with keyset tokens bound to the query', async () => {
    const body = { fields: ['contact.firstName'], sort: [{ field: 'contact.firstName', direction: 'desc' }], limit: 3 };
    const p1 = await post('/contacts/filter-contacts', body, pageWs.apiKey);
    expect(p1.body.data.map((c: any) => c.firstName)).toEqual(['P6', 'P5', 'P4']);
    expect(p1.body.meta.totalRecords).toBe(7);
    expect(p1.body.meta.previousToken).toBe('');
    const p2 = await post('/contacts/filter-contacts', { ...body, paginationToken: p1.body.meta.nextToken }, pageWs.apiKey);
    expect(p2.body.data.map((c: any) => c.firstName)).toEqual(['P3', 'P2', 'P1']);
    const p3 = await post('/contacts/filter-contacts', { ...body, paginationToken: p2.body.meta.nextToken }, pageWs.apiKey);
    expect(p3.body.data.map((c: any) => c.firstName)).toEqual(['P0']);
    expect(p3.body.meta.nextToken).toBe('');
    const back = await post('/contacts/filter-contacts', { ...body, paginationToken: p3.body.meta.previousToken }, pageWs.apiKey);
    expect(back.body.data.map((c: any) => c.firstName)).toEqual(['P3', 'P2', 'P1']);
    const other = await post('/contacts/filter-contacts', { ...body, conditions: [{ field: 'contact.jobTitle', operator: '==', value: 'Engineer' }], paginationToken: p1.body.meta.nextToken }, pageWs.apiKey);
    expect400(other, '/paginationToken');
    expect400(await post('/contacts/filter-contacts', { ...body, paginationToken: 'forged.token' }, pageWs.apiKey), '/paginationToken');
    // Found by an outside client: another workspace's token was accepted (its boundary applied to
    // this workspace's rows). A token belongs to the workspace that got it.
    const foreign = await post('/contacts/filter-contacts', { ...body, paginationToken: p1.body.meta.nextToken }, otherKey);
    expect400(foreign, '/paginationToken');
    expect(foreign.body.error.code).toBe('invalid_pagination_token');
  });

  it('returns full contacts without `fields`', async () => {
    const res = await post('/contacts/filter-contacts', { conditions: [{ field: 'contact.firstName', operator: 'IN', value: ['P0', 'P2'] }] }, pageWs.apiKey);
    expect(res.body.data.map((c: any) => c.firstName)).toEqual(['P0', 'P2']);
    expect(res.body.data[0]).toHaveProperty('sources');
    expect(res.body.data[0]).toHaveProperty('company.companyName', 'Initech');
  });

  it('answers 400 naming the bad member', async () => {
    expect400(await post('/contacts/filter-contacts', { fields: ['contact.firstName', 'contact.shoeSize'] }, pageWs.apiKey), '/fields/1');
    expect400(await post('/contacts/filter-contacts', { conditions: [{ field: 'contact.emails', operator: 'LIKE', value: 'x' }] }, pageWs.apiKey), '/conditions/0/operator');
    expect400(
      await post('/contacts/filter-contacts', { groupedCondition: { operator: 'AND', conditions: [{ field: 'contact.firstName', operator: '==', value: 'a' }, { field: 'contact.createdAt', operator: '>', value: 'yesterday' }] } }, pageWs.apiKey),
      '/groupedCondition/conditions/1/value',
    );
    expect400(await post('/contacts/filter-contacts', { limit: 1001 }, pageWs.apiKey), '/limit');
    expect400(await post('/contacts/filter-contacts', { sort: [{ field: 'contact.emails' }] }, pageWs.apiKey), '/sort/0/field');
  });

  it('counts unique values, multi-value fields per element', async () => {
    const res = await post('/contacts/unique-values', { groupByField: 'company.companyName' }, pageWs.apiKey);
    expect(res.body.data).toEqual([{ value: 'Initech', count: 4 }, { value: 'Hooli', count: 3 }]);
    const filtered = await post('/contacts/unique-values', { groupByField: 'contact.jobTitle', conditions: [{ field: 'company.companyName', operator: '==', value: 'Hooli' }] }, pageWs.apiKey);
    expect(filtered.body.data).toEqual([{ value: 'Manager', count: 2 }, { value: 'Engineer', count: 1 }]);
    const multi = await post('/contacts/unique-values', { groupByField: 'contact.emails', limit: 2 }, pageWs.apiKey);
    expect(multi.body.data).toHaveLength(2);
    expect(multi.body.data[0].count).toBe(1);
    expect400(await post('/contacts/unique-values', { groupByField: 'contact.bogus' }, pageWs.apiKey), '/groupByField');
    const opts = await get('/schema/contact/options?field=contact.jobTitle&q=eng', pageWs.apiKey);
    expect(opts.body).toEqual({ data: [{ label: 'Engineer', value: 'Engineer' }], meta: { source: 'values' } });
  });
});

describe('by segment', () => {
  it('lists the default segment (everyone), a segment of sources + conditions, and 404s', async () => {
    const ws = await app.createWorkspace();
    const s1 = await createSource({ sourceType: 'pronetInbound', sourceIdentifier: 'https://pronet.com/in/seg-owner-1', sourceMeta: {} }, ws.apiKey);
    const s2 = await createSource({ sourceType: 'pronetInbound', sourceIdentifier: 'https://pronet.com/in/seg-owner-2', sourceMeta: {} }, ws.apiKey);
    const mk = (src: string, name: string, title: string) => post(`/contacts/${src}`, { 'contact.pronet': `https://pronet.com/in/${name}`, 'contact.firstName': name, 'contact.jobTitle': title }, ws.apiKey);
    await mk(s1, 'ann', 'CTO');
    await mk(s1, 'bob', 'Engineer');
    await mk(s2, 'cyd', 'CTO');
    const seg = await post('/segments', { name: 'CTOs of s1', segmentSources: [s1], conditions: [{ field: 'contact.jobTitle', operator: '==', value: 'CTO' }] }, ws.apiKey);
    expect(seg.status, JSON.stringify(seg.body)).toBe(200);
    const members = await post(`/contacts/by-segment/${seg.body.data.id}`, { fields: ['contact.firstName'] }, ws.apiKey);
    expect(members.status, JSON.stringify(members.body)).toBe(200);
    expect(members.body.data.map((c: any) => c.firstName)).toEqual(['ann']);
    const search = await get('/segments/search?q=', ws.apiKey);
    const def = search.body.data.find((s: any) => s.attributes.isDefault);
    const all = await post(`/contacts/by-segment/${def.id}`, { fields: ['contact.firstName'], conditions: [{ field: 'contact.jobTitle', operator: '==', value: 'CTO' }] }, ws.apiKey);
    expect(all.body.data.map((c: any) => c.firstName)).toEqual(['ann', 'cyd']);
    expect((await post(`/contacts/by-segment/${seg.body.data.id}`, { fields: ['contact.firstName'] })).status).toBe(404);
    expect((await post(`/contacts/by-segment/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a`, { fields: ['contact.firstName'] }, ws.apiKey)).status).toBe(404);
    expect400(await post(`/contacts/by-segment/${seg.body.data.id}`, {}, ws.apiKey), '/fields');
    // A token of one segment is no good for another.
    const p = await post(`/contacts/by-segment/${def.id}`, { fields: ['contact.firstName'], limit: 1 }, ws.apiKey);
    expect400(await post(`/contacts/by-segment/${seg.body.data.id}`, { fields: ['contact.firstName'], limit: 1, paginationToken: p.body.meta.nextToken }, ws.apiKey), '/paginationToken');
  });
});

describe('bulk upsert', () => {
  let hook: Server;
  let hookUrl: string;
  const received: { headers: IncomingMessage['headers']; body: any }[] = [];
  beforeAll(async () => {
    hook = createServer((req, res) => {
      let data = '';
      req.on('data', (c) => (data += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: JSON.parse(data) });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
  });
  afterAll(() => new Promise<void>((r) => hook.close(() => r())));

  const rows = (n: number, from = 0) =>
    Array.from({ length: n }, (_, k) => {
      const i = from + k;
      return { 'First Name': `Bulk${i}`, 'Last Name': `Row${i}`, Email: `bulk${i}@corp${i % 3}.com`, Profile: `https://pronet.com/in/bulk-${i}`, Title: 'Analyst', Company: `Corp ${i % 3}`, Website: `corp${i % 3}.com` };
    });

  it('accepts with 202, saves the good rows, reports bad ones, attaches the segment and calls the webhook', async () => {
    const ws = await app.createWorkspace();
    const src = await createSource({ sourceType: 'importFromWebhook', sourceIdentifier: 'bulk-1', sourceMeta: { config: { fieldMapping: MAPPING } } }, ws.apiKey);
    const seg = await post('/segments', { name: 'Imported' }, ws.apiKey);
    const data = [...rows(25), { 'First Name': 'Broken', Email: 'not-an-email' }, { 'First Name': 'Fine', Email: 'fine@x.com' }];
    const res = await post(`/contacts/${src}/bulk-upsert-contacts`, { contactsData: data, segmentId: seg.body.data.id, webhookConfiguration: { url: hookUrl, headers: { 'X-Token': 'abc' } } }, ws.apiKey);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.message).toEqual(expect.any(String));
    expect(res.body.jobStatusEndpoint).toMatch(new RegExp(`/jobs/${res.body.jobId}$`));
    const job = await app.waitForJob(res.body.jobId, ws.apiKey);
    expect(job.jobStatus).toBe('completed');
    expect(job.jobResponsePayload).toMatchObject({ sourceId: src, totalRows: 27, processedRows: 27, created: 26, updated: 0, skippedDeleted: 0, failed: 1 });
    expect(job.jobResponsePayload.errors).toEqual([{ row: 25, path: '/contactsData/25/Email', message: 'not-an-email is not an email address' }]);
    const listed = await post('/contacts/filter-contacts', { fields: ['contact.firstName', 'company.companyName'], limit: 1000 }, ws.apiKey);
    expect(listed.body.meta.totalRecords).toBe(26);
    expect(listed.body.data.find((c: any) => c.firstName === 'Bulk4').company.companyName).toBe('Corp 1');
    const segNow = await get(`/segments/${seg.body.data.id}`, ws.apiKey);
    expect(segNow.body.data.attributes.segmentSources).toEqual([src]);
    const members = await post(`/contacts/by-segment/${seg.body.data.id}`, { fields: ['contact.firstName'], limit: 1 }, ws.apiKey);
    expect(members.body.meta.totalRecords).toBe(26);
    const staged = await app.pool.query(`select count(*)::int as n from contact_ingest_staging`);
    expect(staged.rows[0].n).toBe(0);
    for (let i = 0; i < 100 && !received.some((r) => r.body.jobId === res.body.jobId); i++) await new Promise((r) => setTimeout(r, 100));
    const delivered = received.find((r) => r.body.jobId === res.body.jobId)!;
    expect(delivered.body).toMatchObject({ type: 'job.completed', jobType: 'bulk-upsert', jobStatus: 'completed', jobResponsePayload: { created: 26 } });
    expect(delivered.headers['x-token']).toBe('abc');
    expect(delivered.headers['webhook-signature']).toEqual(expect.any(String));
    await app.recordHistory(`bulk-upsert-${res.body.jobId}`, 'bulkUpsert/rows-with-errors-segment-webhook');
  });

  it('keeps values with backslashes, quotes, tabs, newlines and non-ASCII text exactly through staging and COPY, new and updated', async () => {
    const ws = await app.createWorkspace();
    const note = (await post('/schema/contact/custom-fields', { label: 'Note', type: 'string' }, ws.apiKey)).body.data.writeAccessPath as string;
    const mapping = [...MAPPING, { sourceFieldName: 'Note', targetFieldName: note }];
    const src = await createSource({ sourceType: 'importFromWebhook', sourceIdentifier: 'bulk-escapes', sourceMeta: { config: { fieldMapping: mapping } } }, ws.apiKey);
    const odd = ['back\\slash \\N', 'quote " and {brace,comma}', 'tab\there', 'new\nline\r\nend', 'Zoë 東京 🚀'];
    const noteId = note.split('.')[2]!;
    // The second send gives every contact another of the values: the updates go through the stage table.
    for (const [shift, expected] of [[0, { created: odd.length }], [1, { created: 0, updated: odd.length }]] as const) {
      const value = (i: number) => odd[(i + shift) % odd.length]!;
      const data = odd.map((_, i) => ({ 'First Name': `Odd${i}`, 'Last Name': value(i), Email: `odd${i}@escapes.com`, Profile: `https://pronet.com/in/odd-${i}`, Title: value(i), Company: value(i), Website: `odd${i}.example.com`, Note: value(i) }));
      const res = await post(`/contacts/${src}/bulk-upsert-contacts`, { contactsData: data }, ws.apiKey);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      const job = await app.waitForJob(res.body.jobId, ws.apiKey);
      expect(job.jobResponsePayload).toMatchObject({ ...expected, failed: 0 });
      const listed = await post('/contacts/filter-contacts', { fields: ['contact.firstName', 'contact.lastName', 'contact.jobTitle', 'company.companyName', note], limit: 10 }, ws.apiKey);
      const byName = new Map(listed.body.data.map((c: any) => [c.firstName, c]));
      odd.forEach((_, i) => expect(byName.get(`Odd${i}`)).toMatchObject({ lastName: value(i), title: value(i), company: { companyName: value(i) }, customFields: { [noteId]: value(i) } }));
    }
  });

  it('re-sending the rows updates without duplicates; a second source adds its id; deleted contacts stay deleted', async () => {
    const ws = await app.createWorkspace();
    const a = await createSource({ sourceType: 'importFromWebhook', sourceIdentifier: 'bulk-a', sourceMeta: { config: { fieldMapping: MAPPING } } }, ws.apiKey);
    const b = await createSource(
      { sourceType: 'importFromWebhook', sourceIdentifier: 'bulk-b', sourceMeta: { config: { fieldMapping: MAPPING.filter((m) => m.sourceFieldName !== 'Profile') } } },
      ws.apiKey,
    );
    const run = async (src: string, data: unknown[]) => {
      const r = await post(`/contacts/${src}/bulk-upsert-contacts`, { contactsData: data }, ws.apiKey);
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      return (await app.waitForJob(r.body.jobId, ws.apiKey)).jobResponsePayload;
    };
    expect(await run(a, rows(40))).toMatchObject({ created: 40, updated: 0, failed: 0 });
    expect(await run(a, rows(40))).toMatchObject({ created: 0, updated: 40 });
    // Same people through source b, found by email only (no profile column).
    const byEmail = rows(10).map(({ Profile: _p, ...r }) => ({ ...r, Title: 'Lead' }));
    expect(await run(b, byEmail)).toMatchObject({ created: 0, updated: 10 });
    const all = await post('/contacts/filter-contacts', { fields: ['contact.firstName', 'contact.jobTitle', 'contact.sources'], limit: 1000 }, ws.apiKey);
    expect(all.body.meta.totalRecords).toBe(40);
    const bulk3 = all.body.data.find((c: any) => c.firstName === 'Bulk3');
    expect(bulk3.sources.sort()).toEqual([a, b].sort());
    expect(bulk3.title).toBe('Lead');
    // Delete one; an automated bulk re-ingest leaves it deleted.
    await del(`/contacts/${bulk3.id}`, ws.apiKey);
    expect(await run(a, rows(5))).toMatchObject({ created: 0, updated: 4, skippedDeleted: 1 });
    expect((await get(`/contacts/${bulk3.id}`, ws.apiKey)).status).toBe(404);
  });

  it('merges rows of one batch that are the same person (profile, then email)', async () => {
    const ws = await app.createWorkspace();
    const src = await createSource({ sourceType: 'importFromWebhook', sourceIdentifier: 'dupes', sourceMeta: { config: { fieldMapping: MAPPING } } }, ws.apiKey);
    const data = [
      { 'First Name': 'Dup', Profile: 'https://pronet.com/in/dup', Email: 'dup@a.com', Title: 'First' },
      { 'First Name': 'Other', Profile: 'https://pronet.com/in/other', Email: 'other@a.com' },
      { Profile: 'pronet.com/in/DUP/', Title: 'Second' },
      { Email: 'DUP@a.com', Company: 'Dup Co', 'Last Name': null, Website: '' },
    ];
    const r = await post(`/contacts/${src}/bulk-upsert-contacts`, { contactsData: data }, ws.apiKey);
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const job = await app.waitForJob(r.body.jobId, ws.apiKey);
    expect(job.jobResponsePayload).toMatchObject({ created: 2, failed: 0 });
    const all = await post('/contacts/filter-contacts', { fields: ['contact.firstName', 'contact.jobTitle', 'company.companyName'] }, ws.apiKey);
    expect(all.body.data.map(({ id: _id, ...c }: any) => c)).toEqual([
      { firstName: 'Dup', title: 'Second', company: { companyName: 'Dup Co' } },
      { firstName: 'Other', title: null, company: null },
    ]);
  });

  it('processes chunks two at a time and continues as new with its running totals', async () => {
    const ws = await app.createWorkspace();
    const src = await createSource({ sourceType: 'importFromWebhook', sourceIdentifier: 'can', sourceMeta: { config: { fieldMapping: MAPPING } } }, ws.apiKey);
    const data: Record<string, unknown>[] = rows(25);
    data[7] = { Email: 'broken' };
    const batchId = '01a1ff4e-c0b3-77cc-8dc5-' + Date.now().toString(16).padStart(12, '0').slice(-12);
    await stageRows(app.pool, batchId, data);
    // As the route does it: in the workspace's scope (row-level security).
    const accepted = await inWorkspaceScope(ws.workspaceId, () =>
      startJob(app.deps, {
        workspaceId: ws.workspaceId,
        job: 'bulk-upsert',
        args: { sourceId: src, batchId, totalRows: data.length, chunkSize: 2, chunksPerRun: 4 },
      }),
    );
    const job = await app.waitForJob(accepted.jobId, ws.apiKey);
    expect(job.jobStatus, JSON.stringify(job)).toBe('completed');
    expect(job.jobResponsePayload).toMatchObject({ totalRows: 25, processedRows: 25, created: 24, failed: 1 });
    expect(job.jobResponsePayload.errors).toEqual([{ row: 7, path: '/contactsData/7/Email', message: 'broken is not an email address' }]);
    const runs = await app.deps.temporal.workflow.list({ query: `WorkflowId = 'bulk-upsert-${accepted.jobId}'` });
    let n = 0;
    for await (const _ of runs) n++;
    expect(n).toBe(4); // 13 chunks, 4 per run
    expect((await app.pool.query(`select count(*)::int as n from contact_ingest_staging where batch_id = $1`, [batchId])).rows[0].n).toBe(0);
    await app.recordHistory(`bulk-upsert-${accepted.jobId}`, 'bulkUpsert/last-run-after-continue-as-new');
  });

  it("a row giving one field both nested and as a dotted key is that row's error; the other rows are saved", async () => {
    // Found by an outside client: the request was refused as a whole with "/contactsData/0/contact:
    // unknown field contact", where a single upsert names /contact/firstName as given twice.
    const contactsData = [{ 'contact.firstName': 'Solo', 'contact.pronet': 'https://www.pronet.com/in/solo-twice' }, { 'contact.firstName': 'A', contact: { firstName: 'B' } }];
    const r = await post(`/contacts/${listenSource}/bulk-upsert-contacts`, { contactsData });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const job = await app.waitForJob(r.body.jobId, key);
    expect(job.jobResponsePayload).toMatchObject({ created: 1, failed: 1 });
    expect(job.jobResponsePayload.errors).toEqual([{ row: 1, path: '/contactsData/1/contact/firstName', message: 'is given twice (nested and as a dotted key)' }]);
  });

  it('rejects a mapping column absent from every row, bad targets, unknown keys, bad bodies; 404 for unknown sources and segments', async () => {
    expect400(await post(`/contacts/${importSource}/bulk-upsert-contacts`, { contactsData: [{ 'First Name': 'A' }] }), '/contactsData', /sourceFieldName Last Name/);
    await app.pool.query(`update sources set source_meta = $2 where id = $1`, [importSource, { config: { fieldMapping: [...MAPPING, { sourceFieldName: 'Shoe', targetFieldName: 'contact.shoeSize' }] } }]);
    expect400(await post(`/contacts/${importSource}/bulk-upsert-contacts`, { contactsData: rows(1) }), '/sourceMeta/config/fieldMapping/7/targetFieldName');
    await app.pool.query(`update sources set source_meta = $2 where id = $1`, [importSource, { config: { fieldMapping: MAPPING } }]);
    expect400(await post(`/contacts/${listenSource}/bulk-upsert-contacts`, { contactsData: [{ 'contact.firstName': 'A', Junk: 1 }] }), '/contactsData/0/Junk');
    expect400(await post(`/contacts/${importSource}/bulk-upsert-contacts`, { contactsData: [] }), '/contactsData');
    expect400(await post(`/contacts/${importSource}/bulk-upsert-contacts`, { rows: [] }), '/contactsData');
    expect400(await post(`/contacts/${importSource}/bulk-upsert-contacts`, { contactsData: rows(1), webhookConfiguration: { url: 'not a url' } }), '/webhookConfiguration/url');
    expect((await post(`/contacts/${importSource}/bulk-upsert-contacts`, { contactsData: rows(1), segmentId: '01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a' })).status).toBe(404);
    expect((await post(`/contacts/${otherSource}/bulk-upsert-contacts`, { contactsData: rows(1) })).status).toBe(404);
    expect((await post(`/contacts/01a1ff4e-c0b3-77cc-8dc5-1ae04d0a0b3a/bulk-upsert-contacts`, { contactsData: rows(1) })).status).toBe(404);
  });
});
