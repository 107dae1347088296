/**
 * The authenticated hot path against its physical anchor, in one run: a bare Koa handler on the
 * same Node (answering a small JSON body), then `GET /contacts/{id}` (each request another of the
 * workspace's 10,000 contacts) and `GET /credits/balance` of the real API process, each under
 * autocannon with 32 connections; rates, p99s and the ratios
 * to bare Koa, median of 3 rounds (the three targets interleaved, so a load spike on the shared
 * machine hits all of them alike).
 *
 *   npx tsx bench/api-hotpath.ts [--seconds 10] [--rounds 3] [--tsx] [--cpu-prof DIR]
 *
 * The API runs as its own process, the way production runs it: compiled JavaScript from
 * `dist/` (`npm run build`) when it exists, else through the tsx loader (said in the output);
 * `--tsx` forces the loader. Logging at info goes to stdout (here /dev/null), as in production.
 * `--cpu-prof DIR` writes the API process's V8 CPU profile there (open it in Chrome DevTools).
 * The API gets the flags `npm start` gives it (PROCESS_NODE_FLAGS); BENCH_NODE_FLAGS="…" tries others.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { v7 as uuidv7 } from 'uuid';
import { PROCESS_NODE_FLAGS, ROOT_DIR } from '../domain/config.js';
import { createWorkspace } from '../db/workspaces.js';
import { compiledBuild, cpuByProcess, cpuSpent, databaseCpu, databaseCpuSpent, dropDatabase, freshDatabase, nodeFlagsOf, roundRobin, say, startService, stopService } from './lib.js';
import { openDatabase } from '../db/orm.js';

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '10' }, rounds: { type: 'string', default: '3' }, tsx: { type: 'boolean', default: false }, 'cpu-prof': { type: 'string' } } });
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const CONNECTIONS = 32;
const API_PORT = Number(process.env.BENCH_API_PORT ?? 3106);
const KOA_PORT = Number(process.env.BENCH_KOA_PORT ?? 3116);

const useDist = compiledBuild(args.tsx);

interface Run {
  rps: number;
  p99: number;
  errors: number;
  /** Cores busy on average during the run, per process group (`other`: the rest of the machine). */
  cores: Record<string, number>;
  /**
   * CPU µs per request of the server process (API or bare Koa) and of the PostgreSQL backends
   * serving the bench's own database (others' queries are not in it): steadier than rates on a
   * loaded machine.
   */
  serverUs: number;
  postgresUs: number;
}

