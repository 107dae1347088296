/**
 * Runs once per `vitest` run: starts (or reuses) the real stack, bundles the workflow code once
 * for every worker the tests start, and builds a migrated template database that each test file
 * clones into a database of its own (so files run in parallel without seeing each other).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ROOT_DIR, loadConfig } from '../domain/config.js';
import { startStack } from '../scripts/stack.js';
import { openOrm, migrate } from '../db/orm.js';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from '../worker/worker.js';
import { FAILURE_CONVERTER_PATH } from '../domain/payloadCodec.js';

export function adminUrl(databaseUrl: string, db = 'postgres'): string {
  const u = new URL(databaseUrl);
  u.pathname = `/${db}`;
  return u.toString();
}

export default async function setup() {
  await startStack();
  const config = loadConfig();
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const template = `tpl_${runId}`;
  const admin = new pg.Client({ connectionString: adminUrl(config.databaseUrl) });
  await admin.connect();
  await admin.query(`create database ${template}`);
  const orm = await openOrm(adminUrl(config.databaseUrl, template));
  await migrate(orm);
  await orm.close(true);

  const dir = join(ROOT_DIR, '.test-data');
  mkdirSync(dir, { recursive: true });
  const bundlePath = join(dir, `workflow-bundle-${runId}.js`);
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES, failureConverterPath: FAILURE_CONVERTER_PATH, logger: quietLogger });
  writeFileSync(bundlePath, code);

  process.env.TEST_RUN_ID = runId;
  process.env.TEST_TEMPLATE_DB = template;
  process.env.WORKFLOW_BUNDLE_PATH = bundlePath;
  // Test workers run on throwaway task queues: no retention Schedule may outlive the run and fire
  // into them (test/integration/media-retention.test.ts creates its own and deletes it).
  process.env.MEDIA_RETENTION_SCHEDULE = 'off';
  process.env.OAUTH_REFRESH_SCHEDULE = 'off';
  process.env.RETENTION_SCHEDULE = 'off';

  return async () => {
    // Drop what this run created; files that crashed may have left their databases behind.
    const dbs = await admin.query<{ datname: string }>(`select datname from pg_database where datname like $1 or datname = $2`, [`t_${runId}_%`, template]);
    for (const { datname } of dbs.rows) {
      await admin.query(`drop database if exists ${datname} with (force)`).catch(() => {});
    }
    await admin.end();
  };
}

const quietLogger = {
  trace() {}, debug() {}, info() {},
  warn(m: string, meta?: unknown) { console.warn(m, meta ?? ''); },
  error(m: string, meta?: unknown) { console.error(m, meta ?? ''); },
  log() {},
};
