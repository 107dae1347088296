/**
 * Bulk enrichment on the real stack (issue 32) against two fake HTTP providers: a 1,000-row
 * segment with two slices matches the single-row path and charges what its traces say; a second
 * run within the freshness window charges 0; `maxCredits` stops at the right row; a worker
 * SIGKILLed mid-job finishes with the same charges and writes as an undisturbed run; cancel
 * stops within a second and reports the rows done.
 *
 * The fakes' data: basic_contact_data found by alpha for 9 rows in 10; emails found by alpha for
 * i % 3 == 0 (4 credits), by beta for i % 3 == 1 (5 credits: two providers tried), by nobody else.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import { startTestApp, type TestApp } from '../harness.js';
import { startFakeEnrichmentProvider, type FakeEnrichmentProvider } from '../fakes/enrichmentProvider.js';
import { normalizeProfileUrl } from '../../domain/identity.js';

let app: TestApp;
let alpha: FakeEnrichmentProvider;
let beta: FakeEnrichmentProvider;

const PEOPLE = 1000;
const profile = (i: number) => `https://pronet.example/in/bulk-${i}`;
const basicHit = (i: number) => i % 10 !== 0;
const emailPrice = (i: number) => (i % 3 === 0 ? 4 : i % 3 === 1 ? 5 : 0);
const rowPrice = (i: number) => (basicHit(i) ? 1 : 0) + emailPrice(i);

beforeAll(async () => {
  alpha = await startFakeEnrichmentProvider('alpha');
  beta = await startFakeEnrichmentProvider('beta');
  for (let i = 0; i < PEOPLE; i++) {
    if (basicHit(i)) alpha.setData(profile(i), 'basic_contact_data', { contact: { fullName: `Bulk Person ${i}`, title: `Engineer ${i}` } });
    if (i % 3 === 0) alpha.setData(profile(i), 'emails', { emails: [{ email: `p${i}@alpha.example`, status: 'valid' }] });
    if (i % 3 === 1) beta.setData(profile(i), 'emails', { emails: [{ email: `p${i}@beta.example`, status: 'valid' }] });
  }
  const config = {
    providers: {
      alpha: { type: 'http', baseUrl: alpha.baseUrl, apiKeyEnv: 'BULK_ALPHA_KEY', timeoutMs: 2000 },
      beta: { type: 'http', baseUrl: beta.baseUrl, apiKeyEnv: 'BULK_BETA_KEY', timeoutMs: 2000 },
    },
    waterfall: { basic_contact_data: ['alpha'], emails: ['alpha', 'beta'] },
    retry: { maxAttempts: 3, initialIntervalMs: 50, maxIntervalMs: 500, maxRetryAfterMs: 2000 },
  };
  app = await startTestApp({ workerMode: 'process', env: { BULK_ALPHA_KEY: alpha.apiKey, BULK_BETA_KEY: beta.apiKey, ENRICHMENT_CONFIG: JSON.stringify(config) } });
}, 60_000);

afterAll(async () => {
  await app?.close();
  await alpha?.close();
  await beta?.close();
});

/** A workspace with contacts 0 … n-1 (ids in row order) and its default segment. */
async function workspaceWith(n: number, credits: number) {
  const ws = await app.createWorkspace({ credits });
  const ids = Array.from({ length: n }, () => uuidv7());
  await app.pool.query(
    `insert into contacts (id, workspace_id, pronet, pronet_key, full_name)
     select id, $1, p, k, null from unnest($2::uuid[], $3::text[], $4::text[]) as x(id, p, k)`,
    [ws.workspaceId, ids, ids.map((_, i) => profile(i)), ids.map((_, i) => normalizeProfileUrl(profile(i)))],
  );
  const segmentId = uuidv7();
  await app.pool.query(`insert into segments (id, workspace_id, name, is_default) values ($1, $2, 'All contacts', true)`, [segmentId, ws.workspaceId]);
  return { ...ws, ids, segmentId };
}

const summary = async (apiKey: string, jobId: string) => (await app.http('GET', `/contacts/bulk-enrichment/${jobId}`, { apiKey })).body.data;
async function allRows(apiKey: string, jobId: string) {
  const rows: any[] = [];
  for (let after = -1; ; ) {
    const res = await app.http('GET', `/contacts/bulk-enrichment/${jobId}/rows?after=${after}&limit=1000`, { apiKey });
    expect(res.status).toBe(200);
    rows.push(...res.body.data);
    if (res.body.meta.nextAfter === null) return rows;
    after = res.body.meta.nextAfter;
  }
}
const ledgerOf = async (jobId: string) =>
  (await app.pool.query<{ amount: number; idempotency_key: string }>(`select amount, idempotency_key from credit_transactions where job_id = $1 order by idempotency_key`, [jobId])).rows;
