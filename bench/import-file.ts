/**
 * File-import benchmark on the local stack (issue 14 item 4): a generated contacts file of
 * `--rows` rows (CSV, or JSON Lines with `--format jsonl`) is uploaded in 8 MiB chunks through
 * `POST /contact-files?chunk=true` + `POST /contact-files/assemble-chunks`, imported with
 * `POST /contacts/{sourceId}/bulk-upsert-contacts {contactsData: [], contactsFile: {fileName}}`
 * (202 → job completed → every row queryable), beside an inline bulk upsert of the first
 * `--inline-rows` rows (≤ 100,000, one request, into another workspace: the rate to match) and plain
 * COPY of the same rows in the same run (the anchor). The API and the worker are child processes; their peak RSS (VmHWM) is read at the
 * end. The job's progress is printed while it runs. API and worker run from `dist/` as in
 * production (a stale build is refused) unless `--tsx`.
 *
 *   npm run build && npx tsx bench/import-file.ts [--rows 1000000] [--format csv|jsonl] [--inline-rows 100000] [--tsx]
 *
 * Uses a database of its own (`bench_import_file`, dropped at the end) and its own task queue.
 * Targets: import rate as the inline bulk upsert (bench/bulk-upsert.ts) against the same anchor;
 * peak RSS of API and worker < 500 MB each.
 */
import { createWriteStream, mkdtempSync, openSync, readSync, closeSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { bundleWorkflowCode } from '@temporalio/worker';
import { createWorkspace } from '../db/workspaces.js';
import { WORKFLOWS_PATH } from '../worker/worker.js';
import { openDatabase } from '../db/orm.js';
import {
  BULK_MAPPING,
  bulkRow,
  compiledBuild,
  cpuByProcess,
  cpuSpent,
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
    rows: { type: 'string', default: '1000000' },
    format: { type: 'string', default: 'csv' },
    'inline-rows': { type: 'string', default: '100000' },
    tsx: { type: 'boolean', default: false },
  },
});
const useDist = compiledBuild(args.tsx);
const ROWS = Number(args.rows);
const INLINE_ROWS = Math.min(Number(args['inline-rows']), 100_000);
const FORMAT = args.format === 'jsonl' ? 'jsonl' : 'csv';
const CHUNK_BYTES = 8 * 1024 * 1024;
const DB = 'bench_import_file';
const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

