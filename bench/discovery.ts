/**
 * Discovery benchmark: generates 1,000,000 people and 100,000 companies (deterministic), imports
 * them with the dataset importer into a database of its own, then runs a fixed mix of 20
 * realistic searches through the HTTP API and prints import rows/s and per-query p50/p95. The API
 * runs as production runs it, a process of its own from dist/ (`npm run build` first; a stale build
 * is refused; `--tsx` runs the sources through the loader instead; `--cpu-prof DIR` writes its V8
 * CPU profile there, for bench/profileSummary.ts).
 * Targets (issue 14) on 1M people / 100k companies: worst p95 ≤ 25 ms and median of the
 * queries' p95s ≤ 12 ms; import ≥ 20,000 rows/s.
 *
 *   npx tsx bench/discovery.ts [--people 1000000] [--companies 100000] [--runs 20] [--repeat 3] [--keep] [--reuse] [--database bench_discovery] [--explain] [--tsx] [--cpu-prof DIR] [--engine postgres|opensearch] [--reuse-index]
 *
 * `--engine opensearch` indexes the dataset into OpenSearch (OPENSEARCH_URL, else the embedded
 * node of scripts/stack.ts, started and stopped here), prints the indexing rate, checks that both
 * engines answer the mix's first pages identically (the parity oracle at this size), and runs
 * the API on the OpenSearch engine. `--reuse-index` (with `--reuse`) skips the build and searches the
 * indexes an earlier `--keep` run left, to measure searches apart from the build's aftermath (merges).
 *
 * `--repeat` measures the mix that many times (each `--runs` interleaved passes after two
 * warm-up passes) and prints every repetition's p95 per query and their median, beside an
 * anchor measured in the same loop (`GET /credits/balance`: auth and HTTP, no search), whose
 * latency is what the machine's load alone costs a request. `--keep` leaves
 * the database (`--database`, default `bench_discovery`) and the OpenSearch indexes in place; `--reuse` skips generation and
 * import when it already holds the dataset (new migrations are applied to it), for tuning the
 * queries alone (or comparing two builds of the code against two databases in the same hour).
 * `--explain` also prints each search's statements (round trips) and the shared buffers and
 * execution time of their EXPLAIN (ANALYZE, BUFFERS): the database work, which the load does not change.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Agent, request } from 'node:http';
import { PROCESS_NODE_FLAGS, loadConfig } from '../domain/config.js';
import { importDataset } from '../db/datasetImport.js';
import { migrate, openDatabase, ormOptions } from '../db/orm.js';
import { createWorkspace } from '../db/workspaces.js';
import { compiledBuild, databaseCpu, databaseCpuSpent, peakRssMb, startService, stopService } from './lib.js';
import { readFileSync } from 'node:fs';
import { searchV2 } from '../db/discoverySearch.js';
import { generateFiles } from '../scripts/dataset.js';
import { QUERIES } from './discoveryQueries.js';

const { values: args } = parseArgs({
  options: {
    people: { type: 'string', default: '1000000' },
    companies: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '20' },
    repeat: { type: 'string', default: '3' },
    seed: { type: 'string', default: '42' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
    'reuse-index': { type: 'boolean', default: false },
    database: { type: 'string', default: 'bench_discovery' },
    explain: { type: 'boolean', default: false },
    tsx: { type: 'boolean', default: false },
    'cpu-prof': { type: 'string' },
    engine: { type: 'string', default: 'postgres' },
  },
});
if (args.engine !== 'postgres' && args.engine !== 'opensearch') throw new Error('--engine must be postgres or opensearch');
const compiled = compiledBuild(args.tsx);
const PEOPLE = Number(args.people);
const COMPANIES = Number(args.companies);
const RUNS = Number(args.runs);
const REPEAT = Math.max(1, Number(args.repeat));
const SEED = Number(args.seed);
const DB = args.database;
if (!/^[a-z_][a-z0-9_]*$/.test(DB)) throw new Error(`--database must be a plain lower-case identifier, got ${DB}`);

/** Each search's statements (as searchV2 sends them) under EXPLAIN (ANALYZE, BUFFERS). */
async function explainMix(pool: pg.Pool, secret: string, exactCountLimit: number): Promise<void> {
  console.log(`\n${'query'.padEnd(36)} ${'statements'.padStart(10)} ${'buffers'.padStart(8)} ${'exec ms'.padStart(8)}`);
  for (const q of QUERIES) {
    const sent: { sql: string; values: unknown[] }[] = [];
    const recording = new Proxy(pool, {
      get: (target, key) =>
        key === 'query'
          ? (statement: { text: string; values: unknown[] }) => (sent.push({ sql: statement.text, values: statement.values }), target.query(statement))
          : Reflect.get(target, key),
    });
    await searchV2(recording, secret, q.entity === 'contacts' ? 'contact' : 'company', { ...q.body, limit: 25 }, { exactCountLimit });
    let buffers = 0;
    let ms = 0;
    for (const s of sent) {
      if (s.sql.startsWith('explain')) continue; // the planner's estimate of a broad search: a round trip, no execution
      const plan = (await pool.query(`explain (analyze, buffers, format json) ${s.sql}`, s.values)).rows[0]['QUERY PLAN'][0];
      buffers += plan.Plan['Shared Hit Blocks'] + plan.Plan['Shared Read Blocks'];
      ms += plan['Execution Time'];
    }
    console.log(`${q.name.padEnd(36)} ${String(sent.length).padStart(10)} ${String(buffers).padStart(8)} ${ms.toFixed(1).padStart(8)}`);
  }
}

