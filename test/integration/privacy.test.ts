/**
 * Erasure end to end on the real stack (docs/PRIVACY.md): a person enters through a bulk upsert
 * (with a webhook), a contacts file in the object store, a source pull (the dataset listening
 * provider) and an enrichment job (with a webhook), and is exported by a subject-access request;
 * an erasure request by email removes them; then every table of the test's database, every
 * object under the workspace's prefix and every workflow history of the workspace (fetched from
 * Temporal, decoded through the project's payload codec) is scanned for the person's identifiers;
 * a re-import, a re-pull and an enrichment are turned away. A second test kills the worker (SIGKILL)
 * mid-erasure and checks the job finishes with the same report as an uninterrupted one.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhookReceiver.js';
import { startFakeEnrichmentProvider, type FakeEnrichmentProvider } from '../fakes/enrichmentProvider.js';
import { decodedHistoryTexts } from '../historyPayloads.js';
import { SA } from '../../domain/searchAttributes.js';
import type { NewWorkspace } from '../../db/workspaces.js';
import { v7 as uuidv7 } from 'uuid';
import { hashKey } from '../../infra/keyGeneration.js';

let app: TestApp;
let hooks: WebhookReceiver;
let alpha: FakeEnrichmentProvider;

beforeAll(async () => {
  alpha = await startFakeEnrichmentProvider('alpha');
  const config = {
    providers: { alpha: { type: 'http', baseUrl: alpha.baseUrl, apiKeyEnv: 'ENRICH_ALPHA_KEY', timeoutMs: 800 } },
    waterfall: { emails: ['alpha'], phoneNumbers: ['alpha'], basic_contact_data: ['alpha'], basic_company_data: ['alpha'], pronetPosts: ['alpha'] },
    retry: { maxAttempts: 2, initialIntervalMs: 100, maxIntervalMs: 1000, maxRetryAfterMs: 5000 },
  };
  app = await startTestApp({ workerMode: 'process', env: { ENRICH_ALPHA_KEY: alpha.apiKey, ENRICHMENT_CONFIG: JSON.stringify(config) } });
  hooks = await startWebhookReceiver();
}, 120_000);
afterAll(async () => {
  await app?.close();
  await hooks?.close();
  await alpha?.close();
});

/** An enrichment of the person's emails (the provider knows them): its input and result carry the person. */
async function enrich(ws: NewWorkspace, p: { email: string; profile: string }, webhook?: string) {
  alpha.setData(p.profile, 'emails', { emails: [{ email: p.email, status: 'valid' }] });
  const r = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body: { fields: ['emails'], pronet: p.profile, ...(webhook ? { webhookConfiguration: { url: webhook } } : {}) } });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const job = await app.waitForJob(r.body.jobId, ws.apiKey);
  expect(job.jobStatus, JSON.stringify(job)).toBe('completed');
  expect(JSON.stringify(job.jobResponsePayload)).toContain(p.email);
  return job;
}

const MAPPING = [
  { sourceFieldName: 'First Name', targetFieldName: 'contact.firstName' },
  { sourceFieldName: 'Last Name', targetFieldName: 'contact.lastName' },
  { sourceFieldName: 'Email', targetFieldName: 'contact.workEmail' },
  { sourceFieldName: 'Profile', targetFieldName: 'contact.pronet' },
];

function person() {
  const tag = randomBytes(5).toString('hex');
  return { first: `Zelda${tag}`, email: `zelda.${tag}@erase.example`, profile: `https://www.pronet.example/in/zelda-${tag}/` };
}

