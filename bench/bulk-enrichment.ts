/**
 * Bulk enrichment benchmark (issue 32) on the local stack, against the fake HTTP providers of the
 * tests (test/fakes/enrichmentProvider.ts) with a realistic mix: `basic_contact_data` found by
 * alpha for 8 rows in 10; `emails` found by alpha for 4 in 10, by beta (second in the waterfall)
 * for 2.5 in 10 of the rest, missed otherwise. Each provider answers after `--latency` ms.
 *
 * For each size (default 10,000 and 100,000 contacts) one `POST /contacts/bulk-enrichment` of the
 * workspace's default segment, the worker in a process of its own (as deployed). Prints rows/s
 * (accept → workflow closed), the worker's peak RSS, the largest history of the job's runs
 * (events and bytes; continue-as-new keeps each bounded), and beside them two anchors measured
 * in the same run: a plain SQL update writing the same columns of the same rows, and the
 * single-row path (`POST /contacts/unified-data-api`, 200 jobs at once) in rows/s.
 *
 *   npx tsx bench/bulk-enrichment.ts [--sizes 10000,100000] [--latency 5]
 *
 * Uses a database of its own (`bench_bulk_enrichment`, dropped at the end) and its own task queue.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { v7 as uuidv7 } from 'uuid';
import { bundleWorkflowCode } from '@temporalio/worker';
import { loadConfig } from '../domain/config.js';
import { createWorkspace } from '../db/workspaces.js';
import { inWorkspaceScope, withoutTenancy } from '../db/tenancy.js';
import { startApiServer } from '../api/server.js';
import { WORKFLOWS_PATH } from '../worker/worker.js';
import { startFakeEnrichmentProvider } from '../test/fakes/enrichmentProvider.js';
import { bulkRow, dropDatabase, freshDatabase, peakRssMb, plainCopyContacts, say, startService, stopService } from './lib.js';

const { values: args } = parseArgs({ options: { sizes: { type: 'string', default: '10000,100000' }, latency: { type: 'string', default: '5' } } });
const SIZES = args.sizes.split(',').map(Number);
const LATENCY = Number(args.latency);
const DB = 'bench_bulk_enrichment';
const MAX = Math.max(...SIZES);
const FIXTURES = 'bench fixtures';

// Deterministic mix by row number (no randomness: the same figures every run).
const basicHit = (i: number) => i % 10 < 8;
const emailBy = (i: number) => (i % 20 < 8 ? 'alpha' : i % 20 < 13 ? 'beta' : null);

const alpha = await startFakeEnrichmentProvider('alpha');
const beta = await startFakeEnrichmentProvider('beta');
alpha.setLatency(LATENCY);
beta.setLatency(LATENCY);
say(`giving the fake providers data for ${MAX} people`);
for (let i = 0; i < MAX; i++) {
  const r = bulkRow(i);
  if (basicHit(i)) alpha.setData(r.Profile, 'basic_contact_data', { contact: { fullName: `${r['First Name']} ${r['Last Name']}`, title: `Enriched ${r.Title}` } });
  const by = emailBy(i);
  if (by) (by === 'alpha' ? alpha : beta).setData(r.Profile, 'emails', { emails: [{ email: `enriched-${i}@${by}.example`, status: 'valid' }] });
}

const dbUrl = new URL(await freshDatabase(DB));
const enrichmentConfig = {
  providers: {
    alpha: { type: 'http', baseUrl: alpha.baseUrl, apiKeyEnv: 'BENCH_ALPHA_KEY', timeoutMs: 5000 },
    beta: { type: 'http', baseUrl: beta.baseUrl, apiKeyEnv: 'BENCH_BETA_KEY', timeoutMs: 5000 },
  },
  waterfall: { basic_contact_data: ['alpha'], emails: ['alpha', 'beta'] },
};
const env: NodeJS.ProcessEnv = {
  ...process.env,
  DATABASE_URL: dbUrl.toString(),
  TEMPORAL_TASK_QUEUE: `bench-bulk-enrichment-${Date.now()}`,
  RATE_LIMIT_PER_MINUTE: '1000000',
  OUTBOUND_ALLOW_LIST: '127.0.0.1,::1',
  ENRICHMENT_CONFIG: JSON.stringify(enrichmentConfig),
  BENCH_ALPHA_KEY: alpha.apiKey,
  BENCH_BETA_KEY: beta.apiKey,
  LOG_LEVEL: 'warn',
};
const config = loadConfig(env);

say('bundling workflows and starting the worker process');
const bundleDir = mkdtempSync(join(tmpdir(), 'bench-bulk-enrichment-'));
const bundlePath = join(bundleDir, 'workflows.js');
writeFileSync(bundlePath, (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: undefined })).code);
const worker = await startService('worker', { ...env, WORKFLOW_BUNDLE_PATH: bundlePath, TEMPORAL_LOG_LEVEL: 'ERROR' }, { compiled: false, stdout: 'inherit' });
const api = await startApiServer(config, { log: pino({ level: 'silent' }), port: 0 });
const pool = api.deps.pool;
const ownerPool = new pg.Pool({ connectionString: dbUrl.toString(), max: 2 });
const temporal = api.deps.temporal;

async function post(path: string, apiKey: string, body: unknown): Promise<{ jobId: string }> {
  const res = await fetch(api.url + path, { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as { jobId: string };
  if (res.status !== 202) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Largest run of a (continued-as-new) workflow: events and bytes. */
