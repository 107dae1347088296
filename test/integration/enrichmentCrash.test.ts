/**
 * A worker process SIGKILLed in the middle of an enrichment job: a restarted worker finishes the
 * job from its history, the interrupted provider call is retried (same request id), and every
 * slice is charged exactly once: the hold taken at acceptance survives the crash and is released,
 * in the same transaction as the charges, exactly once.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import { startTestApp, type TestApp } from '../harness.js';
import { startFakeEnrichmentProvider, type FakeEnrichmentProvider } from '../fakes/enrichmentProvider.js';
import { normalizeProfileUrl } from '../../domain/identity.js';

let app: TestApp;
let alpha: FakeEnrichmentProvider;

beforeAll(async () => {
  alpha = await startFakeEnrichmentProvider('alpha');
  const config = {
    providers: { dataset: { type: 'dataset' }, alpha: { type: 'http', baseUrl: alpha.baseUrl, apiKeyEnv: 'ENRICH_ALPHA_KEY', timeoutMs: 2000 } },
    waterfall: { basic_contact_data: ['dataset'], emails: ['alpha'] },
    retry: { maxAttempts: 5, initialIntervalMs: 100, maxIntervalMs: 1000 },
  };
  app = await startTestApp({ workerMode: 'process', env: { ENRICH_ALPHA_KEY: alpha.apiKey, ENRICHMENT_CONFIG: JSON.stringify(config) } });
});

afterAll(async () => {
  await app?.close();
  await alpha?.close();
});

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

it('finishes the job after a worker crash mid-job, charging each slice once', { timeout: 90_000 }, async () => {
  const ws = await app.createWorkspace({ credits: 100 });
  const who = `https://pronet.example/in/crash-${randomBytes(4).toString('hex')}`;
  await app.pool.query(`insert into ds_people (id, member_pronet_url, member_full_name) values ($1, $2, 'Crash Test')`, [uuidv7(), normalizeProfileUrl(who)]);
  // The first emails call hangs (the worker dies while waiting); the retry is answered.
  alpha.script('emails', { delayMs: 10_000 });
  alpha.setData(who, 'emails', { emails: [{ email: 'crash@acme.com', status: 'valid' }] });

  const res = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body: { fields: ['basic_contact_data', 'emails'], pronet: who } });
  expect(res.status).toBe(202);
  const jobId: string = res.body.jobId;
  const balance = async () => (await app.http('GET', '/credits/balance', { apiKey: ws.apiKey })).body.data.balance as number;

  // The dataset slice is done and the emails call is in flight: kill the worker now.
  const progress = async () => (await app.http('GET', `/jobs/${jobId}`, { apiKey: ws.apiKey })).body.data.progress?.completed as number | undefined; // null while no worker answers
  await until('the contact slice to finish', async () => (await progress()) === 1);
  await until('the emails call to reach the provider', async () => alpha.requestsFor(who).length === 1);
  await app.killWorker();
  const during = (await app.http('GET', `/jobs/${jobId}`, { apiKey: ws.apiKey })).body.data;
  expect(during.jobStatus).toBe('running');
  // The maximum price (1 + 4) is held since acceptance; nothing is settled yet.
  expect(await balance()).toBe(95);
  const held = await app.pool.query(`select amount, kind from credit_transactions where job_id = $1`, [jobId]);
  expect(held.rows).toEqual([{ amount: -5, kind: 'hold' }]);
  await app.startWorker();

  const job = await app.waitForJob(jobId, ws.apiKey, 60_000);
  expect(job.jobStatus).toBe('completed');
  const p = job.jobResponsePayload;
  expect(p.contact).toMatchObject({ fullName: 'Crash Test' });
  expect(p.emails).toEqual([{ email: 'crash@acme.com', status: 'valid', provider: 'alpha' }]);
  expect(p.slices.emails.attempts.map((a: any) => `${a.provider}:${a.outcome}`)).toEqual(['alpha:found']);
  expect(p.creditsCharged).toBe(1 + 4);
  expect(await balance()).toBe(95);
  const calls = alpha.requestsFor(who);
  expect(calls).toHaveLength(2);
  expect(calls.map((c) => c.headers['x-request-id'])).toEqual([`${jobId}:emails`, `${jobId}:emails`]);
  // The killed worker never reported the first call: Temporal retried it only once its
  // start-to-close timeout (provider timeout 2 s + 2 s margin) ran out.
  expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(3900);
  const ledger = await app.pool.query(`select amount, idempotency_key from credit_transactions where job_id = $1 order by idempotency_key`, [jobId]);
  expect(ledger.rows).toEqual([
    { amount: -1, idempotency_key: `enrich:${jobId}:basic_contact_data` },
    { amount: -4, idempotency_key: `enrich:${jobId}:emails` },
    { amount: -5, idempotency_key: `hold:${jobId}` },
    { amount: 5, idempotency_key: `release:${jobId}` },
  ]);
  await app.recordHistory(`enrichment-${jobId}`, 'enrichment/worker-crash');
});
