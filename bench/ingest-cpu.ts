/**
 * The worker's side of a bulk upsert, without Temporal or the API, phase by phase: the generated
 * rows of bench/bulk-upsert.ts are staged as the API stages them, then each chunk is read back,
 * mapped and ingested exactly as the `ingestStagedChunk` activity does (readMappedChunk +
 * ingestContacts), two chunks at a time as the workflow runs them. Prints per run the wall time,
 * this process's CPU and the database's, and where the time went (wall ms per phase, summed
 * over both lanes); then the same for a re-send of the same rows (all updates), and plain COPY
 * of the same rows (the anchor of bench/bulk-upsert.ts) measured in the same run.
 *
 *   npx tsx bench/ingest-cpu.ts [--rows 100000] [--repeat 3] [--chunk 10000] [--lanes 2]
 *
 * Runs itself again with the worker's V8 flags (WORKER_NODE_FLAGS) unless BENCH_NODE_FLAGS names others.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { createWorkspace } from '../db/workspaces.js';
import { openDatabase } from '../db/orm.js';
import { enforceTenancy, inWorkspaceScope } from '../db/tenancy.js';
import { loadContactCatalog } from '../db/contactRead.js';
import { ingestContacts } from '../db/contactIngest.js';
import type { PhaseTimes } from '../db/phaseTimes.js';
import { copyBlocks, readMappedChunk, STAGING_BLOCK } from '../db/contactStaging.js';
import { planFor } from '../domain/contactMapping.js';
import { BULK_MAPPING, bulkRow, cpuByProcess, cpuSpent, databaseCpu, databaseCpuSpent, dropDatabase, freshDatabase, nodeFlagsOf, plainCopyContacts, say } from './lib.js';

if (!process.env.INGEST_CPU_CHILD) {
  const flags = nodeFlagsOf('worker');
  const child = spawnSync(process.execPath, [...flags, '--import', 'tsx', fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, INGEST_CPU_CHILD: '1' },
  });
  process.exit(child.status ?? 1);
}
const { values: args } = parseArgs({
  options: { rows: { type: 'string', default: '100000' }, repeat: { type: 'string', default: '3' }, chunk: { type: 'string', default: '10000' }, lanes: { type: 'string', default: '2' } },
});
const ROWS = Number(args.rows);
const CHUNK = Number(args.chunk);
const LANES = Number(args.lanes);
const DB = 'bench_ingest_cpu';
// Connections stay open, so the CPU of this bench's own database backends can be read (databaseCpu).
const databaseUrl = await freshDatabase(DB);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 * LANES + 2, idleTimeoutMillis: 0 });
// The ingest runs as the worker runs it: row-level security enforced, in the workspace's scope.
const tenantPool = new pg.Pool({ connectionString: databaseUrl, max: 2 * LANES + 2, idleTimeoutMillis: 0 });
enforceTenancy(tenantPool);
// Workspaces are created through the entity manager (db/workspaces.ts).
const setup = await openDatabase(databaseUrl, { max: 1 });
const ws = await createWorkspace(setup.orm.em, { name: 'bench-ingest-cpu' });
const sourceId = uuidv7();
const catalog = await loadContactCatalog(pool, ws.workspaceId);
const plan = planFor(catalog, BULK_MAPPING);

// Staged once, as the API stages a request's rows (the stage is read, never consumed, by a chunk).
const batchId = uuidv7();
const stageClient = await pool.connect();
await copyBlocks(stageClient, batchId, (function* () {
  for (let b = 0; b < ROWS; b += STAGING_BLOCK) yield { seq: b, data: JSON.stringify(Array.from({ length: Math.min(STAGING_BLOCK, ROWS - b) }, (_, j) => bulkRow(b + j))) };
})());
stageClient.release();

interface Run {
  ms: number;
  cpu: Record<string, number>;
  /** CPU ms of this bench's database backends. */
  dbMs: number;
  phases: PhaseTimes;
  created: number;
  updated: number;
}