async function start(apiKey: string, body: unknown) {
  const res = await app.http('POST', '/contacts/bulk-enrichment', { apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.jobId as string;
}
async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 30_000) {
  for (const deadline = Date.now() + timeoutMs; !(await fn()); await new Promise((r) => setTimeout(r, 25))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

it('enriches a 1,000-row segment like the single-row path, charges what the traces say, and charges 0 again within the freshness window', { timeout: 120_000 }, async () => {
  const ws = await workspaceWith(PEOPLE, 100_000);
  const body = { fields: ['basic_contact_data', 'emails'], segmentId: ws.segmentId };
  const expected = Array.from({ length: PEOPLE }, (_, i) => rowPrice(i)).reduce((a, b) => a + b, 0);

  const est = await app.http('POST', '/contacts/bulk-enrichment/estimate', { apiKey: ws.apiKey, body });
  expect(est.status).toBe(200);
  expect(est.body.data).toMatchObject({ rows: PEOPLE, rowsToEnrich: PEOPLE, minCredits: PEOPLE * (1 + 4), maxCredits: PEOPLE * (1 + 5) });
  expect(alpha.requests.length + beta.requests.length).toBe(0);

  // The first emails calls are rate limited: they wait, they do not fail rows.
  alpha.script('emails', { status: 429, retryAfter: '0.2' }, { status: 429, retryAfter: '0.2' });
  const jobId = await start(ws.apiKey, body);
  const job = await app.waitForJob(jobId, ws.apiKey, 90_000);
  expect(job.jobStatus).toBe('completed');
  expect(job.jobResponsePayload).toMatchObject({ rows: PEOPLE, done: PEOPLE, notReached: 0, creditsCharged: expected, stoppedBy: null });
  expect(job.jobResponsePayload.slices.emails).toMatchObject({ found: 667, not_found: 333, failed: 0 });

  const rows = await allRows(ws.apiKey, jobId);
  const bySeq = new Map(rows.map((r) => [ws.ids.indexOf(r.contactId), r]));
  expect(rows.map((r) => r.credits).reduce((a, b) => a + b, 0)).toBe(expected);
  for (let i = 0; i < PEOPLE; i++) expect(bySeq.get(i)!.credits, `row ${i}`).toBe(rowPrice(i));
  expect(rows.some((r) => r.trace.slices.emails.attempts.some((a: any) => a.rateLimitedWaits > 0))).toBe(true);
  const ledger = await ledgerOf(jobId);
  expect(-ledger.reduce((s, l) => s + l.amount, 0)).toBe(expected);
  expect(new Set(ledger.map((l) => l.idempotency_key)).size).toBe(ledger.length);
  expect((await app.http('GET', '/credits/balance', { apiKey: ws.apiKey })).body.data.balance).toBe(100_000 - expected);

  // Written back with provenance.
  const c1 = (await app.http('GET', `/contacts/${ws.ids[1]}`, { apiKey: ws.apiKey })).body.data;
  expect(c1).toMatchObject({ fullName: 'Bulk Person 1', title: 'Engineer 1', emails: ['p1@beta.example'] });
  const prov = (await app.http('GET', `/contacts/${ws.ids[1]}/enrichment`, { apiKey: ws.apiKey })).body.data;
  expect(prov.map((p: any) => [p.slice, p.provider, p.jobId, p.fields])).toEqual([
    ['basic_contact_data', 'alpha', jobId, ['fullName', 'title']],
    ['emails', 'beta', jobId, ['emails']],
  ]);

  // The single-row path on a sample of each kind of row: same outcome, same price.
  for (const i of [0, 1, 2, 3, 10, 11]) {
    const res = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body: { fields: body.fields, pronet: profile(i) } });
    const single = (await app.waitForJob(res.body.jobId, ws.apiKey)).jobResponsePayload;
    const trace = bySeq.get(i)!.trace;
    expect(single.creditsCharged, `row ${i}`).toBe(trace.credits);
    for (const s of body.fields) {
      expect(trace.slices[s].status).toBe(single.slices[s].status);
      expect(trace.slices[s].provider).toBe(single.slices[s].provider);
      expect(trace.slices[s].attempts.map((a: any) => `${a.provider}:${a.outcome}`)).toEqual(single.slices[s].attempts.map((a: any) => `${a.provider}:${a.outcome}`));
    }
  }

  // Within the freshness window: nothing found before is bought again.
  const calls = alpha.requests.length + beta.requests.length;
  const again = await start(ws.apiKey, body);
  const second = (await app.waitForJob(again, ws.apiKey, 60_000)).jobResponsePayload;
  expect(second).toMatchObject({ done: PEOPLE, creditsCharged: 0 });
  expect(second.slices.basic_contact_data.fresh).toBe(900);
  expect(second.slices.emails.fresh).toBe(667);
  expect(await ledgerOf(again)).toEqual([]);
  // Only the misses were asked again (100 basic, 333 emails × 2 providers).
  expect(alpha.requests.length + beta.requests.length - calls).toBe(100 + 333 * 2);
});

it('stops before the first row whose charges would pass maxCredits', { timeout: 60_000 }, async () => {
  const n = 60;
  const ws = await workspaceWith(n, 1000);
  const maxCredits = 97;
  let spent = 0;
  let stop = 0;
  while (stop < n && spent + rowPrice(stop) <= maxCredits) spent += rowPrice(stop++);
  const jobId = await start(ws.apiKey, { fields: ['basic_contact_data', 'emails'], contactIds: ws.ids, maxCredits });
  const job = await app.waitForJob(jobId, ws.apiKey, 30_000);
  expect(job.jobResponsePayload).toMatchObject({ rows: n, done: stop, notReached: n - stop, creditsCharged: spent, stoppedBy: 'max_credits' });
  const rows = await allRows(ws.apiKey, jobId);
  expect(rows.map((r) => r.status)).toEqual([...Array(stop).fill('done'), ...Array(n - stop).fill('not_reached')]);
  expect(-(await ledgerOf(jobId)).reduce((s, l) => s + l.amount, 0)).toBe(spent);
  // The row not reached was not written.
  expect((await app.http('GET', `/contacts/${ws.ids[stop]}/enrichment`, { apiKey: ws.apiKey })).body.data).toEqual([]);
});

it('finishes after a worker SIGKILL mid-job with the same charges and writes as an undisturbed run', { timeout: 120_000 }, async () => {
  const n = 400;
  const quiet = await workspaceWith(n, 10_000);
  const crashed = await workspaceWith(n, 10_000);
  alpha.setLatency(15);
  beta.setLatency(15);
  try {
    const body = (ids: string[]) => ({ fields: ['basic_contact_data', 'emails'], contactIds: ids });
    const quietJob = await start(quiet.apiKey, body(quiet.ids));
    await app.waitForJob(quietJob, quiet.apiKey, 60_000);

    const jobId = await start(crashed.apiKey, body(crashed.ids));
    await until('a quarter of the rows', async () => (await summary(crashed.apiKey, jobId)).done >= n / 4);
    await app.killWorker();
    const atKill = (await summary(crashed.apiKey, jobId)).done;
    expect(atKill).toBeLessThan(n);
    await app.startWorker();
    const job = await app.waitForJob(jobId, crashed.apiKey, 90_000);
    expect(job.jobStatus).toBe('completed');

    const a = await allRows(quiet.apiKey, quietJob);
    const b = await allRows(crashed.apiKey, jobId);
    expect(b.map((r) => [r.status, r.credits])).toEqual(a.map((r) => [r.status, r.credits]));
    const keys = (l: { amount: number; idempotency_key: string }[], ids: string[], job: string) =>
      l.map((x) => `${x.amount}:${x.idempotency_key.replace(job, 'JOB').replace(/[0-9a-f-]{36}(?=:[a-zA-Z_]+$)/, (id) => String(ids.indexOf(id)))}`).sort();
    expect(keys(await ledgerOf(jobId), crashed.ids, jobId)).toEqual(keys(await ledgerOf(quietJob), quiet.ids, quietJob));
    const contacts = async (wsId: string, ids: string[]) =>
      (await app.pool.query(`select id, full_name, title, emails, (select count(*) from contact_enrichments e where e.contact_id = c.id)::int as slices from contacts c where workspace_id = $1`, [wsId])).rows
        .map((r) => ({ ...r, id: ids.indexOf(r.id) }))
        .sort((x, y) => x.id - y.id);
    expect(await contacts(crashed.workspaceId, crashed.ids)).toEqual(await contacts(quiet.workspaceId, quiet.ids));
  } finally {
    alpha.setLatency(0);
    beta.setLatency(0);
  }
});

it('pauses, resumes, and cancels within a second reporting the rows done', { timeout: 60_000 }, async () => {
  const n = 600;
  const ws = await workspaceWith(n, 10_000);
  alpha.setLatency(20);
  beta.setLatency(20);
  try {
    const jobId = await start(ws.apiKey, { fields: ['emails'], contactIds: ws.ids });
    await until('some rows', async () => (await summary(ws.apiKey, jobId)).done >= 100);
    const paused = await app.http('POST', `/contacts/bulk-enrichment/${jobId}/pause`, { apiKey: ws.apiKey });
    expect(paused.body.data.state).toBe('paused');
    await new Promise((r) => setTimeout(r, 700));
    const whilePaused = (await summary(ws.apiKey, jobId)).done;
    await new Promise((r) => setTimeout(r, 700));
    expect((await summary(ws.apiKey, jobId)).done).toBe(whilePaused);
    expect((await app.http('POST', `/contacts/bulk-enrichment/${jobId}/resume`, { apiKey: ws.apiKey })).body.data.state).toBe('running');
    await until('more rows', async () => (await summary(ws.apiKey, jobId)).done >= whilePaused + 100);

    const t0 = Date.now();
    const cancel = await app.http('POST', `/contacts/bulk-enrichment/${jobId}/cancel`, { apiKey: ws.apiKey });
    const took = Date.now() - t0;
    expect(cancel.status).toBe(200);
    expect(took).toBeLessThan(1000);
    const reported = cancel.body.data;
    expect(reported).toMatchObject({ state: 'cancelled', stoppedBy: 'cancelled', pending: 0 });
    expect(reported.done + reported.cancelled).toBe(n);
    expect(reported.done).toBeLessThan(n);
    // Nothing settles after the cancel: the rows done and the ledger stay as reported.
    await new Promise((r) => setTimeout(r, 1500));
    const later = await summary(ws.apiKey, jobId);
    expect(later.done).toBe(reported.done);
    expect(-(await ledgerOf(jobId)).reduce((s, l) => s + l.amount, 0)).toBe(reported.creditsCharged);
    expect((await app.waitForJob(jobId, ws.apiKey)).jobStatus).toBe('cancelled');
    // An ended job answers 409 job_not_running, a code its operation documents (fuzzer, seed
    // 313952331: the 409's published schema listed only `conflict`).
    const again = await app.http('POST', `/contacts/bulk-enrichment/${jobId}/resume`, { apiKey: ws.apiKey });
    expect(again.status, JSON.stringify(again.body)).toBe(409);
    expect(again.body.error.code).toBe('job_not_running');
    const doc = (await app.http('GET', '/openapi.json')).body;
    const ref = doc.paths['/contacts/bulk-enrichment/{jobId}/{action}'].post.responses['409'].content['application/json'].schema.$ref as string;
    expect(doc.components.schemas[ref.split('/').pop()!].properties.error.properties.code.enum).toContain('job_not_running');
  } finally {
    alpha.setLatency(0);
    beta.setLatency(0);
  }
});

it('answers bad selections with a clear error', async () => {
  const ws = await workspaceWith(2, 10);
  const none = await app.http('POST', '/contacts/bulk-enrichment', { apiKey: ws.apiKey, body: { fields: ['emails'] } });
  expect([none.status, none.body.error.code]).toEqual([400, 'selection_required']);
  const unknown = uuidv7();
  const missing = await app.http('POST', '/contacts/bulk-enrichment/estimate', { apiKey: ws.apiKey, body: { fields: ['emails'], contactIds: [ws.ids[0], unknown] } });
  expect([missing.status, missing.body.error.code]).toEqual([404, 'contacts_not_found']);
  expect(missing.body.error.message).toContain(unknown);
  const both = await app.http('POST', '/contacts/bulk-enrichment', { apiKey: ws.apiKey, body: { fields: ['emails'], contactIds: [ws.ids[0]], segmentId: ws.segmentId } });
  expect([both.status, both.body.error.code]).toEqual([400, 'selection_conflict']);
});
