/**
 * Enrichment benchmark on the local stack: 1,000 `POST /contacts/unified-data-api` jobs
 * (`basic_contact_data` + `emails`, answered by the `dataset` provider) sent at a steady rate
 * through the HTTP API, the worker in a process of its own (as deployed). Prints the accept
 * latency (202 round trip) p50/p95 and the completion time (accept sent → workflow closed,
 * Temporal's close time) p50/p95. Targets on the 2-core machine: accept p95 ≤ 50 ms,
 * completion p95 ≤ 2 s.
 *
 *   npx tsx bench/enrichment.ts [--jobs 1000] [--rate 40] [--people 5000]
 *
 * Runs against the local stack (or the services named by DATABASE_URL / TEMPORAL_ADDRESS). The
 * Temporal dev server's SQLite settings bound the throughput of the whole stack: start it with
 * `--sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal`.
 *
 * Uses a database of its own (`bench_enrichment`, dropped at the end) and its own task queue;
 * the worker process is stopped at the end.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { bundleWorkflowCode } from '@temporalio/worker';
import { loadConfig } from '../domain/config.js';
import { createWorkspace } from '../db/workspaces.js';
import { startApiServer } from '../api/server.js';
import { WORKFLOWS_PATH } from '../worker/worker.js';
import { dropDatabase, freshDatabase, loadEnrichmentDataset, percentile, say, startService, stopService } from './lib.js';

const { values: args } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000' },
    rate: { type: 'string', default: '40' },
    people: { type: 'string', default: '5000' },
  },
});
const JOBS = Number(args.jobs);
const RATE = Number(args.rate);
const PEOPLE = Math.max(Number(args.people), 1);
const DB = 'bench_enrichment';

const dbUrl = new URL(await freshDatabase(DB));

const env: NodeJS.ProcessEnv = {
  ...process.env,
  DATABASE_URL: dbUrl.toString(),
  TEMPORAL_TASK_QUEUE: `bench-enrichment-${Date.now()}`,
  RATE_LIMIT_PER_MINUTE: '1000000',
  LOG_LEVEL: 'warn',
};
delete env.ENRICHMENT_CONFIG; // the repository's config/enrichment.json: dataset for every slice
const config = loadConfig(env);

say(`loading ${PEOPLE} people into the dataset tables`);
const db = new pg.Client({ connectionString: dbUrl.toString() });
await db.connect();
await loadEnrichmentDataset(db, PEOPLE, 200);
await db.end();

say('bundling workflows and starting the worker process');
const bundleDir = mkdtempSync(join(tmpdir(), 'bench-enrichment-'));
const bundlePath = join(bundleDir, 'workflows.js');
writeFileSync(bundlePath, (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: undefined })).code);
// The worker as production runs it (WORKER_NODE_FLAGS), on a throwaway task queue (startService).
const worker = await startService('worker', { ...env, WORKFLOW_BUNDLE_PATH: bundlePath, TEMPORAL_LOG_LEVEL: 'ERROR' }, { compiled: false, stdout: 'inherit' });

const api = await startApiServer(config, { log: pino({ level: 'silent' }), port: 0 });
const ws = await createWorkspace(api.deps.orm.em, { name: 'bench', credits: JOBS * 10 });

const post = async (i: number) => {
  const body = JSON.stringify({ fields: ['basic_contact_data', 'emails'], pronet: `https://pronet.example/in/bench-${(i % PEOPLE) + 1}` });
  const sent = performance.timeOrigin + performance.now();
  const t = performance.now();
  const res = await fetch(api.url + '/contacts/unified-data-api', { method: 'POST', headers: { 'x-api-key': ws.apiKey, 'content-type': 'application/json' }, body });
  const json = (await res.json()) as { jobId?: string };
  const acceptMs = performance.now() - t;
  if (res.status !== 202 || !json.jobId) throw new Error(`job ${i}: ${res.status} ${JSON.stringify(json)}`);
  return { jobId: json.jobId, sent, acceptMs };
};

// Warm-up (connections, JIT, first workflow tasks), not counted.
for (const w of await Promise.all(Array.from({ length: 10 }, (_, i) => post(i)))) await api.deps.temporal.workflow.getHandle(`enrichment-${w.jobId}`).result();

say(`starting ${JOBS} jobs at ${RATE}/s`);
const started: Array<Promise<{ jobId: string; sent: number; acceptMs: number }>> = [];
const t0 = performance.now();
for (let i = 0; i < JOBS; i++) {
  const due = t0 + (i * 1000) / RATE;
  const wait = due - performance.now();
  if (wait > 1) await new Promise((r) => setTimeout(r, wait));
  started.push(post(i + 10));
}
const accepted = await Promise.all(started);
const sendSeconds = (performance.now() - t0) / 1000;
say(`all ${JOBS} accepted in ${sendSeconds.toFixed(1)} s; waiting for completion`);

const completions = await Promise.all(
  accepted.map(async (a) => {
    const h = api.deps.temporal.workflow.getHandle(`enrichment-${a.jobId}`);
    // A job workflow's result is {jobResponsePayload, progress} (workflows/job.ts).
    const { jobResponsePayload: result } = (await h.result()) as { jobResponsePayload: { creditsCharged: number; slices: Record<string, { status: string }> } };
    const d = await h.describe();
    return { ms: d.closeTime!.getTime() - a.sent, found: Object.values(result.slices).every((s) => s.status === 'found'), credits: result.creditsCharged };
  }),
);
const total = (performance.now() - t0) / 1000;
const accept = accepted.map((a) => a.acceptMs).sort((a, b) => a - b);
const done = completions.map((c) => c.ms).sort((a, b) => a - b);
const balance = await api.deps.pool.query<{ balance: number }>(`select balance from credit_accounts where workspace_id = $1`, [ws.workspaceId]);

console.log('');
console.log(`enrichment jobs              ${JOBS} (basic_contact_data + emails, dataset provider), sent at ${RATE}/s`);
console.log(`all slices found             ${completions.filter((c) => c.found).length} / ${JOBS}`);
console.log(`credits charged              ${completions.reduce((s, c) => s + c.credits, 0)} (expected ${JOBS * 5}); balance left ${balance.rows[0]!.balance}`);
console.log(`accept latency p50           ${percentile(accept, 50).toFixed(1)} ms`);
console.log(`accept latency p95           ${percentile(accept, 95).toFixed(1)} ms   (target ≤ 50 ms)`);
console.log(`accept latency max           ${accept.at(-1)!.toFixed(1)} ms`);
console.log(`completion p50               ${percentile(done, 50)} ms`);
console.log(`completion p95               ${percentile(done, 95)} ms   (target ≤ 2000 ms)`);
console.log(`completion max               ${done.at(-1)} ms`);
console.log(`throughput                   ${(JOBS / total).toFixed(1)} jobs/s over ${total.toFixed(1)} s`);
console.log('');

await stopService(worker);
await api.close();
await dropDatabase(DB);
process.exit(0);