/** Resident set (VmRSS) / its peak (VmHWM) of a process, MB (0 when it is gone or not readable). */
function statusMb(pid: number, key: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}
const rssMb = (pid: number) => statusMb(pid, 'VmRSS');
const hwmMb = (pid: number) => statusMb(pid, 'VmHWM');

/** CPU ms (user + system) a process used so far. */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** The pid of the OpenSearch node at `url` when it runs on this machine (scripts/stack.ts's pid file), else undefined. */
function openSearchPid(url: string): number | undefined {
  const file = join(process.env.DATA_DIR ?? join(process.cwd(), '.data'), `opensearch-${new URL(url).port}.pid`);
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return existsSync(`/proc/${pid}/stat`) ? pid : undefined;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

async function main() {
  const base = loadConfig();
  const dbUrl = (name: string) => {
    const u = new URL(base.databaseUrl);
    u.pathname = `/${name}`;
    return u.toString();
  };
  const admin = new pg.Client({ connectionString: dbUrl('postgres') });
  await admin.connect();
  const exists = (await admin.query(`select 1 from pg_database where datname = $1`, [DB])).rowCount === 1;
  let reuse = false;
  if (args.reuse && exists) {
    const probe = new pg.Client({ connectionString: dbUrl(DB) });
    await probe.connect();
    const n = (await probe.query(`select (select count(*) from ds_people) + (select count(*) from ds_companies) as n`).catch(() => ({ rows: [{ n: -1 }] }))).rows[0].n;
    await probe.end();
    reuse = Number(n) === PEOPLE + COMPANIES;
  }
  if (!reuse) {
    await admin.query(`drop database if exists ${DB} with (force)`);
    await admin.query(`create database ${DB}`);
  }
  await admin.end();
  const config = loadConfig({ ...process.env, DATABASE_URL: dbUrl(DB) });
  const db = await openDatabase(config.databaseUrl, { max: 2 }, { logger: () => {}, migrations: { ...ormOptions(config.databaseUrl).migrations, snapshotOnMigrate: false } });
  await migrate(db.orm);
  // indexes a new migration built need the planner's statistics of their expressions
  if (reuse) await db.pool.query('analyze ds_people, ds_companies');

  if (!reuse) {
    const dir = join(config.rootDir, '.data', `dataset-${PEOPLE}-${COMPANIES}-${SEED}`);
    if (!existsSync(join(dir, 'people.jsonl'))) {
      const t = performance.now();
      await generateFiles({ people: PEOPLE, companies: COMPANIES, seed: SEED, out: dir });
      console.log(`generated ${PEOPLE} people and ${COMPANIES} companies in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    const report = await importDataset(db.pool, { companies: join(dir, 'companies.jsonl'), people: join(dir, 'people.jsonl') });
    for (const r of report.results) console.log(`import ${r.kind.padEnd(9)} ${r.loaded} rows in ${r.seconds.toFixed(1)} s = ${Math.round(r.loaded / r.seconds)} rows/s (of which index rebuild ${r.indexSeconds.toFixed(1)} s)`);
    console.log(`vacuum analyze   ${report.vacuumSeconds.toFixed(1)} s`);
    console.log(`import total     ${report.rowsLoaded} rows in ${report.seconds.toFixed(1)} s = ${Math.round(report.rowsLoaded / report.seconds)} rows/s (incl. index builds and vacuum analyze)`);
  } else console.log(`reusing ${DB} (${PEOPLE} people, ${COMPANIES} companies)`);
  let engineEnv: Record<string, string> = {};
  let stopEngine = async () => {};
  let dropIndexes = async () => {};
  if (args.engine === 'opensearch') {
    const { startOpenSearch, stopOpenSearch, stackLayout } = await import('../scripts/stack.js');
    const { reindexDiscovery } = await import('../db/discoveryOpenSearch.js');
    let url = process.env.OPENSEARCH_URL;
    if (!url) {
      const st = await startOpenSearch(stackLayout(process.env));
      if (st.startedNow) stopEngine = () => stopOpenSearch(process.env);
      url = `http://127.0.0.1:${stackLayout(process.env).ports.opensearch}`;
    }
    const discovery = { ...config.discovery, engine: 'opensearch' as const, opensearchUrl: url, indexPrefix: `bench-${DB.replace(/[^a-z0-9_-]/g, '-')}` };
    if (args['reuse-index']) {
      // a node that just started still recovers its shards from disk: searches before that are 503s
      const health = await fetch(`${url}/_cluster/health/${discovery.indexPrefix}-*?wait_for_status=green&timeout=300s`).then((r) => r.json() as Promise<{ status: string }>);
      console.log(`reusing the OpenSearch indexes behind ${discovery.indexPrefix}-* (an earlier --keep run built them): ${health.status}`);
    } else {
      // the CPU each side spends on the build: on a shared machine a steadier measure than the wall clock
      const osPid = openSearchPid(url);
      const cpu0 = { node: process.cpuUsage(), pg: databaseCpu(DB), os: osPid ? processCpuMs(osPid) : NaN };
      const re = await reindexDiscovery(db.pool, discovery);
      const nodeCpu = process.cpuUsage(cpu0.node);
      const cpu = { node: (nodeCpu.user + nodeCpu.system) / 1000, postgres: databaseCpuSpent(cpu0.pg, databaseCpu(DB)), opensearch: osPid ? processCpuMs(osPid) - cpu0.os : NaN };
      const docs = re.index.people.documents + re.index.companies.documents;
      const cpuTotal = cpu.node + cpu.postgres + cpu.opensearch;
      console.log(`opensearch index CPU: indexer (node) ${(cpu.node / 1000).toFixed(1)} s, postgres ${(cpu.postgres / 1000).toFixed(1)} s, opensearch ${(cpu.opensearch / 1000).toFixed(1)} s = ${((cpuTotal * 1000) / docs).toFixed(0)} µs per document (${Math.round(docs / (cpuTotal / 1000))} documents per CPU-second); load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
      if (!args.keep) dropIndexes = async () => void (await fetch(`${url}/${discovery.indexPrefix}-*`, { method: 'DELETE' }));
      for (const [name, r] of Object.entries(re.index)) console.log(`opensearch index ${name.padEnd(9)} ${r.documents} documents in ${(r.ms / 1000).toFixed(1)} s = ${Math.round(r.documents / (r.ms / 1000))} documents/s (bulk, refresh and alias swap included)`);
    }
    // parity oracle at this size: each query's first page (items, total, tokens) on both engines
    const { isDeepStrictEqual } = await import('node:util');
    let same = 0;
    for (const q of QUERIES) {
      const entity = q.entity === 'contacts' ? 'contact' : 'company';
      const body = { ...q.body, limit: 25 };
      const exact = { exactCountLimit: Number.MAX_SAFE_INTEGER };
      const [a, b] = await Promise.all([searchV2(db.pool, config.serverSecret, entity, body, { ...discovery, ...exact, engine: 'postgres' }), searchV2(db.pool, config.serverSecret, entity, body, { ...discovery, ...exact })]);
      if (isDeepStrictEqual(a, b)) same++;
      else console.log(`parity: ${q.name} differs: postgres ${a.meta.totalRecords} [${a.data.slice(0, 3).map((d) => d.id).join(', ')}…], opensearch ${b.meta.totalRecords} [${b.data.slice(0, 3).map((d) => d.id).join(', ')}…]`);
    }
    console.log(`parity: ${same}/${QUERIES.length} queries answer the same first page and exact total on both engines`);
    const sizes = await fetch(`${url}/_cat/indices/${discovery.indexPrefix}-*?bytes=b&h=index,docs.count,store.size&format=json`).then((r) => r.json() as Promise<{ index: string; 'docs.count': string; 'store.size': string }[]>);
    for (const x of sizes) console.log(`opensearch ${x.index}: ${x['docs.count']} Lucene documents (nested included), ${(Number(x['store.size']) / 1e6).toFixed(0)} MB on disk`);
    engineEnv = { DISCOVERY_ENGINE: 'opensearch', OPENSEARCH_URL: url, OPENSEARCH_INDEX_PREFIX: discovery.indexPrefix };
  }
  const ws = await createWorkspace(db.orm.em, { name: 'bench', credits: 1_000_000_000 });
  // The API as production runs it: its own process, compiled JavaScript from dist/ (--tsx: the
  // sources through the loader), logging at info to stdout (here discarded). The client is a
  // keep-alive http agent in this process: its CPU is not the server's, as with any client.
  const port = 20000 + Math.floor(Math.random() * 20000);
  const api = await startService('api', { ...process.env, DATABASE_URL: config.databaseUrl, PORT: String(port), HOST: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '100000000', LOG_LEVEL: 'info', ...engineEnv }, {
    compiled,
    nodeFlags: [...PROCESS_NODE_FLAGS, ...(args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']] : [])],
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send = (method: string, path: string, body?: string) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const headers: Record<string, string> = { 'x-api-key': ws.apiKey };
      if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
      const req = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body);
    });
  try {
    const call = async (q: (typeof QUERIES)[number]) => {
      const t = performance.now();
      const res = await send('POST', `/discovery-search/find-${q.entity}-v2`, JSON.stringify({ ...q.body, limit: 25 }));
      const ms = performance.now() - t;
      const body = JSON.parse(res.text) as { data: unknown[]; meta: { totalRecords: number; totalRecordsEstimated: boolean } };
      if (res.status !== 200) throw new Error(`${q.name}: ${res.status} ${res.text}`);
      return { ms, total: `${body.meta.totalRecordsEstimated ? '~' : ''}${body.meta.totalRecords}`, rows: body.data.length };
    };
    // Anchor: the cheapest authenticated request (key look-up, JSON answer, no search) in the same
    // interleaved loop: the floor the machine's load puts under every figure of the run.
    const ANCHOR = 'anchor: GET /credits/balance';
    const anchor = async () => {
      const t = performance.now();
      const res = await send('GET', '/credits/balance');
      if (res.status !== 200) throw new Error(`${ANCHOR}: ${res.status}`);
      return performance.now() - t;
    };
    const totals = new Map<string, string>();
    /** p50 and p95 per query, one entry per repetition. */
    const reps: Map<string, { p50: number; p95: number }>[] = [];
    for (let rep = 0; rep < REPEAT; rep++) {
      // warm-up: two passes over the mix
      for (let i = 0; i < 2; i++) for (const q of QUERIES) await call(q);
      const lat = new Map<string, number[]>([...QUERIES.map((q) => [q.name, []] as [string, number[]]), [ANCHOR, []]]);
      // interleaved runs, so no query profits from running right after itself
      for (let r = 0; r < RUNS; r++) {
        for (const q of QUERIES) {
          const x = await call(q);
          lat.get(q.name)!.push(x.ms);
          totals.set(q.name, x.total);
          if (QUERIES.indexOf(q) % 5 === 0) lat.get(ANCHOR)!.push(await anchor());
        }
      }
      reps.push(new Map([...lat].map(([name, xs]) => [name, { p50: pct(xs, 50), p95: pct(xs, 95) }])));
      const p95s = QUERIES.map((q) => reps[rep]!.get(q.name)!.p95);
      const a = reps[rep]!.get(ANCHOR)!;
      console.log(`repetition ${rep + 1}/${REPEAT}: worst p95 ${Math.max(...p95s).toFixed(1)} ms, median p95 ${median(p95s).toFixed(1)} ms; anchor p50 ${a.p50.toFixed(1)} ms, p95 ${a.p95.toFixed(1)} ms`);
    }
    const repCols = reps.map((_, i) => `p95 #${i + 1}`.padStart(8)).join(' ');
    console.log(`\n${'query'.padEnd(36)} ${'entity'.padEnd(9)} ${'total'.padStart(8)} ${'p50 ms'.padStart(8)} ${repCols} ${'p95 ms'.padStart(8)}`);
    const medians: number[] = [];
    for (const q of QUERIES) {
      const p95 = median(reps.map((m) => m.get(q.name)!.p95));
      medians.push(p95);
      const cols = reps.map((m) => m.get(q.name)!.p95.toFixed(1).padStart(8)).join(' ');
      console.log(`${q.name.padEnd(36)} ${q.entity.padEnd(9)} ${totals.get(q.name)!.padStart(8)} ${median(reps.map((m) => m.get(q.name)!.p50)).toFixed(1).padStart(8)} ${cols} ${p95.toFixed(1).padStart(8)}${p95 > 25 ? '  > 25 ms' : ''}`);
    }
    const anchorP95 = median(reps.map((m) => m.get(ANCHOR)!.p95));
    const anchorCols = reps.map((m) => m.get(ANCHOR)!.p95.toFixed(1).padStart(8)).join(' ');
    console.log(`${ANCHOR.padEnd(36)} ${''.padEnd(9)} ${''.padStart(8)} ${median(reps.map((m) => m.get(ANCHOR)!.p50)).toFixed(1).padStart(8)} ${anchorCols} ${anchorP95.toFixed(1).padStart(8)}`);
    const worst = Math.max(...medians);
    console.log(`\nengine ${args.engine}; ${QUERIES.length} queries × ${RUNS} runs × ${REPEAT} repetitions (p50 and p95 columns: median over the repetitions; ~ = estimated total)`);
    console.log(`worst p95 ${worst.toFixed(1)} ms (target ≤ 25 ms), median of the p95s ${median(medians).toFixed(1)} ms (target ≤ 12 ms)`);
    console.log(`anchor p95 ${anchorP95.toFixed(1)} ms: worst p95 = ${(worst / anchorP95).toFixed(1)}× the anchor, median p95 = ${(median(medians) / anchorP95).toFixed(1)}×; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} cores`);
    // memory and disk of the run's processes (PostgreSQL: the postmaster's shared memory is counted
    // in each backend's RSS; the figure is the bench's backends and the database's size on disk)
    const pgRss = [...databaseCpu(DB).keys()].reduce((sum, pid) => sum + rssMb(Number(pid)), 0);
    const osPid = engineEnv.OPENSEARCH_URL ? openSearchPid(engineEnv.OPENSEARCH_URL) : undefined;
    const dbSize = (await db.pool.query<{ size: string }>(`select pg_database_size(current_database()) as size`)).rows[0]!.size;
    console.log(`memory: API RSS ${rssMb(api.pid!)} MB (peak ${peakRssMb(api)} MB), postgres backends of ${DB} RSS ${pgRss} MB${osPid ? `, opensearch RSS ${rssMb(osPid)} MB (peak ${hwmMb(osPid)} MB)` : ''}; disk: database ${DB} ${(Number(dbSize) / 1e6).toFixed(0)} MB`);
    if (args.explain) await explainMix(db.pool, config.serverSecret, config.discovery.exactCountLimit);
  } finally {
    agent.destroy();
    await stopService(api);
    await dropIndexes();
    await stopEngine();
    await db.close();
    if (!args.keep) {
      const a = new pg.Client({ connectionString: dbUrl('postgres') });
      await a.connect();
      await a.query(`drop database if exists ${DB} with (force)`);
      await a.end();
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
