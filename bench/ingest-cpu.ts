/**
 * CPU of the worker's side of a bulk upsert, without Temporal or the API: the 100,000 generated
 * rows of bench/bulk-upsert.ts, staged as JSON blocks, are read back, mapped and ingested in
 * chunks of 10,000 (two at a time, as the workflow does) in this process. Prints this process's
 * CPU time (user + system) and the database's per run: a steadier view than wall-clock rates of how
 * much the ingest path costs the worker.
 *
 *   npx tsx bench/ingest-cpu.ts [--rows 100000] [--repeat 3]
 *
 * Runs itself again with the worker's V8 flags (PROCESS_NODE_FLAGS) unless BENCH_NODE_FLAGS names others.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';
import { createWorkspace } from '../db/workspaces.js';
import { loadContactCatalog } from '../db/contactRead.js';
import { ingestContacts } from '../db/contactIngest.js';
import { mapRow, planFor, type ContactInput } from '../domain/contactMapping.js';
import { PROCESS_NODE_FLAGS } from '../domain/config.js';
import { BULK_MAPPING, bulkRow, cpuByProcess, cpuSpent, dropDatabase, freshDatabase, say } from './lib.js';

if (!process.env.INGEST_CPU_CHILD) {
  const flags = process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? PROCESS_NODE_FLAGS;
  const child = spawnSync(process.execPath, [...flags, '--import', 'tsx', fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, INGEST_CPU_CHILD: '1' },
  });
  process.exit(child.status ?? 1);
}
const { values: args } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, repeat: { type: 'string', default: '3' } } });
const ROWS = Number(args.rows);
const CHUNK = 10_000;
const DB = 'bench_ingest_cpu';
const pool = new pg.Pool({ connectionString: await freshDatabase(DB), max: 4 });
const ws = await createWorkspace(pool, { name: 'bench-ingest-cpu' });
const blocks: string[] = [];
for (let b = 0; b < ROWS; b += 1000) blocks.push(JSON.stringify(Array.from({ length: Math.min(1000, ROWS - b) }, (_, j) => bulkRow(b + j))));
const sourceId = uuidv7();
const catalog = await loadContactCatalog(pool, ws.workspaceId);
const plan = planFor(catalog, BULK_MAPPING);

async function chunk(from: number): Promise<void> {
  const inputs: ContactInput[] = [];
  for (let b = from / 1000; b < Math.min(ROWS, from + CHUNK) / 1000; b++) {
    const rows = JSON.parse(blocks[b]!) as unknown[];
    rows.forEach((r, j) => {
      const m = mapRow(r, catalog, plan, `/contactsData/${b * 1000 + j}`);
      if (!m.input) throw new Error(JSON.stringify(m.errors));
      inputs.push(m.input);
    });
  }
  await ingestContacts(pool, inputs, { workspaceId: ws.workspaceId, sourceId, mode: 'automated' });
}

const runs: { ms: number; cpu: Record<string, number> }[] = [];
for (let run = 1; run <= Number(args.repeat); run++) {
  await pool.query(`truncate contacts, contact_sources, companies`);
  const c0 = cpuByProcess({ bench: process.pid });
  const t0 = performance.now();
  let next = 0;
  const lane = async () => { while (next < ROWS) { const from = next; next += CHUNK; await chunk(from); } };
  await Promise.all([lane(), lane()]);
  const ms = performance.now() - t0;
  const cpu = cpuSpent(c0, cpuByProcess({ bench: process.pid }));
  runs.push({ ms, cpu });
  say(`run ${run}: ${Math.round(ms)} ms wall; CPU ms ${JSON.stringify(cpu)}`);
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
console.log(`ingest of ${ROWS} rows: median wall ${Math.round(med(runs.map((r) => r.ms)))} ms; median CPU ms: this process ${med(runs.map((r) => r.cpu.bench!))}, postgres ${med(runs.map((r) => r.cpu.postgres!))}; peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB (node flags: ${process.execArgv.filter((a) => a.startsWith('--max') || a.startsWith('--heap')).join(' ')})`);
await pool.end();
await dropDatabase(DB);