// --- database, API and worker -------------------------------------------------------------------
const dbUrl = new URL(await freshDatabase(DB));
const database = await openDatabase(dbUrl.toString(), { max: 4 });
const pool = database.pool;
say('bundling workflows');
const dir = mkdtempSync(join(tmpdir(), 'bench-import-file-'));
const bundlePath = join(dir, 'workflows.js');
writeFileSync(bundlePath, (await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: undefined })).code);
const port = 20000 + Math.floor(Math.random() * 20000);
const env = {
  ...process.env,
  DATABASE_URL: dbUrl.toString(),
  PORT: String(port),
  TEMPORAL_TASK_QUEUE: `bench-import-file-${Date.now()}`,
  WORKFLOW_BUNDLE_PATH: bundlePath,
  RATE_LIMIT_PER_MINUTE: '1000000',
  BODY_LIMIT_BYTES: String(64 * 1024 * 1024),
  LOG_LEVEL: 'warn',
};
const [api, worker] = await Promise.all(['api', 'worker'].map((entry) => startService(entry, env, { compiled: useDist, stdout: 'inherit' })));
const baseUrl = `http://127.0.0.1:${port}`;
const ws = await createWorkspace(database.orm.em, { name: 'bench-import-file' });
async function http(method: string, path: string, body?: unknown, apiKey = ws.apiKey) {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { 'x-api-key': apiKey, ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined || typeof body === 'string' || body instanceof FormData ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

// --- the file -----------------------------------------------------------------------------------
const filePath = join(dir, `contacts.${FORMAT}`);
say(`writing ${ROWS} rows as ${FORMAT}`);
{
  const columns = BULK_MAPPING.map((m) => m.sourceFieldName);
  const cell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  const out = createWriteStream(filePath);
  if (FORMAT === 'csv') out.write(columns.join(',') + '\n');
  for (let i = 0; i < ROWS; i += 10_000) {
    let s = '';
    for (let j = i; j < Math.min(i + 10_000, ROWS); j++) {
      const r = bulkRow(j) as Record<string, string>;
      s += (FORMAT === 'csv' ? columns.map((c) => cell(r[c]!)).join(',') : JSON.stringify(r)) + '\n';
    }
    if (!out.write(s)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}
const fileBytes = statSync(filePath).size;
say(`file: ${(fileBytes / 1024 / 1024).toFixed(1)} MiB`);

const src = await http('POST', '/sources', { sourceType: 'importFromWebhook', sourceIdentifier: 'bench-file', sourceMeta: { config: { fieldMapping: BULK_MAPPING } } });
if (src.status !== 200) throw new Error(JSON.stringify(src.body));
const cpuNow = () => cpuByProcess({ api: api.pid, worker: worker.pid, bench: process.pid });

async function waitForJob(jobId: string, apiKey: string, onRunning?: (job: any) => void): Promise<any> {
  for (;;) {
    const job = (await http('GET', `/jobs/${jobId}`, undefined, apiKey)).body.data;
    if (job.jobStatus !== 'queued' && job.jobStatus !== 'running') return job;
    onRunning?.(job);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// --- upload in chunks ---------------------------------------------------------------------------
const cpu0 = cpuNow();
const t0 = performance.now();
const chunks: { fileName: string; chunkNumber: number }[] = [];
{
  const fd = openSync(filePath, 'r');
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  for (let pos = 0, n = 1; pos < fileBytes; pos += CHUNK_BYTES, n++) {
    const len = readSync(fd, buf, 0, CHUNK_BYTES, pos);
    const form = new FormData();
    form.append('file', new Blob([buf.subarray(0, len)]), `part${n}`);
    const r = await http('POST', '/contact-files?chunk=true', form);
    if (r.status !== 200) throw new Error(`chunk ${n}: ${JSON.stringify(r.body)}`);
    chunks.push({ fileName: r.body.fileName, chunkNumber: n });
  }
  closeSync(fd);
}
const assembled = await http('POST', '/contact-files/assemble-chunks', { chunks, fileExtension: FORMAT });
if (assembled.status !== 200) throw new Error(JSON.stringify(assembled.body));
const tUploaded = performance.now();
say(`uploaded in ${chunks.length} chunks and assembled in ${Math.round(tUploaded - t0)} ms: ${assembled.body.contentType}`);

// --- import -------------------------------------------------------------------------------------
const accepted = await http('POST', `/contacts/${src.body.data.id}/bulk-upsert-contacts`, { contactsData: [], contactsFile: { fileName: assembled.body.fileName } });
if (accepted.status !== 202) throw new Error(JSON.stringify(accepted.body));
const tAccepted = performance.now();
let lastPrint = 0;
const job = await waitForJob(accepted.body.jobId, ws.apiKey, (running) => {
  if (performance.now() - lastPrint < 10_000) return;
  lastPrint = performance.now();
  const f = running.jobResponsePayload?.contactsFile;
  say(`  ${Math.round((lastPrint - tAccepted) / 1000)} s: ${JSON.stringify(running.progress)}${f ? `; ${Math.round(f.bytesRead / 1024 / 1024)} MiB read` : ''}; RSS peak api ${peakRssMb(api)} MB, worker ${peakRssMb(worker)} MB`);
});
const tDone = performance.now();
const listed = await http('POST', '/contacts/filter-contacts', { fields: ['contact.workEmail'], limit: 1 });
const tQueryable = performance.now();
const cpu = cpuSpent(cpu0, cpuNow());
if (job.jobStatus !== 'completed' || listed.body.meta.totalRecords !== ROWS)
  throw new Error(`job ${job.jobStatus} ${JSON.stringify(job.error)}; ${listed.body.meta?.totalRecords} contacts queryable`);
say(`  result: ${JSON.stringify({ ...job.jobResponsePayload, errors: job.jobResponsePayload.errors.length })}`);
const apiRss = peakRssMb(api);
const workerRss = peakRssMb(worker);

// --- inline bulk upsert of the first rows, into a workspace of its own (the rate to match) ------
// After the peak RSS was read (a 100,000-row JSON body is the inline path's memory, not the
// file's) and the file's contacts were counted.
let inlineMs = NaN;
if (INLINE_ROWS > 0) {
  say(`inline bulk upsert: ${INLINE_ROWS} rows in one request`);
  // Into empty tables, as the file import started.
  await pool.query(`truncate contacts, contact_sources, contact_enrichments, companies`);
  const inlineWs = await createWorkspace(database.orm.em, { name: 'bench-inline' });
  const inlineSrc = await http('POST', '/sources', { sourceType: 'importFromWebhook', sourceIdentifier: 'bench-inline', sourceMeta: { config: { fieldMapping: BULK_MAPPING } } }, inlineWs.apiKey);
  // Serialised before the clock starts, as bench/bulk-upsert.ts does: the client's work is not the service's.
  const importBody = JSON.stringify({ contactsData: Array.from({ length: INLINE_ROWS }, (_, i) => bulkRow(i)) });
  const ti = performance.now();
  const r = await http('POST', `/contacts/${inlineSrc.body.data.id}/bulk-upsert-contacts`, importBody, inlineWs.apiKey);
  if (r.status !== 202) throw new Error(JSON.stringify(r.body));
  const inlineJob = await waitForJob(r.body.jobId, inlineWs.apiKey);
  if (inlineJob.jobStatus !== 'completed') throw new Error(JSON.stringify(inlineJob));
  inlineMs = performance.now() - ti;
  say(`  ${INLINE_ROWS} rows in ${Math.round(inlineMs)} ms (${rate(INLINE_ROWS, inlineMs)} rows/s, request → completed)`);
}

// --- plain COPY (anchor) ------------------------------------------------------------------------
say(`plain COPY: ${ROWS} rows`);
const copyWs = await createWorkspace(database.orm.em, { name: 'bench-copy' });
const copyMs = await plainCopyContacts(pool, copyWs.workspaceId, ROWS);

// --- report -------------------------------------------------------------------------------------
const importMs = tQueryable - tUploaded;
const e2eMs = tQueryable - t0;
const copyRate = rate(ROWS, copyMs);
console.log('');
console.log(`rows                                        ${ROWS} (${FORMAT}, ${(fileBytes / 1024 / 1024).toFixed(1)} MiB, ${chunks.length} chunks of ${CHUNK_BYTES / 1024 / 1024} MiB)`);
console.log(`upload + assemble                           ${Math.round(tUploaded - t0)} ms`);
console.log(`import (request → completed → queryable)    ${Math.round(importMs)} ms   ${rate(ROWS, importMs)} rows/s   (202 after ${Math.round(tAccepted - tUploaded)} ms, completed after ${Math.round(tDone - tAccepted)} ms)`);
console.log(`end to end (upload start → queryable)       ${Math.round(e2eMs)} ms   ${rate(ROWS, e2eMs)} rows/s`);
if (INLINE_ROWS > 0) console.log(`inline bulk upsert (${INLINE_ROWS} rows, request → completed, same run) ${Math.round(inlineMs)} ms   ${rate(INLINE_ROWS, inlineMs)} rows/s`);
console.log(`plain COPY (anchor, same run)               ${Math.round(copyMs)} ms   ${copyRate} rows/s`);
const inlineRatios = INLINE_ROWS > 0 ? `; inline / plain COPY = ${(rate(INLINE_ROWS, inlineMs) / copyRate).toFixed(2)}x; import / inline = ${(rate(ROWS, importMs) / rate(INLINE_ROWS, inlineMs)).toFixed(2)}x` : '';
console.log(`ratios: import / plain COPY = ${(rate(ROWS, importMs) / copyRate).toFixed(2)}x; end to end / plain COPY = ${(rate(ROWS, e2eMs) / copyRate).toFixed(2)}x${inlineRatios}`);
console.log(`CPU ms from upload start to queryable (2 cores = ${2 * Math.round(e2eMs)} ms available): ${JSON.stringify(cpu)}`);
console.log(`peak RSS: API ${apiRss} MB, worker ${workerRss} MB   (target < 500 MB each; ${useDist ? 'compiled dist/' : 'tsx'}; node flags: API ${nodeFlagsOf('api').join(' ')}, worker ${nodeFlagsOf('worker').join(' ')})`);

// --- cleanup ------------------------------------------------------------------------------------
await Promise.all([stopService(api), stopService(worker)]);
await database.close();
// Connections still closing when the database is dropped must not crash the report.
process.on('uncaughtException', (e) => {
  if (!/terminating connection/.test(String(e))) throw e;
});
await dropDatabase(DB);
rmSync(dir, { recursive: true, force: true });
process.exit(0);
