/**
 * Bulk-upsert benchmark on the local stack. The API and the worker run as separate processes
 * (their peak RSS is read from /proc at the end). Three ways to load the same generated rows:
 *
 * 1. end to end: one `POST /contacts/{sourceId}/bulk-upsert-contacts` with every row (202 →
 *    job completed → `filter-contacts` sees them all), identity resolution and companies included,
 *    `--repeat` times into emptied tables (the median is reported), then the same rows once more;
 * 2. one by one through the ORM (`em.create(Contact) + flush` per row; contacts only), on the
 *    first `--orm-rows` rows (row-by-row is slow; the rate is what matters);
 * 3. plain `COPY` of the contact columns into `contacts` (no resolution, no companies).
 *
 *   npm run build && npx tsx bench/bulk-upsert.ts [--rows 100000] [--orm-rows 5000] [--repeat 3] [--tsx] [--poll-ms N]
 *
 * A job's completion is seen as a webhook consumer sees it: the request carries a
 * `webhookConfiguration` pointing at a receiver in this process, and the job's `job.completed`
 * delivery ends the wait. `--poll-ms N` polls `GET /jobs/{jobId}` every N ms instead, as a polling
 * client does: each poll of a running job is a Temporal query that the worker answers, so polling
 * every 100 ms spends CPU of Temporal, the worker and the API during the run.
 *
 * Uses a database of its own (`bench_contacts`, dropped at the end) and its own task queue. API
 * and worker run as in production, compiled JavaScript from `dist/` (a stale build is refused;
 * `--tsx` runs the sources through the TypeScript loader instead), with the flags `npm start`
 * gives them (PROCESS_NODE_FLAGS, WORKER_NODE_FLAGS; BENCH_NODE_FLAGS overrides both).
 * Targets: end to end ≥ 20,000 rows/s; peak RSS of API and worker < 500 MB.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { bundleWorkflowCode } from '@temporalio/worker';
import { Client } from '@temporalio/client';
import { connectTemporal } from '../infra/temporalConnection.js';
import { loadConfig } from '../domain/config.js';
import { jobWorkflowId } from '../workflows/contract/jobs.js';
import { openOrm } from '../db/orm.js';
import { Contact } from '../db/contacts.js';
import { createWorkspace } from '../db/workspaces.js';
import { normalizeEmail, normalizeProfileUrl } from '../domain/identity.js';
import { WORKFLOWS_PATH } from '../worker/worker.js';
import {
  BULK_MAPPING,
  bulkRow,
  compiledBuild,
  cpuByProcess,
  cpuSpent,
  databaseCpu,
  databaseCpuSpent,
  dropDatabase,
  freshDatabase,
  nodeFlagsOf,
  peakRssMb,
  plainCopyContacts,
  say,
  startService,
  stopService,
} from './lib.js';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    'orm-rows': { type: 'string', default: '5000' },
    repeat: { type: 'string', default: '3' },
    tsx: { type: 'boolean', default: false },
    'poll-ms': { type: 'string' },
  },
});
const ROWS = Number(args.rows);
const ORM_ROWS = Math.min(Number(args['orm-rows']), ROWS);
const REPEAT = Math.max(1, Number(args.repeat));
const POLL_MS = args['poll-ms'] === undefined ? undefined : Math.max(1, Number(args['poll-ms']));
const DB = 'bench_contacts';
const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

// --- database ---------------------------------------------------------------------------------
const dbUrl = new URL(await freshDatabase(DB));
const orm = await openOrm(dbUrl.toString());
const pool = new pg.Pool({ connectionString: dbUrl.toString(), max: 4 });

// --- API and worker processes -------------------------------------------------------------------
say('bundling workflows');
const dir = mkdtempSync(join(tmpdir(), 'bench-contacts-'));
const bundlePath = join(dir, 'workflows.js');
writeFileSync(bundlePath, (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: undefined })).code);
const port = 20000 + Math.floor(Math.random() * 20000);
const env = {
  ...process.env,
  DATABASE_URL: dbUrl.toString(),
  PORT: String(port),
  TEMPORAL_TASK_QUEUE: `bench-contacts-${Date.now()}`,
  WORKFLOW_BUNDLE_PATH: bundlePath,
  RATE_LIMIT_PER_MINUTE: '1000000',
  BODY_LIMIT_BYTES: String(64 * 1024 * 1024),
  LOG_LEVEL: 'warn',
  // The webhook receiver below listens on loopback, which outbound calls refuse by default.
  OUTBOUND_ALLOW_LIST: '127.0.0.1',
};
const compiled = compiledBuild(args.tsx);
say(`API and worker run ${compiled ? 'compiled (dist/)' : 'through tsx'}`);
const [apiProc, workerProc] = await Promise.all(['api', 'worker'].map((entry) => startService(entry, env, { compiled, stdout: 'inherit' })));

const baseUrl = `http://127.0.0.1:${port}`;
const ws = await createWorkspace(orm.em, { name: 'bench-contacts' });
/** `body` is sent as is when it is already a string (the import's JSON, serialised before the clock starts). */
async function http(method: string, path: string, body?: unknown) {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { 'x-api-key': ws.apiKey, 'content-type': 'application/json' },
    body: body === undefined || typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

// --- rows ---------------------------------------------------------------------------------------
const rows = Array.from({ length: ROWS }, (_, i) => bulkRow(i));

// --- 1. end to end ------------------------------------------------------------------------------
const src = await http('POST', '/sources', { sourceType: 'importFromWebhook', sourceIdentifier: 'bench', sourceMeta: { config: { fieldMapping: BULK_MAPPING } } });
if (src.status !== 200) throw new Error(JSON.stringify(src.body));
// The job's webhook receiver: a delivery's jobId settles that job's wait.
const delivered = new Set<string>();
const waiting = new Map<string, () => void>();
const receiver = createServer((req, res) => {
  let text = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (text += c));
  req.on('end', () => {
    res.writeHead(204).end();
    const { jobId } = JSON.parse(text);
    delivered.add(jobId);
    waiting.get(jobId)?.();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const webhookConfiguration = { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/job-finished` };
// The client's own JSON.stringify of 25 MB is not the service's time.
const importBody = JSON.stringify({ contactsData: rows, ...(POLL_MS === undefined ? { webhookConfiguration } : {}) });
say(POLL_MS === undefined ? 'completion seen through the job webhook' : `completion seen by polling GET /jobs/{jobId} every ${POLL_MS} ms`);
/** A run's wall time and CPU ms by process; `database`: the backends serving the bench's database (the API's and worker's queries). */
interface Measured {
  ms: number;
  cpu: Record<string, number>;
}
const cpuNow = () => cpuByProcess({ api: apiProc.pid, worker: workerProc.pid, bench: process.pid });

const temporal = new Client({ connection: await connectTemporal(loadConfig()) });
const ms = (t: any) => Number(t.seconds) * 1000 + Math.round((t.nanos ?? 0) / 1e6);

/**
 * The workflow-level view of a job from its history: how long the chunks (ingestStagedChunk)
 * ran, how long each waited to start once scheduled, and how much of the window stood idle:
 * the gap between a chunk's completion and the next chunk's start, and the time from the
 * workflow's start to its first chunk and from its last chunk to its completion.
 */
async function chunkTimeline(jobId: string): Promise<string> {
  const history = await temporal.workflow.getHandle(jobWorkflowId('bulk-upsert', jobId)).fetchHistory();
  const events = history.events ?? [];
  const scheduled = new Map<string, { at: number; type: string }>();
  const started = new Map<string, number>();
  const chunks: { scheduled: number; started: number; completed: number }[] = [];
  for (const e of events) {
    const at = ms(e.eventTime);
    const id = String(e.eventId);
    if (e.activityTaskScheduledEventAttributes) scheduled.set(id, { at, type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '' });
    if (e.activityTaskStartedEventAttributes) started.set(String(e.activityTaskStartedEventAttributes.scheduledEventId), at);
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const s = scheduled.get(String(done.scheduledEventId))!;
      if (s.type === 'ingestStagedChunk') chunks.push({ scheduled: s.at, started: started.get(String(done.scheduledEventId))!, completed: at });
    }
  }
  const t0 = ms(events[0]!.eventTime);
  const tEnd = ms(events.at(-1)!.eventTime);
  const run = chunks.map((c) => c.completed - c.started);
  const wait = chunks.map((c) => c.started - c.scheduled);
  // The next chunk starts once one completes: completion → next start (the window's refill).
  const refill = chunks.slice(2).map((c) => c.started - Math.max(...chunks.filter((p) => p.completed <= c.started).map((p) => p.completed)));
  const avg = (xs: number[]) => (xs.length ? Math.round(xs.reduce((a, b) => a + b, 0) / xs.length) : 0);
  return `${chunks.length} chunks, each ${avg(run)} ms on average (${Math.min(...run)}–${Math.max(...run)}); scheduled → started ${avg(wait)} ms; completion → next start ${avg(refill)} ms; workflow start → first chunk ${chunks[0]!.started - t0} ms; last chunk → workflow end ${tEnd - Math.max(...chunks.map((c) => c.completed))} ms`;
}

/** The finished job: after its webhook arrives (then read once), or polled every POLL_MS. */
async function waitForJob(jobId: string): Promise<any> {
  if (POLL_MS === undefined && !delivered.has(jobId)) await new Promise<void>((r) => waiting.set(jobId, r));
  for (;;) {
    const job = (await http('GET', `/jobs/${jobId}`)).body.data;
    if (job.jobStatus !== 'queued' && job.jobStatus !== 'running') return job;
    await new Promise((r) => setTimeout(r, POLL_MS ?? 10));
  }
}

/** One import of every row into an empty workspace: 202 → job completed → all rows queryable. */
async function importAll(run: number): Promise<Measured> {
  // Every run starts from empty tables (TRUNCATE, so no dead index entries slow the next run).
  await pool.query(`truncate contacts, contact_sources, contact_enrichments, companies`);
  const cpu0 = cpuNow();
  const db0 = databaseCpu(DB);
  const t0 = performance.now();
  const accepted = await http('POST', `/contacts/${src.body.data.id}/bulk-upsert-contacts`, importBody);
  if (accepted.status !== 202) throw new Error(JSON.stringify(accepted.body));
  const tAccepted = performance.now();
  const job = await waitForJob(accepted.body.jobId);
  const tDone = performance.now();
  const listed = await http('POST', '/contacts/filter-contacts', { fields: ['contact.workEmail', 'company.companyName'], limit: 1 });
  const ms = performance.now() - t0;
  if (job.jobStatus !== 'completed' || listed.body.meta.totalRecords !== ROWS)
    throw new Error(`job ${job.jobStatus} ${JSON.stringify(job.error)}; ${listed.body.meta?.totalRecords} contacts queryable`);
  say(`  run ${run}: 202 after ${Math.round(tAccepted - t0)} ms; job completed after ${Math.round(tDone - t0)} ms; all ${ROWS} queryable after ${Math.round(ms)} ms (${rate(ROWS, ms)} rows/s)`);
  if (run === 1) say(`  result: ${JSON.stringify({ ...job.jobResponsePayload, errors: job.jobResponsePayload.errors.length })}`);
  say(`  chunks: ${await chunkTimeline(accepted.body.jobId)}`);
  return { ms, cpu: { ...cpuSpent(cpu0, cpuNow()), database: databaseCpuSpent(db0, databaseCpu(DB)) } };
}

say(`end to end: ${ROWS} rows in one bulk-upsert-contacts request, ${REPEAT} runs`);
const runs: Measured[] = [];
for (let run = 1; run <= REPEAT; run++) runs.push(await importAll(run));
const median = [...runs].sort((a, b) => a.ms - b.ms)[Math.floor((runs.length - 1) / 2)]!;
const e2eMs = median.ms;

// Re-sending the same rows: identity resolution finds every contact, nothing changes.
const cpu2 = cpuNow();
const db2 = databaseCpu(DB);
const t2 = performance.now();
const again = await http('POST', `/contacts/${src.body.data.id}/bulk-upsert-contacts`, importBody);
const resendAcceptedMs = performance.now() - t2;
const job = await waitForJob(again.body.jobId);
const resendMs = performance.now() - t2;
const resendCpu = { ...cpuSpent(cpu2, cpuNow()), database: databaseCpuSpent(db2, databaseCpu(DB)) };
const count = await pool.query(`select count(*)::int as n from contacts where workspace_id = $1`, [ws.workspaceId]);
say(`  re-sent: ${JSON.stringify({ created: job.jobResponsePayload.created, updated: job.jobResponsePayload.updated })} in ${Math.round(resendMs)} ms (202 after ${Math.round(resendAcceptedMs)} ms); contacts stored: ${count.rows[0].n}`);
say(`  chunks: ${await chunkTimeline(again.body.jobId)}`);
const apiRss = peakRssMb(apiProc);
const workerRss = peakRssMb(workerProc);

// --- 2. one by one through the ORM --------------------------------------------------------------
say(`ORM one by one: ${ORM_ROWS} rows`);
const ormWs = await createWorkspace(orm.em, { name: 'bench-orm' });
const t3 = performance.now();
for (let i = 0; i < ORM_ROWS; i++) {
  const r = rows[i]!;
  const em = orm.em.fork();
  const email = normalizeEmail(r.Email)!;
  em.create(Contact, {
    id: uuidv7(),
    workspaceId: ormWs.workspaceId,
    firstName: r['First Name'],
    lastName: r['Last Name'],
    fullName: `${r['First Name']} ${r['Last Name']}`,
    title: r.Title,
    pronet: r.Profile,
    pronetKey: normalizeProfileUrl(r.Profile),
    emails: [email],
    workEmail: email,
    customFields: {},
    createdAt: new Date(),
    updatedAt: new Date(),
  });
  await em.flush();
}
const ormMs = performance.now() - t3;

// --- 3. plain COPY ------------------------------------------------------------------------------
say(`plain COPY: ${ROWS} rows`);
const copyWs = await createWorkspace(orm.em, { name: 'bench-copy' });
const cpu3 = cpuNow();
const db3 = databaseCpu(DB);
const copyMs = await plainCopyContacts(pool, copyWs.workspaceId, ROWS);
const copyCpu = { ...cpuSpent(cpu3, cpuNow()), database: databaseCpuSpent(db3, databaseCpu(DB)) };

// --- report -------------------------------------------------------------------------------------
const e2eRate = rate(ROWS, e2eMs);
const ormRate = rate(ORM_ROWS, ormMs);
const copyRate = rate(ROWS, copyMs);
console.log('');
console.log(`rows                               ${ROWS}`);
console.log(`end to end (202 → completed → queryable)  ${Math.round(e2eMs)} ms   ${e2eRate} rows/s   (median of ${REPEAT}: ${runs.map((r) => rate(ROWS, r.ms)).join(', ')}; target ≥ 20000)`);
console.log(`re-send of the same rows (all updates)     ${Math.round(resendMs)} ms   ${rate(ROWS, resendMs)} rows/s`);
console.log(`ORM one by one (${ORM_ROWS} rows)              ${Math.round(ormMs)} ms   ${ormRate} rows/s`);
console.log(`plain COPY                                 ${Math.round(copyMs)} ms   ${copyRate} rows/s`);
console.log(`ratios: end to end / ORM one by one = ${(e2eRate / ormRate).toFixed(1)}x; end to end / plain COPY = ${(e2eRate / copyRate).toFixed(2)}x; re-send / plain COPY = ${(rate(ROWS, resendMs) / copyRate).toFixed(2)}x`);
console.log(`CPU ms during the median end-to-end run (2 cores = ${2 * Math.round(e2eMs)} ms available): ${JSON.stringify(median.cpu)}`);
console.log(`CPU ms during the re-send: ${JSON.stringify(resendCpu)}; plain COPY: ${JSON.stringify(copyCpu)}`);
console.log(`peak RSS: API ${apiRss} MB, worker ${workerRss} MB   (target < 500 MB each; node flags: API ${nodeFlagsOf('api').join(' ')}, worker ${nodeFlagsOf('worker').join(' ')})`);

// --- cleanup ------------------------------------------------------------------------------------
await Promise.all([apiProc, workerProc].map(stopService));
receiver.close();
await pool.end();
await orm.close(true);
await temporal.connection.close();
// Connections still closing when the database is dropped must not crash the report.
process.on('uncaughtException', (e) => {
  if (!/terminating connection/.test(String(e))) throw e;
});
await dropDatabase(DB);
rmSync(dir, { recursive: true, force: true });
process.exit(0);
