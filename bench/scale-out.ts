/**
 * Scale-out: the same load against one stack with 1 API + 1 worker process, then with 2 API + 2
 * worker processes; throughput and exactly-once outcomes for both.
 *
 * Load, per configuration (a fresh database and task queue each):
 * - jobs, all at once, spread round-robin over the APIs: `--bulk` bulk upserts of `--rows` rows
 *   each (distinct people), one more re-sending the rows of the first (identity resolution must
 *   merge, concurrently, on whichever worker), every one of them sent twice with one
 *   `Idempotency-Key` to two different APIs at the same moment; and `--enrich` enrichment jobs
 *   (`basic_contact_data` + `emails`, dataset provider, 5 credits each) from 8 clients at a time;
 * - then reads: autocannon `GET /contacts/{id}` (each request another contact), 32 connections split over the APIs, `--seconds`.
 * Checked exactly: one job per idempotency key, contacts = bulk × rows with no duplicate email or
 * profile, one source link per row sent, credits charged = ledger = enrich × 5 and the balance.
 *
 *   npx tsx bench/scale-out.ts [--bulk 6] [--rows 5000] [--enrich 200] [--seconds 10] [--tsx]
 *
 * API and workers run from `dist/` (`npm run build`) unless `--tsx`. API ports: BENCH_API_PORTS
 * (default `3106,3116`). On 2 cores a second process of each kind cannot add much
 * throughput; what this shows is that nothing breaks and every count is exact.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { bundleWorkflowCode } from '@temporalio/worker';
import { createWorkspace } from '../db/workspaces.js';
import { WORKFLOWS_PATH } from '../worker/worker.js';
import { BULK_MAPPING, bulkRow, compiledBuild, cpuByProcess, cpuSpent, dropDatabase, freshDatabase, loadEnrichmentDataset, roundRobin, say, startService, stopService } from './lib.js';
import { openDatabase } from '../db/orm.js';

const { values: args } = parseArgs({
  options: {
    bulk: { type: 'string', default: '6' },
    rows: { type: 'string', default: '5000' },
    enrich: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '10' },
    tsx: { type: 'boolean', default: false },
  },
});
const BULK = Number(args.bulk);
const ROWS = Number(args.rows);
const ENRICH = Number(args.enrich);
const SECONDS = Number(args.seconds);
const ENRICH_PRICE = 5; // basic_contact_data 1 + emails 4 (first provider)
const API_PORTS = (process.env.BENCH_API_PORTS ?? '3106,3116').split(',').map(Number);
const compiled = compiledBuild(args.tsx);
const DB = 'bench_scale_out';

// From sources the workers bundle the workflows; bundling once here spares each of them that.
let bundlePath: string | undefined;
if (!compiled) {
  bundlePath = join(mkdtempSync(join(tmpdir(), 'bench-scale-out-')), 'workflows.js');
  writeFileSync(bundlePath, (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: undefined })).code);
}

const CLIENTS = 8;

/** `fn(0 … n-1)` with at most `limit` calls in flight; results in index order. */
async function inParallel<T>(n: number, limit: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, n) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}

interface Outcome {
  processes: string;
  jobsSeconds: number;
  rowsPerSecond: number;
  enrichPerSecond: number;
  readRps: number;
  readP99: number;
  checks: Array<[string, boolean, string]>;
  cores: Record<string, number>;
}


