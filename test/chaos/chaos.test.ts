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
import { createWorkspace } from '../../db/workspaces.js';

let stack: ChaosStack;

beforeAll(async () => {
  stack = await startChaosStack();
}, 180_000);

afterAll(async () => {
  await stack?.close();
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

async function startBulkUpsert(tag: string) {
  const ws = await createWorkspace(stack.pool, { name: `chaos ${tag}`, credits: 0 });
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
  return { ws, sourceId, jobId: res.body.jobId as string };
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

async function assertBulkUpsertExactlyOnce(b: { ws: { workspaceId: string; apiKey: string }; sourceId: string; jobId: string }) {
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
  const staged = await stack.pool.query(`select count(*)::int as n from contact_ingest_staging`);
  expect(staged.rows[0].n).toBe(0);
}

function expectAppsAlive(before: { api: number; worker: number }) {
  const why = `api: ${JSON.stringify(stack.api.exits)}\n${stack.logTail('api', 15)}\nworker: ${JSON.stringify(stack.worker.exits)}\n${stack.logTail('worker', 30)}`;
  expect(stack.appsAlive(), why).toBe(true);
  expect({ api: stack.api.pid, worker: stack.worker.pid }).toEqual(before);
}

it('PostgreSQL killed during a bulk upsert: every row once, API and worker stay up', { timeout: 300_000 }, async () => {
  const pids = { api: stack.api.pid, worker: stack.worker.pid };
  const b = await startBulkUpsert('pgkill');
  await until('the worker to be in an ingest transaction', ingestInFlight, 60_000);
  await stack.kill('postgres');
  // The worker's checked-out clients see their connection die now; give them the moment.
  await sleep(1000);
  expectAppsAlive(pids);
  await stack.restart();
  await assertBulkUpsertExactlyOnce(b);
  expectAppsAlive(pids);
  // The kill did reach clients the worker held (each logged, none fatal).
  expect(stack.logTail('worker', 1000)).toContain('database connection lost');
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
