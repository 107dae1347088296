/**
 * Chaos: a service of the stack (PostgreSQL, Temporal, MinIO) is SIGKILLed in the middle of a
 * job and started again by the stack script. Each job ends exactly once with nothing lost or
 * doubled, and neither the API nor the worker process exits (a database failover must not
 * take the service down). Runs on a stack instance of its own (test/chaos/chaosStack.ts).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROOT_DIR } from '../../domain/config.js';
import { startChaosStack, type ChaosStack } from './chaosStack.js';
import { v7 as uuidv7 } from 'uuid';
import { createWorkspace } from '../../db/workspaces.js';
import { normalizeProfileUrl } from '../../domain/identity.js';
import { startFakeEnrichmentProvider, type FakeEnrichmentProvider } from '../fakes/enrichmentProvider.js';
import { FakeX } from '../fakes/x.js';
import { png } from '../png.js';

let stack: ChaosStack;
let alpha: FakeEnrichmentProvider;
const x = new FakeX();

beforeAll(async () => {
  alpha = await startFakeEnrichmentProvider('alpha');
  await x.listen();
  const enrichment = {
    providers: { dataset: { type: 'dataset' }, alpha: { type: 'http', baseUrl: alpha.baseUrl, apiKeyEnv: 'ENRICH_ALPHA_KEY', timeoutMs: 20_000 } },
    waterfall: { basic_contact_data: ['dataset'], emails: ['alpha'] },
    retry: { maxAttempts: 10, initialIntervalMs: 200, maxIntervalMs: 2000 },
  };
  stack = await startChaosStack({ ENRICH_ALPHA_KEY: alpha.apiKey, ENRICHMENT_CONFIG: JSON.stringify(enrichment), PROVIDER_TIMEOUT_MS: '20000' });
}, 180_000);

afterAll(async () => {
  await stack?.close();
  await alpha?.close();
  await x.close();
}, 60_000);


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, fn: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await fn().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Polls the job through the API, riding out the answers it gives while a service is down. */
async function jobOutcome(jobId: string, apiKey: string, timeoutMs = 180_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await stack.http('GET', `/jobs/${jobId}`, { apiKey }).catch(() => null);
    const s = res?.status === 200 ? res.body.data.jobStatus : undefined;
    if (s && s !== 'queued' && s !== 'running') return res!.body.data;
    if (Date.now() > deadline) throw new Error(`job ${jobId} unfinished after ${timeoutMs} ms (last answer ${res?.status})`);
    await sleep(250);
  }
}

const MAPPING = [
  { sourceFieldName: 'First Name', targetFieldName: 'contact.firstName' },
  { sourceFieldName: 'Last Name', targetFieldName: 'contact.lastName' },
  { sourceFieldName: 'Email', targetFieldName: 'contact.workEmail' },
  { sourceFieldName: 'Profile', targetFieldName: 'contact.pronet' },
  { sourceFieldName: 'Company', targetFieldName: 'company.companyName' },
  { sourceFieldName: 'Website', targetFieldName: 'company.companyWebsite' },
];

const ROWS = 30_000;
/** How long the fakes hold their answers; they come due while the killed service is down (DOWN_MS). */
const HOLD_MS = { network: 15_000, provider: 12_000 };
/** The least time a killed service stays down. */
const DOWN_MS = 8000;