async function largestHistory(workflowId: string): Promise<{ runs: number; events: number; bytes: number }> {
  let runs = 0;
  let events = 0;
  let bytes = 0;
  for await (const w of temporal.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
    runs++;
    events = Math.max(events, w.historyLength);
    bytes = Math.max(bytes, w.historySize ?? 0);
  }
  return { runs, events, bytes };
}

const results: string[] = [];

// Anchor 1: the single-row path, 200 jobs at once (rows = jobs, each two slices).
{
  const ws = await withoutTenancy(FIXTURES, () => createWorkspace(api.deps.orm.em, { name: 'bench-single', credits: 1_000_000 }));
  const n = 200;
  const t0 = performance.now();
  const jobs = await Promise.all(Array.from({ length: n }, (_, i) => post('/contacts/unified-data-api', ws.apiKey, { fields: ['basic_contact_data', 'emails'], pronet: bulkRow(i).Profile })));
  await Promise.all(jobs.map((j) => temporal.workflow.getHandle(`enrichment-${j.jobId}`).result()));
  const s = (performance.now() - t0) / 1000;
  results.push(`anchor: single-row path        ${n} jobs in ${s.toFixed(1)} s = ${(n / s).toFixed(0)} rows/s`);
}

for (const size of SIZES) {
  const ws = await withoutTenancy(FIXTURES, () => createWorkspace(api.deps.orm.em, { name: `bench-${size}`, credits: size * 10 }));
  const segmentId = uuidv7();
  // COPY FROM is refused on a table under row-level security: the fixture rows go in through the
  // schema owner's pool, as the tools do; the anchor runs in the workspace's scope, as the app does.
  await plainCopyContacts(ownerPool, ws.workspaceId, size);
  await ownerPool.query(`insert into segments (id, workspace_id, name, is_default) values ($1, $2, 'All contacts', true)`, [segmentId, ws.workspaceId]);
  await ownerPool.query('analyze contacts');
  const anchorS = await inWorkspaceScope(ws.workspaceId, async () => {
    // Anchor 2: a plain SQL update of the same columns of the same rows (one statement, no providers).
    const a0 = performance.now();
    await pool.query(`update contacts set title = title || '', emails = emails || '{}'::text[], updated_at = now() where workspace_id = $1`, [ws.workspaceId]);
    return (performance.now() - a0) / 1000;
  });

  say(`bulk enrichment of ${size} contacts`);
  const t0 = performance.now();
  const { jobId } = await post('/contacts/bulk-enrichment', ws.apiKey, { fields: ['basic_contact_data', 'emails'], segmentId });
  const acceptS = (performance.now() - t0) / 1000;
  const handle = temporal.workflow.getHandle(`bulk-enrichment-${jobId}`);
  const { jobResponsePayload: summary } = (await handle.result()) as { jobResponsePayload: { done: number; creditsCharged: number; slices: Record<string, Record<string, number>> } };
  const s = (performance.now() - t0) / 1000;
  const history = await largestHistory(`bulk-enrichment-${jobId}`);
  const expected = Array.from({ length: size }, (_, i) => (basicHit(i) ? 1 : 0) + (emailBy(i) === 'alpha' ? 4 : emailBy(i) === 'beta' ? 5 : 0)).reduce((a, b) => a + b, 0);
  results.push(
    `bulk enrichment ${String(size).padStart(7)} rows   ${s.toFixed(1)} s = ${(size / s).toFixed(0)} rows/s (accept ${acceptS.toFixed(2)} s); done ${summary.done}; ` +
      `emails found ${summary.slices.emails!.found}; credits ${summary.creditsCharged} (expected ${expected})`,
  );
  results.push(`  anchor: plain SQL update of the same ${size} rows ${anchorS.toFixed(2)} s = ${(size / anchorS).toFixed(0)} rows/s`);
  results.push(`  largest history: ${history.events} events, ${history.bytes} bytes (${history.runs} runs)`);
  results.push(`  worker peak RSS so far: ${peakRssMb(worker)} MB (target < 500 MB)`);
}

console.log('');
console.log(`provider latency ${LATENCY} ms; basic 80% hit, emails 40% alpha / 25% beta / 35% miss`);
for (const r of results) console.log(r);
console.log('');

await stopService(worker);
await api.close();
await ownerPool.end();
await alpha.close();
await beta.close();
await dropDatabase(DB);
process.exit(0);
