/** What every benchmark shares: a fresh migrated database of its own, percentiles, output. */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type autocannon from 'autocannon';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { v7 as uuidv7 } from 'uuid';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { PROCESS_NODE_FLAGS, ROOT_DIR, WORKER_NODE_FLAGS, loadConfig } from '../domain/config.js';
import { normalizeEmail, normalizeProfileUrl } from '../domain/identity.js';
import { openOrm, migrate } from '../db/orm.js';

// Benchmarks print their figures; the SDK's INFO lines (worker state changes) would bury them.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  /* already installed */
}

export const say = (m: string) => console.log(`[bench] ${m}`);

/** Nearest-rank percentile of an ascending array. */
export const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

/** Drops and recreates database `name` on the configured server, migrates it, returns its URL. */
export async function freshDatabase(name: string): Promise<string> {
  const base = loadConfig();
  const adminUrl = new URL(base.databaseUrl);
  adminUrl.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base.databaseUrl);
  url.pathname = `/${name}`;
  const orm = await openOrm(url.toString());
  await migrate(orm);
  await orm.close(true);
  return url.toString();
}

export async function dropDatabase(name: string): Promise<void> {
  const adminUrl = new URL(loadConfig().databaseUrl);
  adminUrl.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}

/**
 * CPU time (ms, user + system) used so far by the processes of this machine, grouped: the given
 * named pids, `postgres` (all its processes), `temporal`, and `other`. Subtract two readings to
 * see where a run's CPU went (a 2-core machine saturates long before the database is "slow").
 */
export function cpuByProcess(named: Record<string, number | undefined>): Record<string, number> {
  const byPid = new Map(Object.entries(named).map(([name, pid]) => [String(pid), name]));
  const out: Record<string, number> = {};
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(fields[11]) + Number(fields[12])) * (1000 / CLOCK_TICKS);
    const group = byPid.get(pid) ?? (command === 'postgres' || command === 'temporal' ? command : 'other');
    out[group] = (out[group] ?? 0) + ms;
  }
  return out;
}
const CLOCK_TICKS = 100; // USER_HZ on Linux

/**
 * CPU ms so far (user + system) of each PostgreSQL backend serving database `db` (its process
 * title names the database). A bench's database is its own, so these are its queries alone: on a
 * shared machine a steadier measure of the database's work than every postgres process's CPU.
 * Pools must keep their connections for the span measured (a backend that exits is not counted).
 */
export function databaseCpu(db: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(' ')[2] !== db) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(pid, (Number(fields[11]) + Number(fields[12])) * (1000 / CLOCK_TICKS));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

/** CPU ms the backends spent between two databaseCpu readings (backends new since `before` count from 0). */
export function databaseCpuSpent(before: Map<string, number>, after: Map<string, number>): number {
  let ms = 0;
  for (const [pid, v] of after) ms += v - (before.get(pid) ?? 0);
  return Math.round(ms);
}

/** `after - before` per group, rounded, groups below 50 ms left out. */
export function cpuSpent(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) >= 50) out[k] = Math.round(v - (before[k] ?? 0));
  return out;
}

// --- the generated import of the bulk-upsert benchmarks ------------------------------------------
/** The source field mapping of the generated rows. */
export const BULK_MAPPING = [
  ['First Name', 'contact.firstName'],
  ['Last Name', 'contact.lastName'],
  ['Email', 'contact.workEmail'],
  ['Profile', 'contact.pronet'],
  ['Title', 'contact.jobTitle'],
  ['Company', 'company.companyName'],
  ['Website', 'company.companyWebsite'],
  ['Industry', 'company.companyIndustry'],
].map(([sourceFieldName, targetFieldName]) => ({ sourceFieldName: sourceFieldName!, targetFieldName: targetFieldName! }));

const TITLES = ['VP Sales', 'CTO', 'Software Engineer', 'Account Executive', 'Head of Marketing'];
const INDUSTRIES = ['Software', 'Energy', 'Media', 'Retail', 'Finance'];

/** Row `i` of the generated import: distinct people, 5,000 companies, columns named as BULK_MAPPING says. */
export const bulkRow = (i: number) => ({
  'First Name': `First${i}`,
  'Last Name': `Last${i % 7919}`,
  Email: `person${i}@company${i % 5000}.example.com`,
  Profile: `https://www.pronet.com/in/person-${i.toString(36)}`,
  Title: TITLES[i % TITLES.length]!,
  Company: `Company ${i % 5000}`,
  Website: `https://company${i % 5000}.example.com`,
  Industry: INDUSTRIES[(i % 5000) % INDUSTRIES.length]!,
});

// --- API and worker processes -------------------------------------------------------------------
/**
 * API and worker run as production runs them, compiled JavaScript from `dist/` (`npm run build`),
 * unless `--tsx` is passed or there is no build; a build older than any source is refused (it
 * would measure old code).
 */
