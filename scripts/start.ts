/**
 * `npm start`: starts (or reuses) the stack, migrates, starts the API and the worker as child
 * processes, ensures a demo workspace, and prints where everything is. Ctrl-C stops API and
 * worker; the stack keeps running (`npm run stack -- stop` stops it) so the next start is warm.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROCESS_NODE_FLAGS, ROOT_DIR, loadConfig } from '../domain/config.js';
import { startStack } from './stack.js';
import { SEARCH_ATTRIBUTES } from '../domain/searchAttributes.js';
import { Connection } from '@temporalio/client';
import protoPackage from '@temporalio/proto';
import { openOrm, migrate } from '../db/orm.js';
import { createPool } from '../db/pool.js';
import { createWorkspace } from '../db/workspaces.js';

const t0 = performance.now();
const config = loadConfig();
await startStack();
const orm = await openOrm(config.databaseUrl);
await migrate(orm);
await orm.close(true);
await ensureSearchAttributes();

// The demo workspace's key is shown once at creation; keep it in the git-ignored data folder.
const demoFile = join(process.env.DATA_DIR ?? join(ROOT_DIR, '.data'), 'demo-workspace.json');
const pool = createPool(config.databaseUrl, 2);
let demo: { workspaceId: string; apiKey: string } | undefined;
if (existsSync(demoFile)) {
  const saved = JSON.parse(readFileSync(demoFile, 'utf8'));
  const r = await pool.query('select 1 from workspaces where id = $1', [saved.workspaceId]);
  if (r.rowCount) demo = saved;
}
if (!demo) {
  demo = await createWorkspace(pool, { name: 'Demo workspace', plan: 'enterprise', credits: 10_000 });
  mkdirSync(join(demoFile, '..'), { recursive: true });
  writeFileSync(demoFile, JSON.stringify(demo, null, 2));
}
await pool.end();

const NODE_FLAGS = [...PROCESS_NODE_FLAGS, '--import', 'tsx'];
const children: ChildProcess[] = [];
function spawnChild(entry: string): Promise<void> {
  const child = fork(join(ROOT_DIR, entry), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: NODE_FLAGS });
  children.push(child);
  child.once('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${entry} exited (${code ?? signal}); stopping`);
      void stop(1);
    }
  });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', () => reject(new Error(`${entry} did not start`)));
  });
}

let stopping = false;
async function stop(code = 0) {
  stopping = true;
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
  process.exit(code);
}
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());

await Promise.all([spawnChild('worker/main.ts'), spawnChild('api/main.ts')]);
const secs = ((performance.now() - t0) / 1000).toFixed(1);
console.log(`
Ready in ${secs}s
  API         ${config.publicBaseUrl}
  API docs    ${config.publicBaseUrl}/docs
  Temporal UI ${config.temporal.uiUrl}
  API key     ${demo.apiKey}   (demo workspace ${demo.workspaceId}, enterprise plan)

Try: curl -H 'x-api-key: ${demo.apiKey}' ${config.publicBaseUrl}/credits/balance
`);

/** The embedded dev server registers them at start; an external Temporal gets them here. */
async function ensureSearchAttributes() {
  if (!process.env.TEMPORAL_ADDRESS) return;
  const connection = await Connection.connect({ address: config.temporal.address });
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace: config.temporal.namespace });
    const missing = SEARCH_ATTRIBUTES.filter((a) => !(a in (existing.customAttributes ?? {})));
    if (missing.length) {
      await connection.operatorService.addSearchAttributes({
        namespace: config.temporal.namespace,
        searchAttributes: Object.fromEntries(missing.map((a) => [a, protoPackage.temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD])),
      });
    }
  } finally {
    await connection.close();
  }
}
