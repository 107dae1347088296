/**
 * What operators see, on the real stack with the worker as its own process (`worker/main.ts`,
 * as deployed): sealed Temporal payloads (no webhook header in clear in a job's history), the
 * remote codec endpoint, the request id in the job's memo, activity log lines with their
 * workflow/activity/workspace context, and `/metrics` of the API and the worker (with the
 * Temporal SDK's own series) after real requests, jobs, debits, webhooks and a publish.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer as createHttpServer, type Server } from 'node:http';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { createInterface } from 'node:readline';
import protoPackage from '@temporalio/proto';
import { ROOT_DIR } from '../../domain/config.js';
import { createPayloadCodec, ENCRYPTED_ENCODING } from '../../domain/payloadCodec.js';
import { freePort, startTestApp, type TestApp } from '../harness.js';
import { startFakeEnrichmentProvider, type FakeEnrichmentProvider } from '../fakes/enrichmentProvider.js';
import { FakeX } from '../fakes/x.js';
import { startFakeListeningProvider, type FakeListeningProvider } from '../fakes/listeningProvider.js';

let app: TestApp;
let provider: FakeEnrichmentProvider;
let hookServer: Server;
let hookUrl: string;
const hooks: string[] = [];
const x = new FakeX();
let worker: ChildProcess;
/** Every JSON line the worker process wrote to stdout. */
const workerLines: Array<Record<string, any>> = [];
let workerMetricsUrl: string;
let apiMetricsUrl: string;
let codecUrl: string;
let listening: FakeListeningProvider;
const codecToken = randomBytes(24).toString('hex');
const uiOrigin = 'http://127.0.0.1:8233';

const profile = (n: number) => `https://www.pronet.com/in/ops-test-${n}`;


beforeAll(async () => {
  provider = await startFakeEnrichmentProvider('ops');
  listening = await startFakeListeningProvider();
  await x.listen();
  x.addUser('3001', 'x-ops-token');
  hookServer = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hooks.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => hookServer.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(hookServer.address() as { port: number }).port}/hook`;
  const [metricsPort, codecPort] = [await freePort(), await freePort()];
  const enrichment = { providers: { ops: { type: 'http', baseUrl: provider.baseUrl, apiKeyEnv: 'ENRICH_OPS_KEY', timeoutMs: 20_000 } }, waterfall: { basic_contact_data: ['ops'] } };
  app = await startTestApp({
    workerMode: 'none',
    env: {
      ENRICH_OPS_KEY: provider.apiKey,
      ENRICHMENT_CONFIG: JSON.stringify(enrichment),
      METRICS_PORT: String(metricsPort),
      CODEC_PORT: String(codecPort),
      CODEC_AUTH_TOKEN: codecToken,
      CODEC_CORS_ORIGINS: uiOrigin,
      LISTENING_PROVIDER: 'http',
      LISTENING_BASE_URL: listening.baseUrl,
      LISTENING_API_KEY: listening.apiKey,
    },
  });
  apiMetricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  codecUrl = `http://127.0.0.1:${codecPort}`;

  // The deployed worker: its own process, its own metrics port (any free one; it logs the URL).
  worker = fork(join(ROOT_DIR, 'worker', 'main.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...app.config.env, WORKFLOW_BUNDLE_PATH: process.env.WORKFLOW_BUNDLE_PATH, METRICS_PORT: '0', CODEC_PORT: '', LOG_LEVEL: 'debug' },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  createInterface({ input: worker.stdout! }).on('line', (line) => {
    try {
      workerLines.push(JSON.parse(line));
    } catch {
      workerLines.push({ notJson: line });
    }
  });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('exit', (code) => reject(new Error(`worker exited with ${code}`)));
  });
  // The line may reach this process just after the 'ready' message does.
  for (let i = 0; i < 100 && !workerLines.some((l) => l.msg === 'worker running'); i++) await new Promise((r) => setTimeout(r, 50));
  workerMetricsUrl = workerLines.find((l) => l.msg === 'worker running')?.metricsUrl;
});

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((r) => worker.once('exit', r));
    worker.kill('SIGTERM');
    await exited;
  }
  await app?.close();
  await provider?.close();
  await listening?.close();
  await x.close();
  hookServer?.close();
});

const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64');

