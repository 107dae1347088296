/**
 * The platform's job path, end to end through a real job type (enrichment): 202 → GET /jobs
 * while running (status query) and after closing (workflow result), cancel, Idempotency-Key
 * replay, and the webhook carrying the same payload as GET /jobs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { startTestApp, type TestApp } from '../harness.js';
import { startFakeEnrichmentProvider, type FakeEnrichmentProvider } from '../fakes/enrichmentProvider.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhookReceiver.js';

let app: TestApp;
let slow: FakeEnrichmentProvider;
let hooks: WebhookReceiver;

const profile = (n: number) => `https://www.pronet.com/in/job-test-${n}`;

beforeAll(async () => {
  slow = await startFakeEnrichmentProvider('slow');
  hooks = await startWebhookReceiver({ status: 200 });
  const config = {
    providers: { slow: { type: 'http', baseUrl: slow.baseUrl, apiKeyEnv: 'ENRICH_SLOW_KEY', timeoutMs: 20_000 } },
    waterfall: { basic_contact_data: ['slow'] },
  };
  app = await startTestApp({ env: { ENRICH_SLOW_KEY: slow.apiKey, ENRICHMENT_CONFIG: JSON.stringify(config) } });
});

afterAll(async () => {
  await app?.close();
  await slow?.close();
  await hooks?.close();
});

const enrich = (apiKey: string, n: number, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  app.http('POST', '/contacts/unified-data-api', { apiKey, headers, body: { fields: ['basic_contact_data'], pronet: profile(n), ...extra } });

describe('jobs', () => {
  it('reports running with progress from the workflow, then completed with the result', async () => {
    const ws = await app.createWorkspace({ credits: 10 });
    slow.setData(profile(1), 'basic_contact_data', { contact: { firstName: 'Ada', lastName: 'Lovelace', fullName: 'Ada Lovelace' } });
    slow.script('basic_contact_data', { delayMs: 1500 });
    const accepted = await enrich(ws.apiKey, 1);
    expect(accepted.status).toBe(202);
    expect(accepted.body.jobStatusEndpoint).toBe(`${app.url}/jobs/${accepted.body.jobId}`);
    const early = await app.http('GET', `/jobs/${accepted.body.jobId}`, { apiKey: ws.apiKey });
    expect(early.status).toBe(200);
    expect(['queued', 'running']).toContain(early.body.data.jobStatus);
    expect(early.body.data).toMatchObject({ id: accepted.body.jobId, type: 'enrichment', error: null });
    const done = await app.waitForJob(accepted.body.jobId, ws.apiKey);
    expect(done.jobStatus).toBe('completed');
    expect(done.progress.percent).toBe(100);
    expect(done.jobResponsePayload.slices.basic_contact_data.status).toBe('found');
    // Another workspace cannot see it.
    const other = await app.createWorkspace();
    expect((await app.http('GET', `/jobs/${accepted.body.jobId}`, { apiKey: other.apiKey })).status).toBe(404);
  });

  it('cancels a running job', async () => {
    const ws = await app.createWorkspace({ credits: 10 });
    slow.script('basic_contact_data', { delayMs: 15_000 });
    const accepted = await enrich(ws.apiKey, 2);
    expect(accepted.status).toBe(202);
    const cancelled = await app.http('POST', `/jobs/${accepted.body.jobId}/cancel`, { apiKey: ws.apiKey });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data.jobStatus).toBe('cancelled');
    const again = await app.http('POST', `/jobs/${accepted.body.jobId}/cancel`, { apiKey: ws.apiKey });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('job_not_running');
    expect((await app.http('GET', '/credits/balance', { apiKey: ws.apiKey })).body.data.balance).toBe(10);
  });

  it('replays an Idempotency-Key: same response, one workflow, one debit; other body 422', async () => {
    const ws = await app.createWorkspace({ credits: 10 });
    slow.setData(profile(3), 'basic_contact_data', { contact: { firstName: 'Grace', lastName: 'Hopper', fullName: 'Grace Hopper' } });
    const first = await enrich(ws.apiKey, 3, {}, { 'Idempotency-Key': 'k-1' });
    expect(first.status).toBe(202);
    const replay = await enrich(ws.apiKey, 3, {}, { 'Idempotency-Key': 'k-1' });
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    // Verbatim: the same bytes (key order included), not only equal values.
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'));
    const changed = await enrich(ws.apiKey, 4, {}, { 'Idempotency-Key': 'k-1' });
    expect(changed.status).toBe(422);
    expect(changed.body.error.code).toBe('idempotency_key_reused');
    await app.waitForJob(first.body.jobId, ws.apiKey);
    const jobs = await app.pool.query(`select count(*)::int as n from jobs where workspace_id = $1`, [ws.workspaceId]);
    expect(jobs.rows[0].n).toBe(1);
    expect((await app.http('GET', '/credits/balance', { apiKey: ws.apiKey })).body.data.balance).toBe(9);
    // A request rejected by validation stores nothing: the key stays free for a valid request.
    const invalid = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, headers: { 'Idempotency-Key': 'k-2' }, body: { fields: [] } });
    expect(invalid.status).toBe(400);
    expect((await enrich(ws.apiKey, 5, {}, { 'Idempotency-Key': 'k-2' })).status).toBe(202);
  });

  it("a keyed request removes its workspace's records older than 24 h, whatever their key", async () => {
    // Found in review: an expired record was removed only when its own key came back, so every key
    // never reused stayed in idempotency_records for ever.
    const ws = await app.createWorkspace({ credits: 10 });
    const other = await app.createWorkspace({ credits: 10 });
    const record = (workspaceId: string, key: string, age: string) =>
      app.pool.query(
        `insert into idempotency_records (workspace_id, idempotency_key, method, path, request_hash, status, response_body, created_at, completed_at)
         values ($1, $2, 'POST', '/contacts/unified-data-api', 'h', 202, '{}', now() - $3::interval, now() - $3::interval)`,
        [workspaceId, key, age],
      );
    await record(ws.workspaceId, 'old-1', '25 hours');
    await record(ws.workspaceId, 'old-2', '30 days');
    await record(ws.workspaceId, 'recent', '23 hours');
    await record(other.workspaceId, 'old-3', '25 hours');
    slow.setData(profile(7), 'basic_contact_data', { contact: { firstName: 'Ada', lastName: 'Lovelace', fullName: 'Ada Lovelace' } });
    const accepted = await enrich(ws.apiKey, 7, {}, { 'Idempotency-Key': 'k-new' });
    expect(accepted.status).toBe(202);
    await app.waitForJob(accepted.body.jobId, ws.apiKey);
    const keys = async (workspaceId: string) =>
      (await app.pool.query(`select idempotency_key as k from idempotency_records where workspace_id = $1 order by 1`, [workspaceId])).rows.map((r) => r.k);
    expect(await keys(ws.workspaceId)).toEqual(['k-new', 'recent']);
    // Another workspace's records are its own to sweep, on its next keyed request.
    expect(await keys(other.workspaceId)).toEqual(['old-3']);
  });

  it('notifies the webhook with the payload GET /jobs answers, signed, with the caller headers', async () => {
    const ws = await app.createWorkspace({ credits: 10 });
    slow.setData(profile(6), 'basic_contact_data', { contact: { firstName: 'Alan', lastName: 'Turing', fullName: 'Alan Turing' } });
    const accepted = await enrich(ws.apiKey, 6, { webhookConfiguration: { url: hooks.url, headers: { 'X-Tenant': 't-6' } } });
    expect(accepted.status).toBe(202);
    const done = await app.waitForJob(accepted.body.jobId, ws.apiKey);
    const hook = await hooks.waitFor((b) => b.jobId === accepted.body.jobId);
    expect(hook.headers['x-tenant']).toBe('t-6');
    expect(hook.headers['user-agent']).toBe('contact-data-api-webhooks/1');
    const payload = new Webhook(ws.webhookSecret).verify(hook.raw, hook.headers as Record<string, string>) as Record<string, unknown>;
    expect(payload).toMatchObject({ type: 'job.completed', jobId: accepted.body.jobId, jobType: 'enrichment', jobStatus: 'completed' });
    expect(payload.jobResponsePayload).toEqual(done.jobResponsePayload);
    const after = await app.http('GET', `/jobs/${accepted.body.jobId}`, { apiKey: ws.apiKey });
    expect(after.body.data.webhookDeliveries).toEqual([expect.objectContaining({ attempt: 1, statusCode: 200, error: null })]);
  });

  // Found by an outside probe: a caller's `User-Agent` (a name the API accepts: it is not one of the
  // reserved framing/signature headers) answered 202 and was then replaced by the service's own
  // user agent; the contract sends the notification "with the given headers".
  it('sends every caller header the API accepted, User-Agent included', async () => {
    const ws = await app.createWorkspace({ credits: 10 });
    slow.setData(profile(8), 'basic_contact_data', { contact: { firstName: 'Grace', lastName: 'Hopper', fullName: 'Grace Hopper' } });
    const accepted = await enrich(ws.apiKey, 8, { webhookConfiguration: { url: hooks.url, headers: { 'User-Agent': 'acme-receiver/2', 'X-Tenant': 't-8' } } });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    await app.waitForJob(accepted.body.jobId, ws.apiKey);
    const hook = await hooks.waitFor((b) => b.jobId === accepted.body.jobId);
    expect(hook.headers['user-agent']).toBe('acme-receiver/2');
    expect(hook.headers['x-tenant']).toBe('t-8');
    expect(new Webhook(ws.webhookSecret).verify(hook.raw, hook.headers as Record<string, string>)).toMatchObject({ jobId: accepted.body.jobId });
  });

  // Issue 27 item 5: a finished job whose webhook was still being retried answered 200 to cancel,
  // and the workflow went on retrying. The job has ended: cancel says so (409), like any ended job.
  it('answers 409 job_not_running to cancelling a finished job whose webhook is being retried', async () => {
    const failing = await startWebhookReceiver({ status: 503 });
    try {
      const ws = await app.createWorkspace({ credits: 10 });
      slow.setData(profile(9), 'basic_contact_data', { contact: { firstName: 'Edsger', lastName: 'Dijkstra', fullName: 'Edsger Dijkstra' } });
      const accepted = await enrich(ws.apiKey, 9, { webhookConfiguration: { url: failing.url } });
      expect(accepted.status).toBe(202);
      await app.waitForJob(accepted.body.jobId, ws.apiKey);
      await failing.waitFor((b) => b.jobId === accepted.body.jobId);
      const cancelled = await app.http('POST', `/jobs/${accepted.body.jobId}/cancel`, { apiKey: ws.apiKey });
      expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(409);
      expect(cancelled.body.error.code).toBe('job_not_running');
      const after = await app.http('GET', `/jobs/${accepted.body.jobId}`, { apiKey: ws.apiKey });
      expect(after.body.data.jobStatus).toBe('completed');
      expect(after.body.data.webhookDeliveries[0]).toMatchObject({ statusCode: 503 });
    } finally {
      await failing.close();
    }
  });

  it('refuses a webhook URL on a private address unless allow-listed', async () => {
    const ws = await app.createWorkspace({ credits: 10 });
    const res = await enrich(ws.apiKey, 7, { webhookConfiguration: { url: 'http://10.0.0.5/hook' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'url_not_allowed' });
    expect(res.body.error.details[0].path).toBe('/webhookConfiguration/url');
  });
});