async function startBulkUpsert(tag: string) {
  const ws = await createWorkspace(stack.orm.em, { name: `chaos ${tag}`, credits: 0 });
  const src = await stack.http('POST', '/sources', {
    apiKey: ws.apiKey,
    body: { sourceType: 'importFromWebhook', sourceIdentifier: `chaos-${tag}`, sourceMeta: { config: { fieldMapping: MAPPING } } },
  });
  expect(src.status, JSON.stringify(src.body)).toBe(200);
  const sourceId: string = src.body.data.id;
  const contactsData = Array.from({ length: ROWS }, (_, i) => ({
    'First Name': `C${i}`,
    'Last Name': tag,
    Email: `c${i}@${tag}.example.com`,
    Profile: `https://pronet.com/in/${tag}-${i}`,
    Company: `Corp ${i % 50}`,
    Website: `corp${i % 50}.example.com`,
  }));
  const res = await stack.http('POST', `/contacts/${sourceId}/bulk-upsert-contacts`, { apiKey: ws.apiKey, body: { contactsData } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return { ws, sourceId, tag, jobId: res.body.jobId as string };
}

/** True once the worker runs an ingest statement (its transaction holds a checked-out client). */
async function ingestInFlight(): Promise<boolean> {
  const r = await stack.pool.query(
    `select count(*)::int as n from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and state in ('active', 'idle in transaction')
        and (query ilike '%contact%' or query ilike 'copy%')`,
  );
  return r.rows[0].n > 0;
}

async function assertBulkUpsertExactlyOnce(b: Awaited<ReturnType<typeof startBulkUpsert>>) {
  const job = await jobOutcome(b.jobId, b.ws.apiKey);
  expect(job.jobStatus, JSON.stringify(job.error)).toBe('completed');
  const p = job.jobResponsePayload;
  expect(p).toMatchObject({ totalRows: ROWS, processedRows: ROWS, failed: 0, skippedDeleted: 0 });
  // A chunk whose commit was not reported before the kill is ingested again: its rows are then
  // matched and updated, never created twice.
  expect(p.created + p.updated).toBe(ROWS);
  const c = await stack.pool.query(
    `select count(*)::int as n, count(distinct work_email)::int as emails, count(distinct pronet_key)::int as keys
       from contacts where workspace_id = $1`,
    [b.ws.workspaceId],
  );
  expect(c.rows[0]).toEqual({ n: ROWS, emails: ROWS, keys: ROWS });
  const links = await stack.pool.query(`select count(*)::int as n, count(distinct contact_id)::int as d from contact_sources where source_id = $1`, [b.sourceId]);
  expect(links.rows[0]).toEqual({ n: ROWS, d: ROWS });
  const companies = await stack.pool.query(`select count(*)::int as n from companies where workspace_id = $1`, [b.ws.workspaceId]);
  expect(companies.rows[0].n).toBe(50);
  // This job's staged rows are gone (others may still run on the same stack).
  const staged = await stack.pool.query(`select count(*)::int as n from contact_ingest_staging where position($1 in data) > 0`, [`@${b.tag}.example.com`]);
  expect(staged.rows[0].n).toBe(0);
}

function expectAppsAlive(before: { api: number; worker: number }) {
  const why = `api: ${JSON.stringify(stack.api.exits)}\n${stack.logTail('api', 15)}\nworker: ${JSON.stringify(stack.worker.exits)}\n${stack.logTail('worker', 30)}`;
  expect(stack.appsAlive(), why).toBe(true);
  expect({ api: stack.api.pid, worker: stack.worker.pid }).toEqual(before);
}

// ---------- enrichment: a dataset slice and an emails slice from a fake provider ----------
async function startEnrichment(tag: string) {
  const ws = await createWorkspace(stack.orm.em, { name: `chaos ${tag}`, credits: 100 });
  const who = `https://pronet.example/in/chaos-${tag}`;
  await stack.pool.query(`insert into ds_people (id, member_pronet_url, member_full_name) values ($1, $2, 'Chaos Test')`, [uuidv7(), normalizeProfileUrl(who)]);
  // The emails call is answered late, so the service dies while the worker waits for it.
  alpha.script('emails', { delayMs: HOLD_MS.provider });
  alpha.setData(who, 'emails', { emails: [{ email: `${tag}@acme.com`, status: 'valid' }] });
  const res = await stack.http('POST', '/contacts/unified-data-api', { apiKey: ws.apiKey, body: { fields: ['basic_contact_data', 'emails'], pronet: who } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return { ws, who, jobId: res.body.jobId as string };
}

async function assertEnrichmentExactlyOnce(e: Awaited<ReturnType<typeof startEnrichment>>, tag: string) {
  const job = await jobOutcome(e.jobId, e.ws.apiKey);
  expect(job.jobStatus, JSON.stringify(job.error)).toBe('completed');
  expect(job.jobResponsePayload.emails).toEqual([{ email: `${tag}@acme.com`, status: 'valid', provider: 'alpha' }]);
  expect(job.jobResponsePayload.creditsCharged).toBe(1 + 4);
  const ledger = await stack.pool.query(`select amount, idempotency_key from credit_transactions where job_id = $1 order by idempotency_key`, [e.jobId]);
  expect(ledger.rows).toEqual([
    { amount: -1, idempotency_key: `enrich:${e.jobId}:basic_contact_data` },
    { amount: -4, idempotency_key: `enrich:${e.jobId}:emails` },
    // The maximum price held at acceptance, given back in full when the job settled.
    { amount: -5, idempotency_key: `hold:${e.jobId}` },
    { amount: 5, idempotency_key: `release:${e.jobId}` },
  ]);
  const balance = await stack.http('GET', '/credits/balance', { apiKey: e.ws.apiKey });
  expect(balance.body.data.balance).toBe(95);
  // A call may be repeated (the worker could not report it), always as the same request.
  const calls = alpha.requestsFor(e.who);
  expect(calls.length).toBeGreaterThanOrEqual(1);
  expect(new Set(calls.map((c) => c.headers['x-request-id']))).toEqual(new Set([`${e.jobId}:emails`]));
}

// ---------- scheduled publish: a post with an image (read from MinIO) on the fake X ----------
async function startPublish(tag: string, hold: 'POST /2/tweets' | 'POST /2/media/upload') {
  const ws = await createWorkspace(stack.orm.em, { name: `chaos ${tag}`, credits: 0 });
  const userId = String(4000 + Math.floor(Math.random() * 1000));
  x.addUser(userId, `token-${tag}`);
  const integ = await stack.http('POST', '/integrations', {
    apiKey: ws.apiKey,
    body: { provider: 'microblog', name: tag, externalAccountId: userId, credentials: { accessToken: `token-${tag}` }, apiBaseUrl: x.url },
  });
  expect(integ.status, JSON.stringify(integ.body)).toBe(200);
  const form = new FormData();
  form.set('file', new Blob([png()], { type: 'image/png' }), 'pic.png');
  const up = await stack.http('POST', '/v1/media/upload', { apiKey: ws.apiKey, rawBody: form });
  expect(up.status, JSON.stringify(up.body)).toBe(200);
  const text = `chaos post ${tag}`;
  const d = await stack.http('POST', '/v1/posts', { apiKey: ws.apiKey, body: { providerId: integ.body.data.id, content: text, media: [{ fileName: up.body.data?.fileName ?? up.body.fileName }] } });
  expect(d.status, JSON.stringify(d.body)).toBe(200);
  // The network holds its answer (having done the work, for a tweet) and then drops the connection.
  x.inject(hold, { timeoutMs: HOLD_MS.network, afterCommit: hold === 'POST /2/tweets' });
  const at = new Date(Date.now() + 2000).toISOString();
  const b = await stack.http('POST', '/v1/posts/bulk-schedule', {
    apiKey: ws.apiKey,
    body: { posts: [{ postId: d.body.data.id, schedules: [{ providerId: integ.body.data.id, scheduledTime: at }] }] },
  });
  expect(b.status, JSON.stringify(b.body)).toBe(200);
  return { ws, postId: d.body.data.id as string, text, userId, hold };
}

async function assertPublishedOnce(p: Awaited<ReturnType<typeof startPublish>>) {
  const deadline = Date.now() + 180_000;
  let post: any;
  for (;;) {
    const r = await stack.http('GET', `/v1/posts/${p.postId}`, { apiKey: p.ws.apiKey }).catch(() => null);
    post = r?.status === 200 ? r.body.data : undefined;
    if (post && !['draft', 'scheduled', 'publishing'].includes(post.status)) break;
    if (Date.now() > deadline) throw new Error(`post ${p.postId} still ${post?.status}`);
    await sleep(250);
  }
  expect(post.status, JSON.stringify(post)).toBe('published');
  const tweets = x.tweets.filter((t) => t.text === p.text);
  expect(tweets).toHaveLength(1);
  expect(tweets[0]!.mediaIds).toHaveLength(1);
  expect(post.externalId).toBe(tweets[0]!.id);
}

const inFlight = {
  enrichment: (who: string) => async () => alpha.requestsFor(who).length > 0,
  publish: (hold: string, token: string) => async () => x.calls(hold).some((c) => c.headers.authorization === `Bearer ${token}`),
};

/**
 * One service killed while a bulk upsert, an enrichment and a scheduled publish are each in
 * the middle of their work (an ingest transaction open, the provider call and the network
 * call held by the fakes), down for a few seconds, then started again by the stack script.
 */
it('the stack runs as npm start configures it: PostgreSQL commits synchronously', async () => {
  // found by the review: with the dev default (off) a killed PostgreSQL lost acknowledged rows of a completed job
  const { rows } = await stack.pool.query(`select current_setting('synchronous_commit') as v`);
  expect(rows[0].v).toBe('on');
});

it.each(['postgres', 'temporal', 'minio'] as const)('%s SIGKILLed in the middle of a bulk upsert, an enrichment and a scheduled publish: each ends exactly once, no app process exits', { timeout: 300_000 }, async (service) => {
  const pids = { api: stack.api.pid, worker: stack.worker.pid };
  const tag = `${service}${stack.id}`;
  // Lined up so all three are mid-work at the kill: the network call first (held longest),
  // then the bulk upsert and the enrichment together.
  const post = await startPublish(tag, service === 'minio' ? 'POST /2/media/upload' : 'POST /2/tweets');
  // Generous: in the full suite, right after the previous case's restart, the first dispatch
  // (update-with-start, acknowledged by the workflow's first task) once took over 30 s to reach the
  // network. What this test proves is what happens after the kill, not how soon the call starts.
  await until(`the network call ${post.hold}`, inFlight.publish(post.hold, `token-${tag}`), 90_000);
  const [bulk, enrich] = await Promise.all([startBulkUpsert(tag), startEnrichment(tag)]);
  await until('the enrichment provider call', inFlight.enrichment(enrich.who), 30_000);
  await until('the worker to be in an ingest transaction', ingestInFlight, 60_000);
  // Still held by the fakes when the service dies (their answers are due later).
  const networkDue = x.calls(post.hold).at(-1)!.at + HOLD_MS.network;
  const providerDue = alpha.requestsFor(enrich.who).at(-1)!.at + HOLD_MS.provider;
  expect(networkDue - Date.now(), 'network call still held').toBeGreaterThan(1000);
  expect(providerDue - Date.now(), 'provider call still held').toBeGreaterThan(1000);
  await stack.kill(service);
  if (service === 'postgres') {
    // The API answers a request it cannot serve now with 503, not 500.
    const during = await stack.http('GET', '/credits/balance', { apiKey: enrich.ws.apiKey });
    expect(during.status, JSON.stringify(during.body)).toBe(503);
    expect(during.body.error.code).toBe('service_unavailable');
  }
  // The held calls end (or fail) while the service is away.
  await sleep(Math.max(DOWN_MS, Math.max(networkDue, providerDue) + 2000 - Date.now()));
  expectAppsAlive(pids);
  await stack.restart();
  await assertBulkUpsertExactlyOnce(bulk);
  await assertEnrichmentExactlyOnce(enrich, tag);
  await assertPublishedOnce(post);
  expectAppsAlive(pids);
  if (service === 'postgres') expect(stack.logTail('worker', 2000)).toContain('database connection lost');
  // The dropped upload was tried again once MinIO was back.
  if (service === 'minio') expect(x.calls(post.hold).filter((c) => c.headers.authorization === `Bearer token-${tag}`).length).toBeGreaterThanOrEqual(2);
});

it('the worker SIGKILLed in the middle of a bulk upsert: a new worker finishes the job, whose counts equal what is stored', { timeout: 300_000 }, async () => {
  // issue 27 item 22: kill -9 of PostgreSQL, Temporal (above) and the worker mid bulk upsert.
  const apiPid = stack.api.pid;
  const bulk = await startBulkUpsert(`worker${stack.id}`);
  await until('the worker to be in an ingest transaction', ingestInFlight, 60_000);
  const killed = stack.worker.pid;
  await stack.replaceWorker();
  expect(stack.worker.pid).not.toBe(killed);
  // The dead worker's attempt is retried once its heartbeat times out (30 s); its open
  // transaction was rolled back with its connection.
  await assertBulkUpsertExactlyOnce(bulk);
  expect(stack.api.pid).toBe(apiPid);
  expect(stack.appsAlive(), stack.logTail('worker', 30)).toBe(true);
});

it('npm start restarts a child that dies, logs why, keeps the other, and stops cleanly on SIGTERM', { timeout: 120_000 }, async () => {
  // `scripts/start.ts` against this stack, on a port and task queue of its own.
  const port = String(40_000 + Math.floor(Math.random() * 20_000));
  const start = spawn(process.execPath, ['--import', 'tsx', join(ROOT_DIR, 'scripts', 'start.ts')], {
    env: { ...stack.env, PORT: port, TEMPORAL_TASK_QUEUE: `start-${stack.id}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  start.stdout.on('data', (d) => (out += d));
  start.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => start.once('exit', (code) => r(code)));
  try {
    await until('npm start to be ready', async () => out.includes('Ready in'), 90_000);
    const pidOf = (entry: string, what: 'started' | 'ready') => [...out.matchAll(new RegExp(`${entry} ${what} \\(pid (\\d+)\\)`, 'g'))].map((m) => Number(m[1]));
    const [worker] = pidOf('worker/main.ts', 'ready');
    const [api] = pidOf('api/main.ts', 'ready');
    process.kill(worker!, 'SIGKILL');
    await until('a new worker', async () => pidOf('worker/main.ts', 'ready').length === 2, 60_000);
    expect(out).toContain(`worker/main.ts (pid ${worker}) died: killed by SIGKILL; restarting in 0.5 s`);
    expect(pidOf('api/main.ts', 'started'), out).toEqual([api]);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const [, worker2] = pidOf('worker/main.ts', 'ready');
    start.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const pid of [api!, worker2!]) expect(() => process.kill(pid, 0)).toThrow();
  } finally {
    if (start.exitCode === null) start.kill('SIGKILL');
  }
});