/** Every staged row ingested, LANES chunks at a time, as the workflow's activities do. */
async function ingestAll(): Promise<Run> {
  const phases: PhaseTimes = {};
  const c0 = cpuByProcess({ bench: process.pid });
  const db0 = databaseCpu(DB);
  const t0 = performance.now();
  let next = 0, created = 0, updated = 0;
  const lane = async () => {
    while (next < ROWS) {
      const from = next;
      next += CHUNK;
      const chunk = await readMappedChunk(pool, { batchId, from, to: Math.min(from + CHUNK, ROWS), maxErrors: 500, rowPath: '/contactsData' }, catalog, plan, phases);
      if (chunk.failed) throw new Error(JSON.stringify(chunk.errors[0]));
      const r = await inWorkspaceScope(ws.workspaceId, () => ingestContacts(tenantPool, chunk.inputs, { workspaceId: ws.workspaceId, sourceId, mode: 'automated' }, phases));
      created += r.created;
      updated += r.updated;
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
  const ms = performance.now() - t0;
  return { ms, cpu: cpuSpent(c0, cpuByProcess({ bench: process.pid })), dbMs: databaseCpuSpent(db0, databaseCpu(DB)), phases, created, updated };
}

const rate = (ms: number) => Math.round((ROWS / ms) * 1000);
const show = (r: Run) =>
  `${Math.round(r.ms)} ms wall (${rate(r.ms)} rows/s), created ${r.created}, updated ${r.updated}; CPU ms: this bench's database backends ${r.dbMs}, by process ${JSON.stringify(r.cpu)}\n      phases (wall ms, both lanes): ${Object.entries(r.phases)
    .map(([k, v]) => `${k} ${Math.round(v)}`)
    .join(', ')}`;
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

const runs: Run[] = [];
for (let run = 1; run <= Number(args.repeat); run++) {
  await pool.query(`truncate contacts, contact_sources, contact_enrichments, companies`);
  runs.push(await ingestAll());
  say(`run ${run}: ${show(runs.at(-1)!)}`);
}
const resend = await ingestAll();
say(`re-send: ${show(resend)}`);

// The anchor: plain COPY of the same rows' contact columns, into an empty table like the first loads.
await pool.query(`truncate contacts, contact_sources, contact_enrichments, companies`);
const copyWs = await createWorkspace(setup.orm.em, { name: 'bench-copy' });
const copyCpu0 = cpuByProcess({ bench: process.pid });
const copyDb0 = databaseCpu(DB);
const copyMs = await plainCopyContacts(pool, copyWs.workspaceId, ROWS);
const copyDbMs = databaseCpuSpent(copyDb0, databaseCpu(DB));
const copyBenchMs = cpuSpent(copyCpu0, cpuByProcess({ bench: process.pid })).bench ?? 0;

const first = runs.find((r) => r.ms === med(runs.map((x) => x.ms)))!;
console.log(`ingest of ${ROWS} rows (chunks of ${CHUNK}, ${LANES} lanes): median wall ${Math.round(first.ms)} ms (${rate(first.ms)} rows/s, ${(copyMs / first.ms).toFixed(2)}x COPY); median CPU ms: this process ${med(runs.map((r) => r.cpu.bench!))}, its database backends ${med(runs.map((r) => r.dbMs))}`);
console.log(`re-send (all updates): ${Math.round(resend.ms)} ms (${rate(resend.ms)} rows/s, ${(copyMs / resend.ms).toFixed(2)}x COPY); CPU ms: this process ${resend.cpu.bench}, its database backends ${resend.dbMs}`);
console.log(`plain COPY of the same rows: ${Math.round(copyMs)} ms (${rate(copyMs)} rows/s); CPU ms: this process ${copyBenchMs}, its database backend ${copyDbMs}`);
console.log(`peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB (node flags: ${process.execArgv.filter((a) => a.startsWith('--max') || a.startsWith('--heap')).join(' ')})`);
await Promise.all([pool.end(), tenantPool.end()]);
await setup.close();
await dropDatabase(DB);
