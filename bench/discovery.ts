/**
 * Discovery benchmark: generates 1,000,000 people and 100,000 companies (deterministic), imports
 * them with the dataset importer into a database of its own, then runs a fixed mix of 20
 * realistic searches through the HTTP API and prints import rows/s and per-query p50/p95.
 * Targets on the 2-core dev machine: import ≥ 20,000 rows/s, p95 ≤ 100 ms for every query.
 *
 *   npx tsx bench/discovery.ts [--people 1000000] [--companies 100000] [--runs 20] [--keep] [--reuse]
 *
 * `--keep` leaves the database `bench_discovery` in place; `--reuse` skips generation and import
 * when it already holds the dataset (for tuning the queries alone).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../domain/config.js';
import { importDataset } from '../db/datasetImport.js';
import { createPool } from '../db/pool.js';
import { migrate, openOrm, ormOptions } from '../db/orm.js';
import { createWorkspace } from '../db/workspaces.js';
import { startApiServer } from '../api/server.js';
import { generateFiles } from '../scripts/dataset.js';

const { values: args } = parseArgs({
  options: {
    people: { type: 'string', default: '1000000' },
    companies: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '20' },
    seed: { type: 'string', default: '42' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
  },
});
const PEOPLE = Number(args.people);
const COMPANIES = Number(args.companies);
const RUNS = Number(args.runs);
const SEED = Number(args.seed);
const DB = 'bench_discovery';

type Entity = 'contacts' | 'companies';
const c = (field: string, operator: string, value?: unknown) => ({ field, operator, ...(value === undefined ? {} : { value }) });
const and = (...conditions: unknown[]) => ({ operator: 'AND', conditions });
const or = (...conditions: unknown[]) => ({ operator: 'OR', conditions });
const not = (...conditions: unknown[]) => ({ operator: 'NOT', conditions });

/** The fixed mix: what prospecting users search for. */
const QUERIES: { name: string; entity: Entity; body: Record<string, unknown> }[] = [
  { name: 'title LIKE vp of sales', entity: 'contacts', body: { conditions: [c('dsContact.member_job_title', 'LIKE', '%vp of sales%')] } },
  { name: 'title LIKE + country', entity: 'contacts', body: { conditions: [c('dsContact.member_job_title', 'LIKE', '%data scien%'), c('dsContact.member_location_country', '==', 'Germany')] } },
  { name: 'seniority IN + country', entity: 'contacts', body: { conditions: [c('dsContact.member_seniority', 'IN', ['VP', 'CXO']), c('dsContact.member_location_country', '==', 'France')] } },
  { name: 'company industry IN + seniority', entity: 'contacts', body: { conditions: [c('dsCompany.industry', 'IN', ['Biotechnology', 'Legal Services']), c('dsContact.member_seniority', 'IN', ['Director', 'VP'])] } },
  { name: 'company size range + title', entity: 'contacts', body: { conditions: [c('dsCompany.size_range', 'IN', ['1001-5000', '5001-10000']), c('dsContact.member_job_title', 'LIKE', '%engineering manager%')] } },
  { name: 'country IN + experience range', entity: 'contacts', body: { conditions: [c('dsContact.member_location_country', 'IN', ['Spain', 'Ireland']), c('dsContact.member_years_experience', 'BETWEEN', [10, 15])] } },
  {
    name: 'nested OR groups (contacts)', entity: 'contacts',
    body: { groupedCondition: or(and(c('dsContact.member_job_title', 'LIKE', '%chief%'), c('dsContact.member_location_country', '==', 'United Kingdom')), and(c('dsContact.member_seniority', '==', 'Owner'), c('dsCompany.industry', '==', 'Renewable Energy'))) },
  },
  { name: 'skills + country', entity: 'contacts', body: { conditions: [c('dsContact.member_skills', 'IN', ['Kubernetes']), c('dsContact.member_location_country', '==', 'Canada')] } },
  { name: 'company technology + seniority', entity: 'contacts', body: { conditions: [c('dsCompany.technologies', 'IN', ['Databricks']), c('dsContact.member_seniority', '==', 'CXO')] } },
  { name: 'name LIKE + country', entity: 'contacts', body: { conditions: [c('dsContact.member_full_name', 'LIKE', 'priya pat%'), c('dsContact.member_location_country', '==', 'India')] } },
  { name: 'NOT group (contacts)', entity: 'contacts', body: { conditions: [c('dsContact.member_location_country', '==', 'Netherlands')], groupedCondition: not(c('dsContact.member_seniority', 'IN', ['Intern', 'Entry', 'Senior'])) } },
  { name: 'company headcount + title LIKE', entity: 'contacts', body: { conditions: [c('dsCompany.employee_count', '>=', 5000), c('dsContact.member_job_title', 'LIKE', '%recruit%')] } },
  { name: 'industry IN + size range', entity: 'companies', body: { conditions: [c('dsCompany.industry', 'IN', ['Software Development', 'Computer Games']), c('dsCompany.size_range', 'IN', ['201-500', '501-1000'])] } },
  { name: 'country + headcount BETWEEN', entity: 'companies', body: { conditions: [c('dsCompany.hq_country', '==', 'Germany'), c('dsCompany.employee_count', 'BETWEEN', [50, 500])] } },
  { name: 'technologies ALL + country', entity: 'companies', body: { conditions: [c('dsCompany.technologies', 'ALL', ['AWS', 'Salesforce']), c('dsCompany.hq_country', '==', 'Australia')] } },
  { name: 'company name LIKE', entity: 'companies', body: { conditions: [c('dsCompany.company_name', 'LIKE', '%quantum%')] } },
  { name: 'people-filtered: country + CXO', entity: 'companies', body: { conditions: [c('dsCompany.hq_country', '==', 'France'), c('dsContact.member_seniority', '==', 'CXO')] } },
  {
    name: 'people-filtered: same person', entity: 'companies',
    body: { conditions: [c('dsCompany.size_range', '==', '51-200'), c('dsCompany.industry', '==', 'Banking')], groupedCondition: and(c('dsContact.member_seniority', '==', 'VP'), c('dsContact.member_location_country', '==', 'United Kingdom')) },
  },
  {
    name: 'nested OR groups (companies)', entity: 'companies',
    body: { groupedCondition: or(and(c('dsCompany.industry', '==', 'Biotechnology'), c('dsCompany.size_range', 'IN', ['1001-5000', '5001-10000'])), and(c('dsCompany.hq_country', '==', 'Israel'), c('dsCompany.technologies', 'IN', ['Kubernetes']))) },
  },
  { name: 'people-filtered: title LIKE', entity: 'companies', body: { conditions: [c('dsCompany.industry', '==', 'Insurance'), c('dsContact.member_job_title', 'LIKE', '%chief data%')] } },
];

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
    const probe = createPool(dbUrl(DB), 1);
    const n = (await probe.query(`select (select count(*) from ds_people) + (select count(*) from ds_companies) as n`).catch(() => ({ rows: [{ n: -1 }] }))).rows[0].n;
    await probe.end();
    reuse = Number(n) === PEOPLE + COMPANIES;
  }
  if (!reuse) {
    await admin.query(`drop database if exists ${DB} with (force)`);
    await admin.query(`create database ${DB}`);
  }
  await admin.end();
  const config = loadConfig({ ...process.env, DATABASE_URL: dbUrl(DB), PORT: '0', RATE_LIMIT_PER_MINUTE: '100000000', LOG_LEVEL: 'silent' });
  const orm = await openOrm(config.databaseUrl, { logger: () => {}, migrations: { ...ormOptions(config.databaseUrl).migrations, snapshotOnMigrate: false } });
  await migrate(orm);
  await orm.close();

  if (!reuse) {
    const dir = join(config.rootDir, '.data', `dataset-${PEOPLE}-${COMPANIES}-${SEED}`);
    if (!existsSync(join(dir, 'people.jsonl'))) {
      const t = performance.now();
      await generateFiles({ people: PEOPLE, companies: COMPANIES, seed: SEED, out: dir });
      console.log(`generated ${PEOPLE} people and ${COMPANIES} companies in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    const pool = createPool(config.databaseUrl, 2);
    const report = await importDataset(pool, { companies: join(dir, 'companies.jsonl'), people: join(dir, 'people.jsonl') });
    await pool.end();
    for (const r of report.results) console.log(`import ${r.kind.padEnd(9)} ${r.loaded} rows in ${r.seconds.toFixed(1)} s = ${Math.round(r.loaded / r.seconds)} rows/s (of which index rebuild ${r.indexSeconds.toFixed(1)} s)`);
    console.log(`vacuum analyze   ${report.vacuumSeconds.toFixed(1)} s`);
    console.log(`import total     ${report.rowsLoaded} rows in ${report.seconds.toFixed(1)} s = ${Math.round(report.rowsLoaded / report.seconds)} rows/s (incl. index builds and vacuum analyze)`);
  } else console.log(`reusing ${DB} (${PEOPLE} people, ${COMPANIES} companies)`);

  const api = await startApiServer(config, { log: pino({ level: 'silent' }), port: 0 });
  try {
    const ws = await createWorkspace(api.deps.pool, { name: 'bench', credits: 1_000_000_000 });
    const call = async (q: (typeof QUERIES)[number]) => {
      const t = performance.now();
      const res = await fetch(`${api.url}/discovery-search/find-${q.entity}-v2`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': ws.apiKey },
        body: JSON.stringify({ ...q.body, limit: 25 }),
      });
      const body = (await res.json()) as { data: unknown[]; meta: { totalRecords: number } };
      const ms = performance.now() - t;
      if (res.status !== 200) throw new Error(`${q.name}: ${res.status} ${JSON.stringify(body)}`);
      return { ms, total: body.meta.totalRecords, rows: body.data.length };
    };
    // warm-up: two passes over the mix
    for (let i = 0; i < 2; i++) for (const q of QUERIES) await call(q);
    const lat = new Map<string, number[]>(QUERIES.map((q) => [q.name, []]));
    const totals = new Map<string, number>();
    // interleaved runs, so no query profits from running right after itself
    for (let r = 0; r < RUNS; r++) {
      for (const q of QUERIES) {
        const x = await call(q);
        lat.get(q.name)!.push(x.ms);
        totals.set(q.name, x.total);
      }
    }
    console.log(`\n${'query'.padEnd(36)} ${'entity'.padEnd(9)} ${'total'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)}`);
    let worst = 0;
    for (const q of QUERIES) {
      const xs = lat.get(q.name)!;
      const p95 = pct(xs, 95);
      worst = Math.max(worst, p95);
      console.log(`${q.name.padEnd(36)} ${q.entity.padEnd(9)} ${String(totals.get(q.name)).padStart(8)} ${pct(xs, 50).toFixed(1).padStart(8)} ${p95.toFixed(1).padStart(8)}${p95 > 100 ? '  > target' : ''}`);
    }
    console.log(`\n${QUERIES.length} queries × ${RUNS} runs; worst p95 ${worst.toFixed(1)} ms (target ≤ 100 ms)`);
  } finally {
    await api.close();
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