async function run(replicas: number): Promise<Outcome> {
  const databaseUrl = await freshDatabase(DB);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  const apis: ChildProcess[] = [];
  const workers: ChildProcess[] = [];
  try {
    await loadEnrichmentDataset(db, ENRICH, 100);
    const setup = await openDatabase(databaseUrl, { max: 1 });
    const ws = await createWorkspace(setup.orm.em, { name: 'bench', plan: 'enterprise', credits: ENRICH * ENRICH_PRICE + 1000 });
    await setup.close();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TEMPORAL_TASK_QUEUE: `bench-scale-out-${replicas}-${Date.now()}`,
      RATE_LIMIT_PER_MINUTE: '1000000000',
      BODY_LIMIT_BYTES: String(64 * 1024 * 1024),
      LOG_LEVEL: 'warn',
      TEMPORAL_LOG_LEVEL: 'ERROR',
      ...(bundlePath ? { WORKFLOW_BUNDLE_PATH: bundlePath } : {}),
    };
    delete env.ENRICHMENT_CONFIG; // the repository's config/enrichment.json: dataset for every slice
    const urls = API_PORTS.slice(0, replicas).map((port) => `http://127.0.0.1:${port}`);
    workers.push(...(await Promise.all(Array.from({ length: replicas }, () => startService('worker', env, { compiled })))));
    apis.push(...(await Promise.all(urls.map((_, i) => startService('api', { ...env, PORT: String(API_PORTS[i]) }, { compiled })))));
    let next = 0;
    const anyApi = () => urls[next++ % urls.length]!;
    const http = async (base: string, method: string, path: string, body?: string | object, headers: Record<string, string> = {}) => {
      const res = await fetch(base + path, {
        method,
        headers: { 'x-api-key': ws.apiKey, 'content-type': 'application/json', ...headers },
        body: body === undefined || typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    const src = await http(urls[0]!, 'POST', '/sources', { sourceType: 'importFromWebhook', sourceIdentifier: 'bench', sourceMeta: { config: { fieldMapping: BULK_MAPPING } } });
    if (src.status !== 200) throw new Error(JSON.stringify(src.body));
    const sourceId: string = src.body.data.id;
    // Job b carries rows b×ROWS …; the extra last job re-sends the rows of job 0.
    const bodies = Array.from({ length: BULK + 1 }, (_, b) =>
      JSON.stringify({ contactsData: Array.from({ length: ROWS }, (_, i) => bulkRow((b === BULK ? 0 : b) * ROWS + i)) }),
    );

    const named = Object.fromEntries([...apis.map((p, i) => [`api${i + 1}`, p.pid]), ...workers.map((p, i) => [`worker${i + 1}`, p.pid])]);
    const cpu0 = cpuByProcess(named);
    const t0 = performance.now();
    /** Answers other than 202 that a client retried (same Idempotency-Key), by status and code. */
    const retried = new Map<string, number>();
    /** POSTs until a 202, as a client holding an Idempotency-Key does: a 409 (the twin still in progress) or a failed attempt is retried. */
    const postUntilAccepted = async (base: string, path: string, body: string, key: string) => {
      for (let attempt = 1; ; attempt++) {
        const res = await http(base, 'POST', path, body, { 'idempotency-key': key });
        if (res.status === 202) return res.body.jobId as string;
        const what = `${res.status} ${res.body?.error?.code ?? ''}`.trim();
        if (attempt >= 100 || res.status < 409 || res.status === 413) throw new Error(`${path}: ${what} ${JSON.stringify(res.body)}`);
        if (res.status !== 409) retried.set(what, (retried.get(what) ?? 0) + 1);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    /** Sends one job twice at once, to two APIs, with one Idempotency-Key: both must name the same job. */
    const startTwice = async (path: string, body: string, key: string) => {
      const first = anyApi();
      const second = urls[(urls.indexOf(first) + 1) % urls.length]!;
      return Promise.all([postUntilAccepted(first, path, body, key), postUntilAccepted(second, path, body, key)]);
    };
    const bulkJobs = Promise.all(bodies.map((body, b) => startTwice(`/contacts/${sourceId}/bulk-upsert-contacts`, body, `bulk-${b}`)));
    // Clients in flight at once, like a real caller's pool: a few hundred requests at the same
    // instant only measure queueing on the workspace's credit row.
    const enrichJobs = inParallel(ENRICH, CLIENTS, (i) =>
      startTwice('/contacts/unified-data-api', JSON.stringify({ fields: ['basic_contact_data', 'emails'], pronet: `https://pronet.example/in/bench-${i + 1}` }), `enrich-${i}`),
    );
    const [bulkIds, enrichIds] = await Promise.all([bulkJobs, enrichJobs]);
    const waitFor = async (jobId: string) => {
      for (;;) {
        const job = (await http(anyApi(), 'GET', `/jobs/${jobId}`)).body.data;
        if (job.jobStatus !== 'queued' && job.jobStatus !== 'running') return job;
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const bulkDone = await Promise.all(bulkIds.map(([id]) => waitFor(id)));
    const enrichDone = await Promise.all(enrichIds.map(([id]) => waitFor(id)));
    const jobsSeconds = (performance.now() - t0) / 1000;
    const cores = Object.fromEntries(Object.entries(cpuSpent(cpu0, cpuByProcess(named))).map(([k, ms]) => [k, Math.round(ms / jobsSeconds / 10) / 100]));

    const one = async <T>(sql: string, params: unknown[] = []) => (await db.query(sql, params)).rows[0] as T;
    const counts = await one<{ contacts: number; emails: number; profiles: number; links: number }>(
      `select (select count(*)::int from contacts where workspace_id = $1) as contacts,
              (select count(distinct work_email)::int from contacts where workspace_id = $1) as emails,
              (select count(distinct pronet_key)::int from contacts where workspace_id = $1) as profiles,
              (select count(*)::int from contact_sources where source_id = $2) as links`,
      [ws.workspaceId, sourceId],
    );
    // Net of debits, holds and their releases: what the workspace paid.
    const ledger = await one<{ n: number; charged: number }>(
      `select count(*) filter (where kind = 'debit')::int as n, coalesce(-sum(amount), 0)::int as charged from credit_transactions where workspace_id = $1 and kind <> 'grant'`,
      [ws.workspaceId],
    );
    const balance = await one<{ balance: number }>(`select balance from credit_accounts where workspace_id = $1`, [ws.workspaceId]);
    const jobRows = await one<{ n: number }>(`select count(*)::int as n from jobs where workspace_id = $1`, [ws.workspaceId]);
    const charged = enrichDone.reduce((s, j) => s + (j.jobResponsePayload?.creditsCharged ?? 0), 0);
    const expectedContacts = BULK * ROWS;
    const checks: Outcome['checks'] = [
      ['one job per idempotency key (both APIs answered the same jobId)', [...bulkIds, ...enrichIds].every(([a, b]) => a === b), `${bulkIds.length + enrichIds.length} keys`],
      ['job rows = jobs started', jobRows.n === bulkIds.length + enrichIds.length, `${jobRows.n}`],
      ['every job completed', [...bulkDone, ...enrichDone].every((j) => j.jobStatus === 'completed'), `${[...bulkDone, ...enrichDone].filter((j) => j.jobStatus === 'completed').length}/${bulkDone.length + enrichDone.length}`],
      ['contacts = distinct people sent', counts.contacts === expectedContacts, `${counts.contacts} (expected ${expectedContacts})`],
      ['no duplicate email or profile', counts.emails === expectedContacts && counts.profiles === expectedContacts, `${counts.emails} emails, ${counts.profiles} profiles`],
      ['one source link per row key', counts.links === expectedContacts, `${counts.links}`],
      ['credits charged = enrich × 5 (jobs, ledger, balance)', charged === ENRICH * ENRICH_PRICE && ledger.charged === charged && balance.balance === 1000 + ENRICH * ENRICH_PRICE - charged, `jobs ${charged}, ledger ${ledger.charged} in ${ledger.n} debits, balance ${balance.balance}`],
    ];

    // Reads: 32 connections split over the APIs, all at once.
    // Every request reads another of the contacts, as bench/api-hotpath.ts does (round robin).
    const paths = (await db.query<{ id: string }>(`select id from contacts where workspace_id = $1 order by random()`, [ws.workspaceId])).rows.map((r) => `/contacts/${r.id}`);
    const requests = roundRobin(paths);
    const reads = await Promise.all(
      urls.map((u) => autocannon({ url: `${u}${paths[0]}`, connections: 32 / urls.length, duration: SECONDS, headers: { 'x-api-key': ws.apiKey }, requests })),
    );
    const readErrors = reads.reduce((n, r) => n + r.non2xx + r.errors + r.timeouts, 0);
    checks.push(['reads all 200', readErrors === 0, `${readErrors} errors/non-2xx`]);
    checks.push(['accepts answered 202 at first try (else retried with the same key)', retried.size === 0, retried.size ? [...retried].map(([k, n]) => `${n} × ${k}`).join(', ') : 'all']);
    return {
      processes: `${replicas} API + ${replicas} worker`,
      jobsSeconds,
      rowsPerSecond: ((BULK + 1) * ROWS) / jobsSeconds,
      enrichPerSecond: ENRICH / jobsSeconds,
      readRps: reads.reduce((s, r) => s + r.requests.average, 0),
      readP99: Math.max(...reads.map((r) => r.latency.p99)),
      checks,
      cores,
    };
  } finally {
    await Promise.all([...apis, ...workers].map(stopService));
    await db.end();
    await dropDatabase(DB);
  }
}

say(`${BULK} + 1 bulk upserts × ${ROWS} rows, ${ENRICH} enrichment jobs, each sent twice to two APIs with one Idempotency-Key; then ${SECONDS} s of GET /contacts/{id}; processes from ${compiled ? 'dist/ (compiled JavaScript)' : 'TypeScript through tsx'}`);
const outcomes: Outcome[] = [];
for (const replicas of [1, 2]) {
  say(`running with ${replicas} API + ${replicas} worker process(es)`);
  outcomes.push(await run(replicas));
}
for (const o of outcomes) {
  console.log('');
  console.log(`${o.processes}`);
  console.log(`  jobs phase            ${o.jobsSeconds.toFixed(1)} s: ${Math.round(o.rowsPerSecond)} rows/s bulk upsert, ${o.enrichPerSecond.toFixed(1)} enrichment jobs/s (concurrently)`);
  console.log(`  cores busy (jobs)     ${Object.entries(o.cores).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`);
  console.log(`  GET /contacts/{id}    ${Math.round(o.readRps)} rps, p99 ${o.readP99} ms (32 connections over the APIs)`);
  for (const [what, ok, detail] of o.checks) console.log(`  ${ok ? 'ok  ' : 'FAIL'}  ${what}: ${detail}`);
}
const [a, b] = outcomes;
console.log('');
console.log(`2 vs 1: jobs ${(a!.jobsSeconds / b!.jobsSeconds).toFixed(2)}x, reads ${(b!.readRps / a!.readRps).toFixed(2)}x (the machine's 2 cores are shared with PostgreSQL, Temporal and the load generator)`);
const failed = outcomes.flatMap((o) => o.checks.filter(([, ok]) => !ok));
if (failed.length) {
  console.log(`${failed.length} check(s) FAILED`);
  process.exitCode = 1;
}