async function source(ws: NewWorkspace): Promise<string> {
  const r = await app.http('POST', '/sources', { apiKey: ws.apiKey, body: { sourceType: 'importFromWebhook', sourceIdentifier: `privacy-${randomBytes(4).toString('hex')}`, sourceMeta: { config: { fieldMapping: MAPPING } } } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.id;
}

async function bulkUpsert(ws: NewWorkspace, sourceId: string, rows: Record<string, string>[], webhook?: string) {
  const r = await app.http('POST', `/contacts/${sourceId}/bulk-upsert-contacts`, { apiKey: ws.apiKey, body: { contactsData: rows, ...(webhook ? { webhookConfiguration: { url: webhook } } : {}) } });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const job = await app.waitForJob(r.body.jobId, ws.apiKey);
  expect(job.jobStatus, JSON.stringify(job)).toBe('completed');
  return job;
}

async function fileImport(ws: NewWorkspace, sourceId: string, csv: string) {
  const fd = new FormData();
  fd.append('file', new Blob([new Uint8Array(Buffer.from(csv))], { type: 'text/csv' }), 'people.csv');
  const up = await app.http('POST', '/contact-files', { apiKey: ws.apiKey, rawBody: fd });
  expect(up.status, JSON.stringify(up.body)).toBe(200);
  const r = await app.http('POST', `/contacts/${sourceId}/bulk-upsert-contacts`, { apiKey: ws.apiKey, body: { contactsData: [], contactsFile: { fileName: up.body.fileName } } });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const job = await app.waitForJob(r.body.jobId, ws.apiKey);
  expect(job.jobStatus, JSON.stringify(job)).toBe('completed');
  return up.body.fileName as string;
}

/**
 * The person in the global dataset, liking a post of `owner` an hour ago: a `pronetInbound` pull
 * of the owner's audience (dataset listening provider) brings them in.
 */
async function seedAudience(p: { first: string; profile: string }, owner: string) {
  const key = p.profile.replace('https://www.', '').replace(/\/$/, '');
  await app.pool.query(
    `insert into ds_people (id, member_pronet_url, member_full_name, member_first_name, member_last_name, member_job_title, member_location_country)
     values ($1, $2, $3, $4, 'Doe', 'Analyst', 'Germany')`,
    [uuidv7(), key, `${p.first} Doe`, p.first],
  );
  await app.pool.query(
    `insert into ds_posts (id, member_pronet_url, post_url, text, posted_at, likes, comments, interaction_type, author_pronet_url)
     values ($1, $2, $3, 'Liked a post', now() - interval '1 hour', 0, 0, 'like', $4)`,
    [uuidv7(), key, `${owner}/posts/1/reactions/${p.first}`, owner],
  );
}

async function pull(ws: NewWorkspace, sourceId: string) {
  const r = await app.http('POST', `/sources/pull-contacts-from-source/${sourceId}`, { apiKey: ws.apiKey, body: {} });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const job = await app.waitForJob(r.body.jobId, ws.apiKey, 60_000);
  expect(job.jobStatus, JSON.stringify(job)).toBe('completed');
  return job;
}

async function erase(ws: NewWorkspace, body: unknown) {
  const r = await app.http('POST', '/privacy/erasure-requests', { apiKey: ws.apiKey, body });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body.jobId as string;
}

/** Every row of every table of the test's own database whose text form holds one of `needles` (the global dataset aside). */
async function tablesHolding(needles: string[]): Promise<string[]> {
  const tables = await app.pool.query<{ table_name: string }>(
    `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not like 'ds\\_%'`,
  );
  const hits: string[] = [];
  for (const { table_name } of tables.rows) {
    const r = await app.pool.query<{ row: string }>(`select t::text as row from "${table_name}" t`);
    for (const { row } of r.rows) for (const n of needles) if (row.toLowerCase().includes(n.toLowerCase())) hits.push(`${table_name}: ${n}`);
  }
  return hits;
}

async function objectsHolding(workspaceId: string, needles: string[]): Promise<string[]> {
  const { client, bucket } = app.deps.storage;
  const hits: string[] = [];
  for await (const o of client.listObjectsV2(bucket, `${workspaceId}/`, true) as AsyncIterable<{ name?: string }>) {
    const chunks: Buffer[] = [];
    for await (const c of await client.getObject(bucket, o.name!)) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8').toLowerCase();
    for (const n of needles) if (text.includes(n.toLowerCase())) hits.push(`${o.name}: ${n}`);
  }
  return hits;
}

/** Histories of the workspace's executions whose decoded payloads hold one of `needles` (deleted ones read as NotFound: gone). */
async function historiesHolding(workspaceId: string, needles: string[]): Promise<{ hits: string[]; scanned: number }> {
  const hits: string[] = [];
  let scanned = 0;
  for await (const w of app.deps.temporal.workflow.list({ query: `${SA.WorkspaceId.name} = "${workspaceId}"` })) {
    let texts: string[];
    try {
      texts = await decodedHistoryTexts(app, w.workflowId, w.runId);
    } catch {
      continue;
    }
    scanned++;
    for (const text of texts) for (const n of needles) if (text.toLowerCase().includes(n.toLowerCase())) hits.push(`${w.workflowId}: ${n}`);
  }
  return { hits, scanned };
}

async function until<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('erasure', () => {
  it('removes a person from every table, object and workflow history of the workspace, and suppresses them', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const other = person();
    const p = person();
    const src1 = await source(ws);
    const src2 = await source(ws);
    await bulkUpsert(ws, src1, [
      { 'First Name': p.first, 'Last Name': 'Doe', Email: p.email, Profile: p.profile },
      { 'First Name': other.first, 'Last Name': 'Roe', Email: other.email, Profile: other.profile },
    ], hooks.url);
    await hooks.waitFor((b) => b.jobResponsePayload?.sourceId === src1);
    const file = await fileImport(ws, src2, `First Name,Last Name,Email,Profile\r\n${p.first},Doe,${p.email},${p.profile}\r\n`);
    const enrichment = await enrich(ws, p, hooks.url);
    await hooks.waitFor((b) => b.jobId === enrichment.id);
    const owner = `pronet.example/in/owner-${randomBytes(4).toString('hex')}`;
    await seedAudience(p, owner);
    const audience = await app.http('POST', '/sources', { apiKey: ws.apiKey, body: { sourceType: 'pronetInbound', sourceIdentifier: `https://www.${owner}/` } });
    expect(audience.status, JSON.stringify(audience.body)).toBe(200);
    const pulled = await pull(ws, audience.body.data.id);
    expect(pulled.jobResponsePayload).toMatchObject({ provider: 'dataset', fetched: 1, created: 0, updated: 1 });
    const contact = await app.pool.query<{ id: string }>(`select id from contacts where workspace_id = $1 and work_email = $2`, [ws.workspaceId, p.email]);
    expect(contact.rows).toHaveLength(1);
    // a subject-access export of the person sits in the object store until the erasure
    const access = await app.http('POST', '/privacy/access-requests', { apiKey: ws.apiKey, body: { emails: [p.email] } });
    expect(access.status, JSON.stringify(access.body)).toBe(202);
    const exported = await app.waitForJob(access.body.jobId, ws.apiKey, 60_000);
    expect(exported.jobResponsePayload).toMatchObject({ contacts: 1, sources: 3 });
    const needles = [p.email, p.profile, p.profile.replace('https://www.', '').replace(/\/$/, ''), contact.rows[0]!.id, p.first];
    // the person is everywhere before
    expect(await tablesHolding(needles)).not.toEqual([]);
    const objectsBefore = await objectsHolding(ws.workspaceId, needles);
    expect(new Set(objectsBefore.map((hit) => hit.split(': ')[0]))).toEqual(new Set([file, exported.jobResponsePayload.objectName]));
    expect(objectsBefore).toEqual(expect.arrayContaining([`${file}: ${p.email}`, ...[p.email, p.first, contact.rows[0]!.id].map((n) => `${exported.jobResponsePayload.objectName}: ${n}`)]));
    expect((await historiesHolding(ws.workspaceId, needles)).hits).not.toEqual([]);

    const jobId = await erase(ws, { emails: [p.email.toUpperCase()] });
    const job = await app.waitForJob(jobId, ws.apiKey, 60_000);
    expect(job.jobStatus, JSON.stringify(job)).toBe('completed');
    expect(job.jobResponsePayload).toEqual({
      database: { contacts: 1, contactSources: 3, identityLogEntries: expect.any(Number), stagedRows: 0, idempotencyRecords: 0, suppressionEntriesAdded: 2 },
      objectStore: { objects: 2 },
      temporal: { workflowExecutions: 1, jobs: 1 },
    });
    await app.recordHistory((await app.pool.query(`select workflow_id from jobs where id = $1`, [jobId])).rows[0].workflow_id, 'erasure/by-email');
    // the enrichment job is gone with its history
    expect((await app.http('GET', `/jobs/${enrichment.id}`, { apiKey: ws.apiKey })).status).toBe(404);
    // the report names no identifier
    expect(JSON.stringify(job).toLowerCase()).not.toContain('zelda');

    expect(await tablesHolding(needles)).toEqual([]);
    expect(await objectsHolding(ws.workspaceId, needles)).toEqual([]);
    const after = await until('deleted histories', () => historiesHolding(ws.workspaceId, needles), (r) => r.hits.length === 0, 60_000);
    expect(after.hits).toEqual([]);
    // the erasure's own history was scanned too
    expect(after.scanned).toBeGreaterThanOrEqual(1);
    // the other person is untouched
    expect((await app.pool.query(`select 1 from contacts where workspace_id = $1 and work_email = $2`, [ws.workspaceId, other.email])).rowCount).toBe(1);
    // the suppression list holds hashes only
    const list = await app.http('GET', '/privacy/suppressions', { apiKey: ws.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.data.map((e: any) => [e.kind, e.reason]).sort()).toEqual([
      ['email', 'erasure'],
      ['profileUrl', 'erasure'],
    ]);
    expect(JSON.stringify(list.body).toLowerCase()).not.toContain('zelda');

    // every way in honours the suppression list: the re-import creates nothing and counts the row
    const reimport = await bulkUpsert(ws, src1, [
      { 'First Name': p.first, 'Last Name': 'Doe', Email: p.email, Profile: p.profile },
      { 'First Name': other.first, 'Last Name': 'Roe', Email: other.email, Profile: other.profile },
    ]);
    expect(reimport.jobResponsePayload).toMatchObject({ created: 0, updated: 1, suppressed: 1, failed: 0 });
    // a source pull skips them too
    const repulled = await pull(ws, audience.body.data.id);
    expect(repulled.jobResponsePayload).toMatchObject({ fetched: 1, created: 0, updated: 0, suppressed: 1 });
    const single = await app.http('POST', `/contacts/${src1}`, { apiKey: ws.apiKey, body: { 'First Name': p.first, Email: p.email } });
    expect(single.status, JSON.stringify(single.body)).toBe(422);
    expect(single.body.error.code).toBe('contact_suppressed');
    // enrichment is refused before any provider call, and charges nothing
    const balanceBefore = (await app.http('GET', '/credits/balance', { apiKey: ws.apiKey })).body.data.balance;
    const calls = alpha.requests.length;
    const refused = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body: { fields: ['emails'], pronet: p.profile.toUpperCase() } });
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body.error.code).toBe('person_suppressed');
    expect(alpha.requests.length).toBe(calls);
    expect((await app.http('GET', '/credits/balance', { apiKey: ws.apiKey })).body.data.balance).toBe(balanceBefore);
    expect((await app.pool.query(`select 1 from contacts where workspace_id = $1 and work_email = $2`, [ws.workspaceId, p.email])).rowCount).toBe(0);

    // the audit trail lists the test's writes under the workspace key (and, as the table scan above
    // showed, holds none of the person's data)
    const keyId = (await app.pool.query<{ id: string }>(`select id from api_keys where key_hash = $1`, [hashKey(ws.apiKey)])).rows[0]!.id;
    const trail = await app.http('GET', '/audit-events?limit=1000', { apiKey: ws.apiKey });
    expect(trail.status, JSON.stringify(trail.body)).toBe(200);
    const events = trail.body.data as { action: string; actor: { apiKeyId: string | null; kind: string }; status: number | null }[];
    const count = (action: string) => events.filter((e) => e.action === action && e.actor.apiKeyId === keyId && e.actor.kind === 'workspace').length;
    // two sources, the pronetInbound one, three bulk upserts (the first, the file's, the re-import),
    // one upload, one enrichment start and the refused one, two pulls, one access and one erasure request
    expect({
      'source.create': count('source.create'),
      'contact.bulkUpsert': count('contact.bulkUpsert'),
      'contactFile.upload': count('contactFile.upload'),
      'enrichment.start': count('enrichment.start'),
      'source.pull': count('source.pull'),
      'access.request': count('access.request'),
      'erasure.request': count('erasure.request'),
    }).toEqual({ 'source.create': 3, 'contact.bulkUpsert': 3, 'contactFile.upload': 1, 'enrichment.start': 2, 'source.pull': 2, 'access.request': 1, 'erasure.request': 1 });
    expect(events.every((e) => e.actor.apiKeyId === keyId)).toBe(true);
    expect(JSON.stringify(trail.body).toLowerCase()).not.toContain(p.email.toLowerCase());
    expect(JSON.stringify(trail.body)).not.toContain(p.first);

    // a second erasure of the same person finds nothing left
    const again = await app.waitForJob(await erase(ws, { emails: [p.email] }), ws.apiKey, 60_000);
    expect(again.jobResponsePayload.database).toMatchObject({ contacts: 0, contactSources: 0, suppressionEntriesAdded: 0 });
  }, 180_000);

  it('finishes with the same report after the worker is killed mid-job', async () => {
    const ws = await app.createWorkspace({ credits: 100 });
    const p = person();
    const src = await source(ws);
    await enrich(ws, p);
    await bulkUpsert(ws, src, [{ 'First Name': p.first, 'Last Name': 'Doe', Email: p.email, Profile: p.profile }]);
    await fileImport(ws, src, `First Name,Last Name,Email,Profile\r\n${p.first},Doe,${p.email},${p.profile}\r\n`);
    const jobId = await erase(ws, { profileUrls: [p.profile] });
    // Kill as soon as the first step has committed its part of the request.
    await until('a step to commit', () => app.pool.query(`select plan from erasure_requests where id = $1`, [jobId]), (r) => r.rows[0]?.plan != null, 30_000);
    await app.killWorker();
    await app.startWorker();
    const job = await app.waitForJob(jobId, ws.apiKey, 90_000);
    expect(job.jobStatus, JSON.stringify(job)).toBe('completed');
    expect(job.jobResponsePayload).toEqual({
      database: { contacts: 1, contactSources: 1, identityLogEntries: expect.any(Number), stagedRows: 0, idempotencyRecords: 0, suppressionEntriesAdded: 2 },
      objectStore: { objects: 1 },
      temporal: { workflowExecutions: 1, jobs: 1 },
    });
    const row = await app.pool.query(`select identifiers from erasure_requests where id = $1`, [jobId]);
    expect(row.rows[0].identifiers).toBeNull();
  }, 180_000);

  it('adds, lists and removes do-not-contact entries; an entry blocks an import until removed', async () => {
    const ws = await app.createWorkspace();
    const p = person();
    const src = await source(ws);
    const added = await app.http('POST', '/privacy/suppressions', { apiKey: ws.apiKey, body: { emails: [p.email] } });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body.data.added).toBe(1);
    const hash = added.body.data.entries[0].identifierHash;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect((await app.pool.query(`select * from suppression_entries where workspace_id = $1`, [ws.workspaceId])).rows.map((r) => JSON.stringify(r)).join()).not.toContain(p.email);
    const blocked = await bulkUpsert(ws, src, [{ 'First Name': p.first, 'Last Name': 'Doe', Email: p.email.toUpperCase(), Profile: p.profile }]);
    expect(blocked.jobResponsePayload).toMatchObject({ created: 0, suppressed: 1 });
    const list = await app.http('GET', '/privacy/suppressions?limit=1', { apiKey: ws.apiKey });
    expect(list.body).toEqual({ data: [{ identifierHash: hash, kind: 'email', reason: 'doNotContact', createdAt: expect.any(String) }], nextCursor: null });
    expect((await app.http('DELETE', `/privacy/suppressions/${hash}`, { apiKey: ws.apiKey })).body).toEqual({ data: { removed: true } });
    const allowed = await bulkUpsert(ws, src, [{ 'First Name': p.first, 'Last Name': 'Doe', Email: p.email, Profile: p.profile }]);
    expect(allowed.jobResponsePayload).toMatchObject({ created: 1 });
    expect(allowed.jobResponsePayload.suppressed).toBeUndefined();
  });

  it('refuses a request that names nobody, and a malformed email', async () => {
    const ws = await app.createWorkspace();
    const none = await app.http('POST', '/privacy/erasure-requests', { apiKey: ws.apiKey, body: {} });
    expect(none.status).toBe(400);
    const bad = await app.http('POST', '/privacy/erasure-requests', { apiKey: ws.apiKey, body: { emails: ['not-an-email'] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details?.[0]?.path ?? bad.body.error.message).toMatch(/emails/);
  });
});