export function compiledBuild(forceTsx: boolean): boolean {
  if (forceTsx || !existsSync(join(ROOT_DIR, 'dist', 'api', 'main.js'))) return false;
  // tsc --incremental rewrites only outputs whose source changed, and its build info on every build.
  const buildInfo = join(ROOT_DIR, 'dist', '.tsbuildinfo');
  const built = existsSync(buildInfo) ? statSync(buildInfo).mtimeMs : 0;
  const stale = ['api', 'db', 'domain', 'activities', 'workflows', 'worker'].flatMap((dir) =>
    readdirSync(join(ROOT_DIR, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => [join(ROOT_DIR, dir, f), join(ROOT_DIR, 'dist', dir, f.replace(/\.ts$/, '.js'))] as const)
      .filter(([src, out]) => !existsSync(out) || statSync(src).mtimeMs > Math.max(built, statSync(out).mtimeMs)),
  );
  if (stale.length) throw new Error(`dist/ is older than ${stale[0]![0]}: run \`npm run build\` first (or pass --tsx)`);
  return true;
}

/** autocannon `requests` sending request after request to the next of `paths` (round robin): another contact each time, as a client walking a list reads. */
export function roundRobin(paths: string[]): autocannon.Request[] {
  let next = 0;
  return [{ setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length] }) }];
}

/** The node flags a bench gives the API or the worker: `BENCH_NODE_FLAGS="…"` when set, else the production ones (domain/config.ts). */
export function nodeFlagsOf(service: 'api' | 'worker'): string[] {
  return process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? (service === 'worker' ? WORKER_NODE_FLAGS : PROCESS_NODE_FLAGS);
}

/** Starts `api` or `worker` (or a script) as a child process, with `nodeFlagsOf` it unless `nodeFlags`; resolves once it says it is ready. */
export async function startService(entry: 'api' | 'worker' | string, env: NodeJS.ProcessEnv, opts: { compiled: boolean; nodeFlags?: string[]; stdout?: 'ignore' | 'inherit' }): Promise<ChildProcess> {
  const file = entry === 'api' || entry === 'worker' ? join(ROOT_DIR, ...(opts.compiled ? ['dist', entry, 'main.js'] : [entry, 'main.ts'])) : entry;
  const execArgv = [...(opts.nodeFlags ?? nodeFlagsOf(entry === 'worker' ? 'worker' : 'api')), ...(file.endsWith('.ts') ? ['--import', 'tsx'] : [])];
  // Bench workers run on throwaway task queues: no media retention Schedule may outlive the run.
  const child = fork(file, [], { execArgv, env: { MEDIA_RETENTION_SCHEDULE: 'off', OAUTH_REFRESH_SCHEDULE: 'off', ...env }, stdio: ['ignore', opts.stdout ?? 'ignore', 'inherit', 'ipc'] });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
  return child;
}

export async function stopService(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Peak resident set (VmHWM) of a process so far, in MB. */
export function peakRssMb(child: ChildProcess): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

/**
 * The physical anchor of the import benchmarks: plain COPY (text) of the contact columns of
 * generated rows 0..rows-1 into `contacts` of `workspaceId` (no identity resolution, no
 * companies). Returns the milliseconds it took.
 */
export async function plainCopyContacts(pool: pg.Pool, workspaceId: string, rows: number): Promise<number> {
  const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n');
  const t0 = performance.now();
  const client = await pool.connect();
  try {
    const stream = client.query(
      copyFrom(`copy contacts (id, workspace_id, first_name, last_name, full_name, title, pronet, pronet_key, emails, work_email, created_at, updated_at) from stdin`),
    );
    const now = new Date().toISOString();
    async function* lines() {
      for (let i = 0; i < rows; i += 5000) {
        let s = '';
        for (let j = i; j < Math.min(i + 5000, rows); j++) {
          const r = bulkRow(j);
          const email = normalizeEmail(r.Email)!;
          s += [uuidv7(), workspaceId, r['First Name'], r['Last Name'], `${r['First Name']} ${r['Last Name']}`, r.Title, r.Profile, normalizeProfileUrl(r.Profile)!, `{${email}}`, email, now, now].map(esc).join('\t') + '\n';
        }
        yield s;
      }
    }
    await pipeline(Readable.from(lines()), stream);
  } finally {
    client.release();
  }
  return performance.now() - t0;
}

/**
 * `people` enrichable people (`pronet.example/in/bench-<i>`, one valid email and a work phone each)
 * spread over `companies` companies, straight into the dataset tables, then `analyze`.
 */
export async function loadEnrichmentDataset(db: pg.Client | pg.Pool, people: number, companies: number): Promise<void> {
  await db.query(
    `insert into ds_companies (id, company_pronet_url, company_name, company_website, company_domain, industry, size_range, employee_count, hq_country)
     select gen_random_uuid(), 'pronet.example/company/bench-' || i, 'Bench Co ' || i, 'https://bench' || i || '.example', 'bench' || i || '.example',
            'Software', '51-200', 120, 'Germany'
       from generate_series(1, $1::int) i`,
    [companies],
  );
  await db.query(
    `insert into ds_people (id, member_pronet_url, member_full_name, member_first_name, member_last_name, member_job_title,
                            member_emails, member_phones, company_pronet_url, company_id)
     select gen_random_uuid(), 'pronet.example/in/bench-' || i, 'Person ' || i, 'Person', i::text, 'Engineer',
            jsonb_build_array(jsonb_build_object('email', 'p' || i || '@bench.example', 'status', 'valid')),
            jsonb_build_array(jsonb_build_object('number', '+49 30 ' || i, 'type', 'work')),
            c.company_pronet_url, c.id
       from generate_series(1, $1::int) i
       join ds_companies c on c.company_pronet_url = 'pronet.example/company/bench-' || (i % $2::int + 1)`,
    [people, companies],
  );
  await db.query('analyze');
}