async function codec(path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${codecToken}` }) {
  const res = await fetch(codecUrl + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

/** `name{labels} value` lines of a Prometheus scrape, as name+labels → value. */
function series(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^(\S+?(?:\{.*\})?)\s+(\S+)(\s+\d+)?$/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

const sum = (s: Map<string, number>, prefix: string, ...labels: string[]) =>
  [...s].filter(([k]) => k.startsWith(prefix) && labels.every((l) => k.includes(l))).reduce((a, [, v]) => a + v, 0);

let jobWorkflowId = '';
let workspaceId = '';
const secretHeaderValue = `hdr-${randomBytes(12).toString('hex')}`;
const requestId = `req-ops-${randomBytes(6).toString('hex')}`;

describe('a job with webhook headers', () => {
  it('runs, keeps the request id in its memo, and seals its payloads in history', async () => {
    const ws = await app.createWorkspace({ credits: 10 });
    workspaceId = ws.workspaceId;
    provider.setData(profile(1), 'basic_contact_data', { contact: { firstName: 'Grace', lastName: 'Hopper', fullName: 'Grace Hopper' } });
    const accepted = await app.http('POST', '/contacts/unified-data-api', {
      apiKey: ws.apiKey,
      headers: { 'x-request-id': requestId },
      body: { fields: ['basic_contact_data'], pronet: profile(1), webhookConfiguration: { url: hookUrl, headers: { 'X-Receiver-Token': secretHeaderValue } } },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const done = await app.waitForJob(accepted.body.jobId, ws.apiKey);
    expect(done.jobStatus).toBe('completed');
    jobWorkflowId = `enrichment-${accepted.body.jobId}`;

    const handle = app.deps.temporal.workflow.getHandle(jobWorkflowId);
    const description = await handle.describe();
    expect(description.memo).toMatchObject({ requestId, jobId: accepted.body.jobId, workspaceId });

    // The raw history as the server stores and serves it: no header value anywhere in its bytes.
    const history = await handle.fetchHistory();
    const raw = Buffer.from(protoPackage.temporal.api.history.v1.History.encode(history).finish());
    expect(raw.includes(secretHeaderValue)).toBe(false);
    expect(raw.includes('Grace Hopper')).toBe(false);
    // … because it is sealed, not because it never travelled: the input opens with the key.
    const input = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    expect(Buffer.from(input.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
    const [opened] = await createPayloadCodec(app.config).decode([input]);
    expect(Buffer.from(opened!.data!).toString()).toContain(secretHeaderValue);
    await app.recordHistory(jobWorkflowId, 'enrichment/sealed-payloads-webhook-headers');
  });

  it('logs its activities as JSON lines carrying workflow, run, activity type and workspace', async () => {
    // Logged once the attempt is recorded, just after the receiver answered.
    const deliveryLine = () => workerLines.find((l) => l.msg === 'webhook delivery' && l.workflowId === jobWorkflowId);
    await expect.poll(deliveryLine, { timeout: 10_000 }).toBeTruthy();
    const delivery = deliveryLine();
    expect(delivery, JSON.stringify(workerLines.slice(-20))).toMatchObject({
      svc: 'worker',
      activityType: 'deliverWebhook',
      workspaceId,
      outcome: 'delivered',
      statusCode: 200,
      sdkComponent: 'activity',
    });
    expect(delivery!.runId).toMatch(/^[0-9a-f-]{36}$/);
    // For a pipeline merging many pods: ISO time, level by name, host and pid (issue 31).
    expect(delivery).toMatchObject({ level: 'info', hostname: hostname(), pid: worker.pid });
    expect(new Date(delivery!.time).toISOString()).toBe(delivery!.time);
    expect(JSON.stringify(delivery)).not.toContain(secretHeaderValue);
    // The SDK's own activity lifecycle lines go through the same logger, with the same context.
    const completed = workerLines.find((l) => l.msg === 'Activity completed' && l.workflowId === jobWorkflowId && l.workspaceId === workspaceId);
    expect(completed, 'an SDK "Activity completed" line with workspaceId').toBeTruthy();
    expect(workerLines.filter((l) => l.notJson)).toEqual([]);
  });
});

describe('codec endpoint', () => {
  const plain = { metadata: { encoding: b64('json/plain') }, data: b64('{"hello":"operator"}') };

  it('round-trips payloads for an operator and opens a real job input', async () => {
    const encoded = await codec('/encode', { payloads: [plain] });
    expect(encoded.status).toBe(200);
    expect(Buffer.from(encoded.body.payloads[0].metadata.encoding, 'base64').toString()).toBe(ENCRYPTED_ENCODING);
    expect(encoded.body.payloads[0].data).not.toBe(plain.data);
    const decoded = await codec('/decode', encoded.body);
    expect(decoded.status).toBe(200);
    expect(decoded.body.payloads).toEqual([plain]);
    // Unsealed payloads (old histories) pass through.
    expect((await codec('/decode', { payloads: [plain] })).body.payloads).toEqual([plain]);

    const history = await app.deps.temporal.workflow.getHandle(jobWorkflowId).fetchHistory();
    const input = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    const asJson = { metadata: Object.fromEntries(Object.entries(input.metadata!).map(([k, v]) => [k, b64(v)])), data: b64(input.data!) };
    // The Temporal UI cannot add a header without SSO: the token may be the endpoint's path.
    const viaPath = await codec(`/${codecToken}/decode`, { payloads: [asJson] }, { origin: uiOrigin, 'x-namespace': 'default' });
    expect(viaPath.status).toBe(200);
    expect(viaPath.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(Buffer.from(viaPath.body.payloads[0].data, 'base64').toString()).toContain(secretHeaderValue);
  });

  it('refuses without operator credentials, and answers bad input with a 4xx', async () => {
    const anonymous = await codec('/decode', { payloads: [plain] }, {});
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('unauthorized');
    expect((await codec('/decode', { payloads: [plain] }, { authorization: 'Bearer not-the-token' })).status).toBe(401);
    expect((await codec('/not-the-token/decode', { payloads: [plain] }, {})).status).toBe(401);
    const preflight = await fetch(`${codecUrl}/decode`, { method: 'OPTIONS', headers: { origin: uiOrigin, 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    const foreign = await fetch(`${codecUrl}/decode`, { method: 'OPTIONS', headers: { origin: 'http://evil.example' } });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    const badBase64 = await codec('/decode', { payloads: [{ metadata: { encoding: '%%%' }, data: '' }] });
    expect(badBase64.status).toBe(400);
    expect(badBase64.body.error.message).toContain('/payloads/0/metadata/encoding');
    const tampered = await codec('/encode', { payloads: [plain] });
    const sealed = tampered.body.payloads[0];
    const bytes = Buffer.from(sealed.data, 'base64');
    bytes[bytes.length - 1]! ^= 1;
    const refused = await codec('/decode', { payloads: [{ ...sealed, data: bytes.toString('base64') }] });
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('payload_not_decodable');
    const notJson = await fetch(`${codecUrl}/decode`, { method: 'POST', headers: { authorization: `Bearer ${codecToken}` }, body: '{' });
    expect(notJson.status).toBe(400);
    // A body that is not UTF-8 is refused, not read with U+FFFD in place of its bad bytes (here in a metadata key).
    const latin1 = Buffer.from(`{"payloads":[{"metadata":{"enc\xf6ding":"${Buffer.from('json/plain').toString('base64')}"},"data":""}]}`, 'latin1');
    const notUtf8 = await fetch(`${codecUrl}/encode`, { method: 'POST', headers: { authorization: `Bearer ${codecToken}`, 'content-type': 'application/json' }, body: latin1 });
    expect(notUtf8.status).toBe(400);
    expect(((await notUtf8.json()) as any).error.message).toMatch(/not valid UTF-8/);
  });
});

describe('/metrics', () => {
  it('counts a failed job (a source pull the provider refuses) and a publish too', async () => {
    const ws = await app.createWorkspace({ plan: 'enterprise' });
    // A source pull the listening provider refuses (401): the job fails.
    const source = await app.http('POST', '/sources', { apiKey: ws.apiKey, body: { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/ops-owner' } });
    expect(source.status, JSON.stringify(source.body)).toBe(200);
    listening.script({ status: 401, body: { error: { code: 'invalid_api_key', message: 'revoked' } } });
    const pull = await app.http('POST', `/sources/pull-contacts-from-source/${source.body.data.id}`, { apiKey: ws.apiKey, body: {} });
    expect(pull.status, JSON.stringify(pull.body)).toBe(202);
    expect((await app.waitForJob(pull.body.jobId, ws.apiKey)).jobStatus).toBe('failed');

    const integration = await app.http('POST', '/integrations', {
      apiKey: ws.apiKey,
      body: { provider: 'microblog', name: 'ops', externalAccountId: '3001', credentials: { accessToken: 'x-ops-token' }, apiBaseUrl: x.url },
    });
    expect(integration.status, JSON.stringify(integration.body)).toBe(200);
    const post = await app.http('POST', '/v1/posts', { apiKey: ws.apiKey, body: { providerId: integration.body.data.id, content: 'ops metrics post' } });
    expect(post.status).toBe(200);
    const scheduled = await app.http('POST', '/v1/posts/bulk-schedule', {
      apiKey: ws.apiKey,
      body: { posts: [{ postId: post.body.data.id, schedules: [{ providerId: integration.body.data.id, scheduledTime: new Date(Date.now() + 1000).toISOString() }] }] },
    });
    expect(scheduled.status, JSON.stringify(scheduled.body)).toBe(200);
    await expect
      .poll(async () => (await app.http('GET', `/v1/posts/${post.body.data.id}`, { apiKey: ws.apiKey })).body.data.status, { timeout: 30_000, interval: 250 })
      .toBe('published');
  });

  it('API: request durations by route template and status, jobs started, pool usage', async () => {
    const res = await fetch(apiMetricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const s = series(await res.text());
    expect(sum(s, 'http_request_duration_seconds_count', 'route="/contacts/unified-data-api"', 'status="202"', 'method="POST"')).toBeGreaterThanOrEqual(1);
    expect(sum(s, 'http_request_duration_seconds_count', 'route="/jobs/{jobId}"', 'status="200"')).toBeGreaterThan(0);
    // Raw paths never become labels.
    expect([...s.keys()].some((k) => k.startsWith('http_request_duration') && /route="\/jobs\/[0-9a-f]{8}-/.test(k))).toBe(false);
    expect(sum(s, 'jobs_started_total', 'type="enrichment"')).toBeGreaterThanOrEqual(1);
    expect(sum(s, 'jobs_started_total', 'type="source-pull"')).toBe(1);
    expect(sum(s, 'db_pool_connections', 'role="api"', 'state="total"')).toBeGreaterThan(0);
    expect(sum(s, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('worker: jobs completed/failed, credits, webhooks, publishes, pool, and the Temporal SDK series', async () => {
    expect(workerMetricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const s = series(await (await fetch(workerMetricsUrl)).text());
    expect(sum(s, 'jobs_completed_total', 'type="enrichment"')).toBeGreaterThanOrEqual(1);
    expect(sum(s, 'jobs_failed_total', 'type="source-pull"')).toBe(1);
    expect(sum(s, 'credits_debited_total', 'reason="enrichment basic_contact_data"')).toBeGreaterThan(0);
    expect(sum(s, 'webhook_deliveries_total', 'outcome="delivered"')).toBeGreaterThanOrEqual(1);
    expect(sum(s, 'publish_outcomes_total', 'provider="microblog"', 'outcome="published"')).toBe(1);
    expect(sum(s, 'db_pool_connections', 'role="worker"', 'state="total"')).toBeGreaterThan(0);
    // The SDK's own worker metrics, from its Prometheus exporter, in the same scrape.
    expect(sum(s, 'temporal_workflow_completed_total', 'workflow_type="enrichmentWorkflow"')).toBeGreaterThan(0);
    expect(sum(s, 'temporal_workflow_failed_total', 'workflow_type="sourcePullWorkflow"')).toBeGreaterThan(0);
    expect(sum(s, 'temporal_activity_execution_latency_count', 'activity_type="deliverWebhook"')).toBeGreaterThan(0);
    expect(sum(s, 'temporal_worker_task_slots_available')).toBeGreaterThan(0);
  });

  it('a metrics token, when set, is required', async () => {
    // Unset in this test's API: the port alone guards it. The worker's server shares the code path.
    const { startMetricsServer } = await import('../../telemetry/metricsServer.js');
    const guarded = await startMetricsServer({ port: 0, host: '127.0.0.1', token: 'scrape-token-123' });
    try {
      expect((await fetch(`${guarded.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${guarded.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
      const ok = await fetch(`${guarded.url}/metrics`, { headers: { authorization: 'Bearer scrape-token-123' } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('http_request_duration_seconds');
      expect((await fetch(`${guarded.url}/other`)).status).toBe(404);
    } finally {
      await guarded.close();
    }
  });
});
