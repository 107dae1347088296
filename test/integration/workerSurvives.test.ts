/**
 * No input an activity gets can end the worker process. The worker runs as a child process
 * (`workerMode: 'process'`); each case hands an activity something hostile and then checks that
 * the same child is still running and that later jobs still complete.
 *
 * Webhook headers HTTP cannot carry (issue 11): the API refuses them, so the job is started here
 * through the job path itself (`startJob`), as a job accepted before that validation existed
 * would run. `lib.request` throws synchronously for them; the delivery used to leave its 10 s
 * deadline timer armed, which then touched the uninitialised request and killed the worker.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJob } from '../../api/jobs.js';
import { inWorkspaceScope } from '../../db/tenancy.js';
import { loadEnrichmentConfig } from '../../infra/enrichmentConfigFile.js';
import { planEnrichment } from '../../domain/enrichmentPlan.js';
import type { EnrichmentWorkflowInput } from '../../workflows/contract/enrichment.js';
import { FakeLinkedIn } from '../fakes/linkedin.js';
import { FakeX } from '../fakes/x.js';
import { HOSTILE_MODES, startHostileServer, type HostileMode, type HostileServer } from '../fakes/hostile.js';
import { startTestApp, type TestApp } from '../harness.js';
import { png } from '../png.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


let app: TestApp;
let ws: { workspaceId: string; apiKey: string };
let hooks: { url: string; received: string[]; server: Server };
let workerPid: number | undefined;
let hostile: HostileServer;
/** Modes whose enrichment provider is called (an un-sendable header and a bad URL never reach the wire). */
const ENRICH_WIRE_MODES: HostileMode[] = [...HOSTILE_MODES];

beforeAll(async () => {
  hostile = await startHostileServer();
  const httpProvider = (mode: string) => ({ type: 'http', baseUrl: `${hostile.url}/${mode}`, timeoutMs: 1500 });
  const enrichment = {
    providers: {
      dataset: { type: 'dataset' },
      ...Object.fromEntries(ENRICH_WIRE_MODES.map((m) => [`h_${m}`, httpProvider(m)])),
      h_badrequestheader: { ...httpProvider('reset'), headers: { 'bad name': 'x', 'x-crlf': 'a\r\nb' } },
      h_badurl: { type: 'http', baseUrl: 'http://bad host name', timeoutMs: 1500 },
    },
    waterfall: {
      basic_contact_data: ['dataset'],
      basic_company_data: ['dataset'],
      // At most 10 providers per slice: the modes are split over two slices.
      emails: [...ENRICH_WIRE_MODES.slice(0, 8).map((m) => `h_${m}`), 'dataset'],
      phoneNumbers: [...ENRICH_WIRE_MODES.slice(8).map((m) => `h_${m}`), 'h_badrequestheader', 'h_badurl'],
      pronetPosts: [],
    },
    retry: { maxAttempts: 2, initialIntervalMs: 100, maxIntervalMs: 200, maxRetryAfterMs: 1000 },
  };
  const received: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.url ?? '');
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hooks = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
  app = await startTestApp({
    workerMode: 'process',
    env: {
      ENRICHMENT_CONFIG: JSON.stringify(enrichment),
      LISTENING_PROVIDER: 'http',
      LISTENING_BASE_URL: `${hostile.url}/listen`,
      LISTENING_API_KEY: 'k',
      LISTENING_TIMEOUT_MS: '1500',
      PROVIDER_TIMEOUT_MS: '1500',
    },
  });
  ws = await app.createWorkspace({ credits: 1000 });
  workerPid = app.workerProcess()?.pid;
  expect(workerPid).toBeTypeOf('number');
}, 60_000);

afterAll(async () => {
  await app?.close();
  hooks?.server.close();
  await hostile?.close();
});

/** The worker child is the one that started and it is still running. */
function expectWorkerAlive() {
  const w = app.workerProcess();
  expect(w, 'worker child process').not.toBeNull();
  expect({ pid: w!.pid, alive: w!.alive, exitCode: w!.exitCode, signal: w!.signal }).toEqual({ pid: workerPid, alive: true, exitCode: null, signal: null });
}

/** An enrichment job (dataset provider only) started through the job path, bypassing API validation. */
async function enrichmentJob(webhook: { url: string; headers?: Record<string, string> } | null): Promise<string> {
  const plan = planEnrichment(
    { fields: ['basic_contact_data'], pronet: `https://www.pronet.example/in/nobody-${randomBytes(4).toString('hex')}/` } as never,
    loadEnrichmentConfig(app.config.rootDir, app.config.env),
  );
  const args: EnrichmentWorkflowInput = { plan, billable: true };
  // As the route does it: in the workspace's scope (row-level security, db/tenancy.ts).
  const accepted = await inWorkspaceScope(ws.workspaceId, () => startJob(app.deps, { workspaceId: ws.workspaceId, job: 'enrichment', args, webhook }));
  return accepted.jobId;
}

