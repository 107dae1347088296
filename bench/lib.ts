/** What every benchmark shares: a fresh migrated database of its own, percentiles, output. */
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