/** Loads `url` for `seconds`; with `paths`, request after request goes to the next of them (round robin). */
async function load(url: string, headers: Record<string, string>, seconds: number, server: 'api' | 'bare Koa', paths?: string[]): Promise<Run> {
  const named = { api: api?.pid, 'bare Koa': koa?.pid, 'autocannon': process.pid };
  const before = cpuByProcess(named);
  const db0 = databaseCpu(dbName);
  const t0 = performance.now();
  const r = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers, requests: paths && roundRobin(paths) });
  const spent = cpuSpent(before, cpuByProcess(named));
  const dbMs = databaseCpuSpent(db0, databaseCpu(dbName));
  const wallMs = performance.now() - t0;
  const cores = Object.fromEntries(Object.entries(spent).map(([k, ms]) => [k, Math.round((ms / wallMs) * 100) / 100]));
  const perRequestUs = (ms: number | undefined) => Math.round(((ms ?? 0) * 1000) / Math.max(1, r.requests.total));
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.non2xx + r.errors + r.timeouts, cores, serverUs: perRequestUs(spent[server]), postgresUs: perRequestUs(dbMs) };
}
const coresText = (c: Record<string, number>) => Object.entries(c).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dbName = `bench_hotpath_${process.pid}`;
const databaseUrl = await freshDatabase(dbName);
let api: ChildProcess | undefined;
let koa: ChildProcess | undefined;
try {
  const database = await openDatabase(databaseUrl, { max: 2 });
  const pool = database.pool;
  const ws = await createWorkspace(database.orm.em, { name: 'bench', plan: 'enterprise', credits: 1000 });
  const other = await createWorkspace(database.orm.em, { name: 'noise' });
  // 20,000 contacts in two workspaces, so the read is an index look-up in a real table.
  const companyId = uuidv7();
  await pool.query(
    `insert into companies (id, workspace_id, company_key, company_name, company_website, company_domain, company_industry)
     values ($1, $2, 'acme.example.com', 'Acme', 'https://acme.example.com', 'acme.example.com', 'Software')`,
    [companyId, ws.workspaceId],
  );
  await pool.query(
    `insert into contacts (id, workspace_id, first_name, last_name, full_name, title, emails, work_email, primary_company_id, company_ids)
     select gen_random_uuid(), case when g % 2 = 0 then $1::uuid else $2::uuid end, 'First' || g, 'Last' || g, 'First' || g || ' Last' || g,
            'Engineer', array['p' || g || '@acme.example.com'], 'p' || g || '@acme.example.com',
            case when g % 2 = 0 then $3::uuid end, case when g % 2 = 0 then array[$3::uuid] else '{}' end
       from generate_series(1, 20000) g`,
    [ws.workspaceId, other.workspaceId, companyId],
  );
  await pool.query('analyze contacts');
  // Every request reads another contact, as a client walking a list does (the API batches the reads of one turn).
  const contactPaths = (await pool.query<{ id: string }>(`select id from contacts where workspace_id = $1 order by random()`, [ws.workspaceId])).rows.map((r) => `/contacts/${r.id}`);
  await database.close();

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(API_PORT),
    HOST: '127.0.0.1',
    // The per-key limit is not what is measured here.
    RATE_LIMIT_PER_MINUTE: '1000000000',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    NODE_ENV: 'production',
    // Production refuses the development secrets.
    SERVER_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
  };
  const profileFlags = args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']] : [];
  api = await startService('api', env, { compiled: useDist, nodeFlags: [...nodeFlagsOf('api'), ...profileFlags] });
  koa = await startService(join(ROOT_DIR, 'bench', 'bare-koa.mjs'), { ...process.env, PORT: String(KOA_PORT) }, { compiled: true, nodeFlags: PROCESS_NODE_FLAGS });

  const auth = { 'x-api-key': ws.apiKey };
  const targets = {
    'bare Koa': { url: `http://127.0.0.1:${KOA_PORT}/`, headers: {}, server: 'bare Koa' as const, paths: undefined },
    'GET /contacts/{id}': { url: `http://127.0.0.1:${API_PORT}${contactPaths[0]}`, headers: auth, server: 'api' as const, paths: contactPaths },
    'GET /credits/balance': { url: `http://127.0.0.1:${API_PORT}/credits/balance`, headers: auth, server: 'api' as const, paths: undefined },
  };
  // Sanity: the API answers 200 with the contact before anything is timed.
  const probe = await fetch(targets['GET /contacts/{id}'].url, { headers: auth });
  if (probe.status !== 200) throw new Error(`GET /contacts/{id} answered ${probe.status}: ${await probe.text()}`);
  say(`Node ${process.version}, ${CONNECTIONS} connections, ${SECONDS} s per run, ${ROUNDS} rounds; API from ${useDist ? 'dist/ (compiled JavaScript)' : 'TypeScript through the tsx loader'}, LOG_LEVEL=${env.LOG_LEVEL}`);
  for (const t of Object.values(targets)) await load(t.url, t.headers, 2, t.server, t.paths); // warm-up (JIT, pools, caches)

  const runs: Record<string, Run[]> = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, t] of Object.entries(targets)) {
      const r = await load(t.url, t.headers, SECONDS, t.server, t.paths);
      runs[name]!.push(r);
      say(`round ${round} ${name.padEnd(22)} ${Math.round(r.rps).toString().padStart(6)} rps  p99 ${r.p99} ms  CPU/request: server ${r.serverUs} µs, postgres ${r.postgresUs} µs${r.errors ? `  ${r.errors} errors/non-2xx` : ''}  cores busy: ${coresText(r.cores)}`);
    }
  }
  const koaRps = median(runs['bare Koa']!.map((r) => r.rps));
  say('median of the rounds:');
  for (const [name, rs] of Object.entries(runs)) {
    const rps = median(rs.map((r) => r.rps));
    const p99 = median(rs.map((r) => r.p99));
    const errors = rs.reduce((n, r) => n + r.errors, 0);
    const serverUs = median(rs.map((r) => r.serverUs));
    const postgresUs = median(rs.map((r) => r.postgresUs));
    say(`  ${name.padEnd(22)} ${Math.round(rps).toString().padStart(6)} rps  p99 ${p99} ms  ${(rps / koaRps).toFixed(3)}x bare Koa  CPU/request: server ${serverUs} µs, postgres ${postgresUs} µs${errors ? `  (${errors} errors/non-2xx)` : ''}`);
  }
} finally {
  await stopService(api);
  await stopService(koa);
  await dropDatabase(dbName);
}