async function deliveries(jobId: string) {
  const r = await app.pool.query<{ attempt: number; status_code: number | null; error: string | null }>(
    `select attempt, status_code, error from webhook_deliveries where job_id = $1 order by attempt`,
    [jobId],
  );
  return r.rows;
}

async function waitForDelivery(jobId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await deliveries(jobId);
    if (rows.length) return rows;
    if (Date.now() > deadline) throw new Error(`no webhook delivery recorded for job ${jobId}`);
    await sleep(100);
  }
}

describe('webhook headers HTTP cannot carry', () => {
  it('fail the delivery once, without a retry, and the worker lives on', async () => {
    const hostile: Array<Record<string, string>> = [
      { 'bad name': 'x' },
      { 'x-crlf': 'a\r\nx-injected: 1' },
      { 'x-snowman': 'caf\u00e9 \u2603' },
      { 'x-nul': 'a\u0000b' },
    ];
    const jobs: string[] = [];
    for (const [i, headers] of hostile.entries()) jobs.push(await enrichmentJob({ url: `${hooks.url}/hostile-${i}`, headers }));
    for (const jobId of jobs) {
      const job = await app.waitForJob(jobId, ws.apiKey, 30_000);
      expect(job.jobStatus, JSON.stringify(job)).toBe('completed');
      const rows = await waitForDelivery(jobId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ attempt: 1, status_code: null });
      expect(rows[0]!.error).toMatch(/header/i);
    }
    // The old deadline timer fired 10 s after the request; a retry would come 5 s after the failure.
    await sleep(11_500);
    expectWorkerAlive();
    for (const jobId of jobs) expect(await deliveries(jobId)).toHaveLength(1);
    expect(hooks.received.filter((u) => u.startsWith('/hostile-'))).toEqual([]);

    // Later jobs still run and their webhooks still arrive.
    const after = await enrichmentJob({ url: `${hooks.url}/after`, headers: { 'x-fine': 'yes' } });
    expect((await app.waitForJob(after, ws.apiKey, 30_000)).jobStatus).toBe('completed');
    expect(await waitForDelivery(after)).toEqual([{ attempt: 1, status_code: 204, error: null }]);
    expect(hooks.received).toContain('/after');
    expectWorkerAlive();
  }, 90_000);
});

