/**
 * Subject access end to end on the real stack (issue 30 item 4, docs/PRIVACY.md): a person who
 * came in through two sources and one bulk enrichment is exported by email; the document (fetched
 * through its presigned link) names both sources, the provider of every enriched field, the
 * person's segment and the charges; the access workflow's history (decoded through the payload
 * codec) carries none of the person's identifiers. A second request is interrupted by a SIGKILL
 * of the worker and finishes with the same result and the same document.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { startFakeEnrichmentProvider, type FakeEnrichmentProvider } from '../fakes/enrichmentProvider.js';
import { decodedHistoryTexts } from '../historyPayloads.js';
import type { NewWorkspace } from '../../db/workspaces.js';

let app: TestApp;
let alpha: FakeEnrichmentProvider;

beforeAll(async () => {
  alpha = await startFakeEnrichmentProvider('alpha');
  const config = {
    providers: { alpha: { type: 'http', baseUrl: alpha.baseUrl, apiKeyEnv: 'ACCESS_ALPHA_KEY', timeoutMs: 2000 } },
    waterfall: { basic_contact_data: ['alpha'], emails: ['alpha'], phoneNumbers: ['alpha'], basic_company_data: ['alpha'], pronetPosts: ['alpha'] },
    retry: { maxAttempts: 2, initialIntervalMs: 100, maxIntervalMs: 1000, maxRetryAfterMs: 5000 },
  };
  app = await startTestApp({ workerMode: 'process', env: { ACCESS_ALPHA_KEY: alpha.apiKey, ENRICHMENT_CONFIG: JSON.stringify(config) } });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await alpha?.close();
});

const MAPPING = [
  { sourceFieldName: 'First Name', targetFieldName: 'contact.firstName' },
  { sourceFieldName: 'Last Name', targetFieldName: 'contact.lastName' },
  { sourceFieldName: 'Email', targetFieldName: 'contact.workEmail' },
  { sourceFieldName: 'Profile', targetFieldName: 'contact.pronet' },
];

async function source(ws: NewWorkspace, name: string): Promise<string> {
  const r = await app.http('POST', '/sources', { apiKey: ws.apiKey, body: { sourceType: 'importFromWebhook', sourceIdentifier: `${name}-${randomBytes(4).toString('hex')}`, sourceMeta: { config: { fieldMapping: MAPPING } } } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.id;
}

async function job(r: { status: number; body: any }, apiKey: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const done = await app.waitForJob(r.body.jobId, apiKey, 90_000);
  expect(done.jobStatus, JSON.stringify(done)).toBe('completed');
  return done;
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('subject access', () => {
  it('exports a person from two sources and one enrichment: both sources, the provider of each field, segment and charges', async () => {
    const ws = await app.createWorkspace({ credits: 1000 });
    const tag = randomBytes(5).toString('hex');
    const p = { first: `Ada${tag}`, email: `ada.${tag}@access.example`, profile: `https://www.pronet.example/in/ada-${tag}/`, enrichedEmail: `ada.private.${tag}@mail.example` };
    const other = { first: `Bob${tag}`, email: `bob.${tag}@access.example`, profile: `https://www.pronet.example/in/bob-${tag}/` };
    const crm = await source(ws, 'crm');
    const fair = await source(ws, 'fair');
    await job(await app.http('POST', `/contacts/${crm}/bulk-upsert-contacts`, {
      apiKey: ws.apiKey,
      body: { contactsData: [{ 'First Name': p.first, 'Last Name': 'Lovelace', Email: p.email, Profile: p.profile }, { 'First Name': other.first, 'Last Name': 'Other', Email: other.email, Profile: other.profile }] },
    }), ws.apiKey);
    await job(await app.http('POST', `/contacts/${fair}/bulk-upsert-contacts`, { apiKey: ws.apiKey, body: { contactsData: [{ 'First Name': p.first, 'Last Name': 'Lovelace', Email: p.email, Profile: p.profile }] } }), ws.apiKey);
    const contactId = (await app.pool.query(`select id from contacts where workspace_id = $1 and work_email = $2`, [ws.workspaceId, p.email])).rows[0].id as string;
    const segment = await app.http('POST', '/segments', { apiKey: ws.apiKey, body: { name: `Fair visitors ${tag}`, segmentSources: [fair] } });
    expect(segment.status, JSON.stringify(segment.body)).toBe(200);
    alpha.setData(p.profile, 'basic_contact_data', { contact: { fullName: `Ada Lovelace ${tag}`, title: 'Countess of Computing' } });
    alpha.setData(p.profile, 'emails', { emails: [{ email: p.enrichedEmail, status: 'valid' }] });
    const enrichment = await job(await app.http('POST', '/contacts/bulk-enrichment', { apiKey: ws.apiKey, body: { fields: ['basic_contact_data', 'emails'], contactIds: [contactId] } }), ws.apiKey);
    expect(enrichment.jobResponsePayload.creditsCharged).toBeGreaterThan(0);

    const refused = await app.http('POST', '/privacy/access-requests', { apiKey: ws.apiKey, body: { emails: ['nobody'] } });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body.error)).toMatch(/emails/);

    const access = await job(await app.http('POST', '/privacy/access-requests', { apiKey: ws.apiKey, body: { emails: [p.email.toUpperCase()] } }), ws.apiKey);
    const result = access.jobResponsePayload;
    expect(result).toMatchObject({ objectName: `${ws.workspaceId}/subject-access/${access.id}.json`, contacts: 1, sources: 2, enrichments: 2, segments: 2, charges: 2, downloadUrl: expect.stringMatching(/^https?:\/\//) });
    expect(Date.parse(result.expiresAt) - Date.now()).toBeGreaterThan(10 * 60_000);
    const download = await fetch(result.downloadUrl);
    expect(download.status).toBe(200);
    const doc = (await download.json()) as any;
    expect(doc.contacts).toHaveLength(1);
    const c = doc.contacts[0];
    expect(c.contactId).toBe(contactId);
    expect(JSON.stringify(doc)).not.toContain(other.email);
    // both sources, with their type and identifier
    expect(c.sources.map((s: any) => s.sourceId).sort()).toEqual([crm, fair].sort());
    expect(c.sources.every((s: any) => s.sourceType === 'importFromWebhook' && s.firstSeen && s.lastSeen)).toBe(true);
    // the provider of each enriched field; the other fields name the sources they came through
    for (const field of ['fullName', 'title']) {
      expect(c.fields[field].origins, field).toEqual([{ kind: 'enrichment', provider: 'alpha', slice: 'basic_contact_data', jobId: enrichment.id, at: expect.any(String) }]);
    }
    expect(c.fields.fullName.value).toBe(`Ada Lovelace ${tag}`);
    expect(c.fields.emails.value).toEqual(expect.arrayContaining([p.email, p.enrichedEmail]));
    expect(c.fields.emails.origins.filter((o: any) => o.kind === 'enrichment').map((o: any) => [o.provider, o.slice])).toEqual([['alpha', 'emails']]);
    for (const field of ['firstName', 'lastName', 'workEmail', 'pronet']) {
      expect(c.fields[field].origins.map((o: any) => o.kind === 'source' && o.sourceId).sort(), field).toEqual([crm, fair].sort());
    }
    expect(c.enrichments.map((e: any) => [e.slice, e.provider, e.jobId])).toEqual(expect.arrayContaining([['basic_contact_data', 'alpha', enrichment.id], ['emails', 'alpha', enrichment.id]]));
    // the workspace's default segment (everyone) and the segment of the second source
    const defaultSegment = (await app.pool.query(`select id from segments where workspace_id = $1 and is_default`, [ws.workspaceId])).rows[0].id;
    expect(c.segments.map((s: any) => s.segmentId).sort()).toEqual([defaultSegment, segment.body.data.id].sort());
    expect(c.segments.find((s: any) => s.segmentId === segment.body.data.id).name).toBe(`Fair visitors ${tag}`);
    // the charges made for the person are the enrichment's ledger entries
    const ledger = (await app.pool.query(`select sum(amount)::int as n from credit_transactions where job_id = $1 and kind = 'debit'`, [enrichment.id])).rows[0].n;
    expect(c.charges.reduce((s: number, x: any) => s + x.amount, 0)).toBe(ledger);
    expect(c.charges.every((x: any) => x.jobId === enrichment.id)).toBe(true);

    // the workflow carried ids and counts only; the request row keeps no identifier once done
    const wf = (await app.pool.query(`select workflow_id from jobs where id = $1`, [access.id])).rows[0].workflow_id as string;
    const text = (await decodedHistoryTexts(app, wf)).join('\n').toLowerCase();
    expect(text).toContain(access.id);
    for (const needle of [p.email, p.enrichedEmail, `ada-${tag}`, p.first.toLowerCase(), contactId]) expect(text, needle).not.toContain(needle);
    expect((await app.pool.query(`select identifiers from access_requests where id = $1`, [access.id])).rows[0].identifiers).toBeNull();
    await app.recordHistory(wf, 'subjectAccess/export');

    // a SIGKILL of the worker mid-job: the job finishes with the same result and document
    const second = await app.http('POST', '/privacy/access-requests', { apiKey: ws.apiKey, body: { profileUrls: [p.profile] } });
    expect(second.status).toBe(202);
    await until(() => app.pool.query(`select plan from access_requests where id = $1`, [second.body.jobId]), (r) => r.rows[0]?.plan != null);
    await app.killWorker();
    // killed before the job's last step committed: the restarted worker has work left
    expect((await app.pool.query(`select completed_at from access_requests where id = $1`, [second.body.jobId])).rows[0].completed_at).toBeNull();
    await app.startWorker();
    const resumed = await job(second, ws.apiKey);
    const { downloadUrl: _u, expiresAt: _e, objectName, ...counts } = resumed.jobResponsePayload;
    const { downloadUrl: _u1, expiresAt: _e1, objectName: _o1, ...firstCounts } = result;
    expect(objectName).toBe(`${ws.workspaceId}/subject-access/${second.body.jobId}.json`);
    expect(counts).toEqual({ ...firstCounts, sizeBytes: expect.any(Number) });
    const again = (await (await fetch(resumed.jobResponsePayload.downloadUrl)).json()) as any;
    expect(again.contacts).toEqual(doc.contacts);
  }, 240_000);
});
