/** What every benchmark shares: a fresh migrated database of its own, percentiles, output. */
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { loadConfig } from '../domain/config.js';
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