describe('every activity that talks HTTP, fed hostile input', () => {
  const x = new FakeX();
  const uploaders: FakeLinkedIn[] = [];
  afterAll(async () => {
    await x.close();
    await Promise.all(uploaders.map((l) => l.close()));
  });

  async function waitFor(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await cond())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(200);
    }
  }
  async function connect(provider: string, token: string, apiBaseUrl: string, externalAccountId = '4001'): Promise<string> {
    const r = await app.http('POST', '/integrations', {
      apiKey: ws.apiKey,
      body: { provider, name: `${provider} ${apiBaseUrl}`, externalAccountId, credentials: { accessToken: token }, apiBaseUrl },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.data.id;
  }
  async function schedule(providerId: string, content: string, fileName?: string): Promise<string> {
    const d = await app.http('POST', '/v1/posts', { apiKey: ws.apiKey, body: { providerId, content, ...(fileName ? { media: [{ fileName }] } : {}) } });
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    const at = new Date(Date.now() + 1000).toISOString();
    const b = await app.http('POST', '/v1/posts/bulk-schedule', { apiKey: ws.apiKey, body: { posts: [{ postId: d.body.data.id, schedules: [{ providerId, scheduledTime: at }] }] } });
    expect(b.status, JSON.stringify(b.body)).toBe(200);
    return d.body.data.id;
  }

  it('webhooks, enrichment and listening providers, X and LinkedIn adapters (uploads included), media import: the worker lives on', async () => {
    // The hostile server is on 127.0.0.1, which the harness's OUTBOUND_ALLOW_LIST names.
    const image = png(Buffer.alloc(6, 200));
    const form = new FormData();
    form.set('file', new Blob([image], { type: 'image/png' }), 'dot.png');
    const up = await app.http('POST', '/v1/media/upload', { apiKey: ws.apiKey, rawBody: form });
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    const fileName: string = up.body.data?.fileName ?? up.body.fileName;

    // 1. Webhook deliveries to every mode, and to URLs that are not URLs.
    const hookJobs: string[] = [];
    for (const m of HOSTILE_MODES) hookJobs.push(await enrichmentJob({ url: `${hostile.url}/${m}/hook` }));
    for (const url of ['not a url', 'http://', 'ftp://127.0.0.1/x', 'http://user:pw@127.0.0.1/']) hookJobs.push(await enrichmentJob({ url }));

    // 2. Enrichment through every hostile provider, an un-sendable provider header and a bad base URL.
    const e = await app.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body: { fields: ['emails', 'phoneNumbers'], pronet: 'https://www.pronet.example/in/hostile/' } });
    expect(e.status, JSON.stringify(e.body)).toBe(202);

    // 3. Listening pulls, one per mode (the mode travels in the keyword).
    const pulls: string[] = [];
    for (const m of HOSTILE_MODES) {
      const src = await app.http('POST', '/sources', { apiKey: ws.apiKey, body: { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: `mode=${m}` } } });
      expect(src.status, JSON.stringify(src.body)).toBe(200);
      const r = await app.http('POST', `/sources/pull-contacts-from-source/${src.body.data.id}`, { apiKey: ws.apiKey, body: {} });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      pulls.push(r.body.jobId);
    }

    // 4. X and LinkedIn adapters whose API is hostile (media upload first), an access token HTTP
    //    cannot carry, and LinkedIn upload URLs that point at the hostile server.
    await x.listen();
    x.addUser('4001', 'x-token');
    for (const m of HOSTILE_MODES) {
      await schedule(await connect('microblog', 'x-token', `${hostile.url}/${m}`), `x ${m}`, fileName);
      await schedule(await connect('pronet', 'li-token', `${hostile.url}/${m}`, 'dora'), `li ${m}`);
    }
    const badToken = await schedule(await connect('microblog', 'x-token\r\nx-evil: 1', x.url), 'x bad token');
    for (const m of ['reset', 'huge', 'slow', 'loop', 'badstatus', 'garbage'] as const) {
      const li = new FakeLinkedIn();
      uploaders.push(li);
      await li.listen();
      li.uploadBaseUrl = `${hostile.url}/${m}`;
      li.addAccount('li-token', ['urn:li:person:dora']);
      await schedule(await connect('pronet', 'li-token', li.url, 'dora'), `li upload ${m}`, fileName);
    }

    // 5. Media import (an API route, in this process): every mode answers 4xx, never 5xx.
    for (const m of HOSTILE_MODES) {
      const r = await app.http('POST', '/v1/media/import-from-url', { apiKey: ws.apiKey, body: { url: `${hostile.url}/${m}/file.png` } });
      expect([400, 413], `${m}: ${JSON.stringify(r.body)}`).toContain(r.status);
    }

    // Every activity met every mode before the worker is judged.
    await waitFor('webhook deliveries', () => HOSTILE_MODES.every((m) => hostile.count(m, '/hook') > 0));
    await waitFor('enrichment calls', () => ENRICH_WIRE_MODES.every((m) => hostile.count(m, '/v1/enrich') > 0));
    await waitFor('listening calls', () => HOSTILE_MODES.every((m) => hostile.received.some((r) => r.mode === m && r.path === '/listen/v1/audience')));
    await waitFor('X calls', () => HOSTILE_MODES.every((m) => hostile.count(m, '/2/media/upload') > 0));
    await waitFor('LinkedIn calls', () => HOSTILE_MODES.every((m) => hostile.count(m, '/rest/posts') > 0));
    await waitFor('LinkedIn uploads', () => (['reset', 'huge', 'slow', 'loop', 'badstatus', 'garbage'] as const).every((m) => hostile.count(m, '/upload/') > 0));
    const enrichment = await app.waitForJob(e.body.jobId, ws.apiKey, 60_000);
    expect(enrichment.jobStatus, JSON.stringify(enrichment)).toBe('completed');
    const slices = enrichment.jobResponsePayload.slices;
    const outcomes = [...slices.emails.attempts, ...slices.phoneNumbers.attempts].map((a: { provider: string; outcome: string }) => `${a.provider}:${a.outcome}`);
    expect(outcomes).toContain('h_badrequestheader:rejected');
    expect(outcomes).toContain('h_badurl:rejected');
    const bad = await waitForPost(badToken);
    expect(bad.status).toBe('failed');
    expect(bad.error.code).toBe('provider_request_invalid');
    for (const jobId of hookJobs) expect((await app.waitForJob(jobId, ws.apiKey)).jobStatus).toBe('completed');
    // A receiver that answers 200 with an endless body got the event: delivered, once.
    expect(await deliveries(hookJobs[HOSTILE_MODES.indexOf('huge')]!)).toEqual([{ attempt: 1, status_code: 200, error: null }]);

    // Timers of the first attempts have all fired by now (deadlines ≤ 10 s).
    await sleep(11_000);
    expectWorkerAlive();
    for (const jobId of pulls) expect(['failed', 'running', 'queued']).toContain((await app.http('GET', `/jobs/${jobId}`, { apiKey: ws.apiKey })).body.data.jobStatus);
    const later = await enrichmentJob({ url: `${hooks.url}/later` });
    expect((await app.waitForJob(later, ws.apiKey, 30_000)).jobStatus).toBe('completed');
    await waitFor('the later webhook', () => hooks.received.includes('/later'), 20_000);
    expectWorkerAlive();
  }, 240_000);

  async function waitForPost(id: string) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const p = (await app.http('GET', `/v1/posts/${id}`, { apiKey: ws.apiKey })).body.data;
      if (!['draft', 'scheduled', 'publishing'].includes(p.status)) return p;
      if (Date.now() > deadline) throw new Error(`post ${id} still ${p.status}`);
      await sleep(200);
    }
  }
});
