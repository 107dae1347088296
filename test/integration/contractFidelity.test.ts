/**
 * Issue 12, output shapes: each answer checked through HTTP on the real stack against what the
 * contract (API-SPEC, DESIGN §3) says — discovery profile URLs and emails, people values on
 * company search items, honest job progress, one contact shape everywhere, and cloning the
 * default segment.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDataset } from '../../db/datasetImport.js';
import { startTestApp, type TestApp } from '../harness.js';
import { bulkUpsertContactsWorkflow } from '../../workflows/bulkUpsert.js';
import { sourceRefreshWorkflow } from '../../workflows/sourcePull.js';

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  key = (await app.createWorkspace({ credits: 1_000_000 })).apiKey;
});
afterAll(() => app?.close());

const post = (path: string, body: unknown, k = key) => app.http('POST', path, { apiKey: k, body });
const get = (path: string, k = key) => app.http('GET', path, { apiKey: k });

describe('cloning the default segment (issue 12 item 12; issue 27 item 14)', () => {
  it('answers 200 with a normal segment holding the same contacts (every source of the workspace); workflowOnly copies only the workflows', async () => {
    // found by the contract review: it answered 409, which the contract does not list for clone
    const ws = await app.createWorkspace();
    const segments = (await get('/segments/search?q=', ws.apiKey)).body.data as { id: string; attributes: { isDefault: boolean } }[];
    const def = segments.find((s) => s.attributes.isDefault)!;
    expect(def).toBeTruthy();
    const sources: string[] = [];
    for (const n of [1, 2]) {
      const src = await post('/sources', { sourceType: 'importFromWebhook', sourceIdentifier: `clone-default-${n}`, sourceMeta: {} }, ws.apiKey);
      sources.push(src.body.data.id);
      expect((await post(`/contacts/${src.body.data.id}`, { 'contact.workEmail': `person${n}@clone-default.example` }, ws.apiKey)).status).toBe(200);
    }
    const res = await post(`/segments/${def.id}/clone`, {}, ws.apiKey);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.attributes).toMatchObject({ clonedFrom: def.id, isDefault: false, conditions: [] });
    expect([...res.body.data.attributes.segmentSources].sort()).toEqual([...sources].sort());
    const members = async (id: string) => ((await post(`/contacts/by-segment/${id}`, { fields: ['contact.workEmail'] }, ws.apiKey)).body.data as { id: string }[]).map((c) => c.id).sort();
    expect(await members(res.body.data.id)).toEqual(await members(def.id));
    expect((await members(def.id)).length).toBe(2);
    const wf = await post(`/segments/${def.id}/clone`, { workflowOnly: true, name: 'Automations of all contacts' }, ws.apiKey);
    expect(wf.status, JSON.stringify(wf.body)).toBe(200);
    expect(wf.body.data.attributes).toMatchObject({ name: 'Automations of all contacts', clonedFrom: def.id, isDefault: false, segmentSources: [], conditions: [] });
  });
});

describe('job progress (item 4)', () => {
  const MAPPING = [{ sourceFieldName: 'Email', targetFieldName: 'contact.workEmail' }];

  it('a finished job reports its real final progress (rows), not 1 of 1', async () => {
    const src = await post('/sources', { sourceType: 'importFromWebhook', sourceIdentifier: `progress-${uuidv7()}`, sourceMeta: { config: { fieldMapping: MAPPING } } });
    expect(src.status, JSON.stringify(src.body)).toBe(200);
    const rows = Array.from({ length: 7 }, (_, i) => ({ Email: `row-${i}@progress.example` }));
    const accepted = await post(`/contacts/${src.body.data.id}/bulk-upsert-contacts`, { contactsData: rows });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const done = await app.waitForJob(accepted.body.jobId, key);
    expect(done.jobStatus).toBe('completed');
    expect(done.progress).toEqual({ completed: 7, total: 7, percent: 100 });
    expect(done.progressUnknownReason).toBeNull();
    expect(done.jobResponsePayload).toMatchObject({ totalRows: 7, processedRows: 7, created: 7 });
  });

  it('says progress is unknown (null, with a reason) when no worker answers the status query', async () => {
    const ws = await app.createWorkspace();
    const jobId = uuidv7();
    const workflowId = `bulk-upsert-${jobId}`;
    await app.pool.query(`insert into jobs (id, workspace_id, type, workflow_id) values ($1, $2, 'bulk-upsert', $3)`, [jobId, ws.workspaceId, workflowId]);
    // a task queue no worker polls: the workflow exists and runs, nobody can answer for it
    const handle = await app.deps.temporal.workflow.start(bulkUpsertContactsWorkflow, {
      workflowId,
      taskQueue: `nobody-polls-${jobId}`,
      args: [{ sourceId: uuidv7(), batchId: uuidv7(), totalRows: 5, jobId, workspaceId: ws.workspaceId, jobType: 'bulk-upsert', webhook: null }],
    });
    try {
      const res = await get(`/jobs/${jobId}`, ws.apiKey);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.jobStatus).toBe('queued');
      expect(res.body.data.progress).toBeNull();
      expect(res.body.data.progressUnknownReason).toMatch(/no worker/i);
    } finally {
      await handle.terminate('test done');
    }
  });

  it('a job whose workflow ended before results carried progress says so instead of inventing one', async () => {
    const ws = await app.createWorkspace();
    const jobId = uuidv7();
    // sourceRefreshWorkflow returns a plain result, as job workflows did before (unknown source: skipped)
    const workflowId = `legacy-result-${jobId}`;
    await app.pool.query(`insert into jobs (id, workspace_id, type, workflow_id) values ($1, $2, 'source-pull', $3)`, [jobId, ws.workspaceId, workflowId]);
    await app.deps.temporal.workflow.execute(sourceRefreshWorkflow, {
      workflowId,
      taskQueue: app.config.temporal.taskQueue,
      args: [{ workspaceId: ws.workspaceId, sourceId: uuidv7() }],
    });
    const res = await get(`/jobs/${jobId}`, ws.apiKey);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ jobStatus: 'completed', progress: null, jobResponsePayload: { jobId: null, jobStatus: 'skipped' } });
    expect(res.body.data.progressUnknownReason).toMatch(/final progress/);
  });
});

describe('discovery output (items 1, 2, 3)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fidelity-ds-'));
  const jsonl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n');
  const engineer = (n: number) => ({
    member_pronet_url: `https://www.pronet.com/in/Engineer-${n}/`,
    member_full_name: `Engineer ${n}`,
    member_job_title: 'Software Engineer',
    member_seniority: 'Senior',
    member_emails: [{ email: `eng${n}@engines.example`, status: n % 2 ? 'valid' : 'catch_all' }],
    company_pronet_url: 'https://www.pronet.com/company/Engines-Ltd',
    verified: true,
  });

  beforeAll(async () => {
    writeFileSync(
      join(dir, 'companies.jsonl'),
      jsonl([
        { company_pronet_url: 'https://www.pronet.com/company/Engines-Ltd', company_name: 'Engines Ltd', company_website: 'https://engines.example', industry: 'Manufacturing', size_range: '11-50', employee_count: 40, verified: true },
        { company_pronet_url: 'https://pronet.com/company/quiet-co', company_name: 'Quiet Co', industry: 'Manufacturing', size_range: '1-10', employee_count: 3, verified: true },
      ]),
    );
    writeFileSync(
      join(dir, 'people.jsonl'),
      jsonl([
        ...Array.from({ length: 12 }, (_, i) => engineer(i + 1)),
        { member_pronet_url: 'https://pronet.com/in/ada-cfo', member_full_name: 'Ada Lovelace', member_job_title: 'Chief Financial Officer', member_seniority: 'CXO', company_pronet_url: 'https://www.pronet.com/company/Engines-Ltd', member_emails: [{ email: 'ada@engines.example', status: 'valid' }], verified: true },
        { member_pronet_url: 'https://pronet.com/in/quiet-ceo', member_full_name: 'Quiet Boss', member_job_title: 'Chief Executive Officer', member_seniority: 'Owner', company_pronet_url: 'https://pronet.com/company/quiet-co', verified: true },
      ]),
    );
    const report = await importDataset(app.pool, { companies: join(dir, 'companies.jsonl'), people: join(dir, 'people.jsonl') });
    expect(report.errorCount).toBe(0);
  });

  it('returns profile URLs as https URLs and matches conditions given either form (item 1)', async () => {
    for (const value of ['https://www.pronet.com/in/ada-cfo/', 'pronet.com/in/ada-cfo', 'HTTPS://pronet.com/in/Ada-CFO?trk=x']) {
      const res = await post('/discovery-search/find-contacts-v2', {
        conditions: [{ field: 'dsContact.member_pronet_url', operator: '==', value }],
        fields: ['dsContact.member_pronet_url', 'dsContact.company_pronet_url', 'dsCompany.company_pronet_url'],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data, value).toEqual([{ id: expect.any(String), pronet: 'https://pronet.com/in/ada-cfo', company: { id: expect.any(String), companyPronet: 'https://pronet.com/company/engines-ltd' } }]);
    }
    const companies = await post('/discovery-search/find-companies-v2', { conditions: [{ field: 'dsCompany.company_name', operator: '==', value: 'Engines Ltd' }] });
    expect(companies.body.data[0].companyPronet).toBe('https://pronet.com/company/engines-ltd');
    const verified = await post('/discovery-search/find-verified-companies', { fields: ['companyName', 'companyPronet'], limit: 25 });
    expect(verified.body.data.map((c: { companyPronet: string }) => c.companyPronet).sort()).toEqual(['https://pronet.com/company/engines-ltd', 'https://pronet.com/company/quiet-co']);
    const people = await post('/discovery-search/find-verified-contacts', { fields: ['pronet', 'companyPronet'], limit: 2 });
    expect(people.status, JSON.stringify(people.body)).toBe(200);
    expect(people.body.data).toEqual([
      { id: expect.any(String), pronet: 'https://pronet.com/in/quiet-ceo', company: { id: expect.any(String), companyPronet: 'https://pronet.com/company/quiet-co' } },
      { id: expect.any(String), pronet: 'https://pronet.com/in/ada-cfo', company: { id: expect.any(String), companyPronet: 'https://pronet.com/company/engines-ltd' } },
    ]);
  });

  it('returns emails as strings, their statuses in emailStatuses (item 2)', async () => {
    const res = await post('/discovery-search/find-contacts-v2', {
      conditions: [{ field: 'dsContact.member_full_name', operator: 'IN', value: ['Engineer 1', 'Engineer 2', 'Quiet Boss'] }],
      fields: ['dsContact.member_full_name', 'dsContact.member_emails'],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const byName = Object.fromEntries(res.body.data.map((d: { fullName: string }) => [d.fullName, d]));
    expect(byName['Engineer 1']).toMatchObject({ emails: ['eng1@engines.example'], emailStatuses: [{ email: 'eng1@engines.example', status: 'valid' }] });
    expect(byName['Engineer 2']).toMatchObject({ emails: ['eng2@engines.example'], emailStatuses: [{ email: 'eng2@engines.example', status: 'catch_all' }] });
    expect(byName['Quiet Boss']).toMatchObject({ emails: [], emailStatuses: [] });
    const verified = await post('/discovery-search/find-verified-contacts', { fields: ['fullName', 'emails'], limit: 2 });
    expect(verified.body.data[1]).toMatchObject({ fullName: 'Ada Lovelace', emails: ['ada@engines.example'], emailStatuses: [{ email: 'ada@engines.example', status: 'valid' }] });
  });

  it('find-companies-v2 returns company records only: dsContact.* conditions filter, dsContact.* fields are a 400 (issue 27 item 13)', async () => {
    // found by the contract review: up to 10 people per company, emails included, for 1 credit per company
    const before = (await get('/credits/balance')).body.data.balance as number;
    const res = await post('/discovery-search/find-companies-v2', {
      conditions: [{ field: 'dsContact.member_job_title', operator: 'LIKE', value: '%engineer%' }],
      fields: ['dsCompany.company_name', 'dsCompany.company_pronet_url'],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual([{ id: expect.any(String), companyName: 'Engines Ltd', companyPronet: 'https://pronet.com/company/engines-ltd' }]);
    expect((await get('/credits/balance')).body.data.balance).toBe(before - 1);
    for (const fields of [['dsCompany.company_name', 'dsContact.member_emails'], ['dsContact.member_job_title']]) {
      const refused = await post('/discovery-search/find-companies-v2', { conditions: [{ field: 'dsCompany.company_name', operator: '==', value: 'Quiet Co' }], fields });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
      expect(refused.body.error.details[0].path).toBe(`/fields/${fields.length - 1}`);
      expect(refused.body.error.details[0].message).toMatch(/find-contacts-v2/);
      expect(JSON.stringify(refused.body)).not.toMatch(/@|Chief Executive/);
    }
    expect((await get('/credits/balance')).body.data.balance).toBe(before - 1);
  });
});

describe('one contact shape everywhere (item 5)', () => {
  it('single read, bulk fetch, filter, by-segment, upsert and patch answer the same contact, nulls for unknown values', async () => {
    const ws = await app.createWorkspace();
    const k = ws.apiKey;
    const score = await post('/schema/contact/custom-fields', { label: 'Score', type: 'number' }, k);
    const since = await post('/schema/contact/custom-fields', { label: 'Since', type: 'date' }, k);
    expect(score.status, JSON.stringify(score.body)).toBe(200);
    const scoreId = score.body.data.writeAccessPath.split('.').pop();
    const sinceId = since.body.data.writeAccessPath.split('.').pop();
    const src1 = (await post('/sources', { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/posts/shape-1' }, k)).body.data.id;
    const src2 = (await post('/sources', { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/posts/shape-2' }, k)).body.data.id;
    // with a company and a custom value, from two sources (the second one first in id order)
    const withCompany = await post(`/contacts/${src2}`, { 'contact.firstName': 'Ada', 'contact.workEmail': 'ada@shape.example', 'company.companyName': 'Engines Ltd', [`contact.customFields.${scoreId}`]: 7, [`contact.customFields.${sinceId}`]: '2026-01-02' }, k);
    expect(withCompany.status, JSON.stringify(withCompany.body)).toBe(200);
    const upserted = await post(`/contacts/${src1}`, { 'contact.workEmail': 'ada@shape.example', 'contact.lastName': 'Lovelace' }, k);
    // without company, title or custom values
    const bare = await post(`/contacts/${src1}`, { 'contact.workEmail': 'bare@shape.example' }, k);
    expect(bare.status, JSON.stringify(bare.body)).toBe(200);
    const ids = [withCompany.body.data.id, bare.body.data.id];

    const single = await Promise.all(ids.map(async (id) => (await get(`/contacts/${id}`, k)).body.data));
    expect(upserted.body.data).toEqual(single[0]);
    expect(single[1]).toMatchObject({ company: null, primaryCompanyId: null, title: null, pronet: null, customFields: { [scoreId]: null, [sinceId]: null } });
    expect(single[0].customFields).toEqual({ [scoreId]: 7, [sinceId]: '2026-01-02T00:00:00.000Z' });
    expect(single[0].sources).toEqual([src2, src1]);

    expect((await post('/contacts/bulk-fetch', { contactIds: ids }, k)).body.data).toEqual(single);
    const byId = (items: { id: string }[]) => ids.map((id) => items.find((i) => i.id === id));
    const filtered = await post('/contacts/filter-contacts', { conditions: [{ field: 'contact.workEmail', operator: 'LIKE', value: '%@shape.example' }] }, k);
    expect(byId(filtered.body.data)).toEqual(single);

    // with every path of the catalog, an item equals the full contact restricted to those paths
    const fields = ((await get('/schema/contact', k)).body.data as { writeAccessPath: string }[]).map((f) => f.writeAccessPath);
    const { companies: _c, primaryCompanyId: _p, ...projectable } = single[0];
    const restrict = (c: Record<string, unknown>) => Object.fromEntries(Object.keys(projectable).map((key) => [key, c[key]]));
    const projected = await post('/contacts/filter-contacts', { fields, conditions: [{ field: 'contact.workEmail', operator: 'LIKE', value: '%@shape.example' }] }, k);
    expect(projected.status, JSON.stringify(projected.body)).toBe(200);
    expect(byId(projected.body.data)).toEqual(single.map(restrict));
    const segments = (await get('/segments/search?q=', k)).body.data as { id: string; attributes: { isDefault: boolean } }[];
    const all = segments.find((s) => s.attributes.isDefault)!;
    const bySegment = await post(`/contacts/by-segment/${all.id}`, { fields }, k);
    expect(byId(bySegment.body.data)).toEqual(single.map(restrict));

    const patched = await app.http('PATCH', `/contacts/${ids[1]}`, { apiKey: k, body: { title: 'Engineer' } });
    expect(patched.body.data).toEqual((await get(`/contacts/${ids[1]}`, k)).body.data);
    expect(patched.body.data).toMatchObject({ title: 'Engineer', company: null, customFields: { [scoreId]: null, [sinceId]: null } });
  });
});
