/**
 * The README walkthrough, run exactly as written: API and worker as child processes started from
 * the compiled output (`npm run build`, run here so `dist/` is never stale; `node dist/api/main.js`
 * and `node dist/worker/main.js` as the image runs them), with the defaults a newcomer has (no
 * allow-lists), against the real stack and a database of their own prepared by `npm start`'s
 * first-start code (migrations, demo dataset, demo workspace). Every `sh` block runs in bash with
 * only `$API`, `$API_KEY` and the ids kept from earlier answers set; every answer must match the
 * README's (test/walkthrough.ts).
 */
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROCESS_NODE_FLAGS, ROOT_DIR, loadConfig } from '../../domain/config.js';
import { DEMO_DATASET } from '../../db/demoDataset.js';
import { describeDataset, prepareDatabase, type FirstStart } from '../../scripts/firstStart.js';
import { cloneTestDatabase, dropTestDatabase, freePort } from '../harness.js';
import { buildOnce } from '../build.js';
import { matchAnswer, namesUsed, parseAnswer, readWalkthrough } from '../walkthrough.js';

const run = promisify(execFile);
const README = readFileSync(join(ROOT_DIR, 'README.md'), 'utf8');
const REPEAT_FOR_MS = 60_000;

let dbName: string;
let dataDir: string;
let env: NodeJS.ProcessEnv;
let first: FirstStart;
let apiUrl: string;
const children: { name: string; child: ChildProcess; output: string[] }[] = [];

/** Starts a compiled entry point with the flags scripts/start.ts gives it; waits for its 'ready' message. */
async function startChild(name: string, entry: string): Promise<void> {
  const child = fork(join(ROOT_DIR, 'dist', entry), [], { env, execArgv: PROCESS_NODE_FLAGS, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const output: string[] = [];
  const keep = (b: Buffer) => {
    output.push(b.toString());
    if (output.length > 200) output.shift();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  children.push({ name, child, output });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code, signal) => reject(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${output.join('')}`)));
  });
}

beforeAll(async () => {
  const build = buildOnce();
  const db = await cloneTestDatabase('walk_');
  dbName = db.name;

  dataDir = mkdtempSync(join(tmpdir(), 'walkthrough-'));
  const port = await freePort();
  // A newcomer's environment: the defaults (no allow-lists, DEMO_DATASET unset), a database and
  // task queue of this test's own; the compiled worker loads the bundle the build wrote.
  const stack = loadConfig();
  const { OUTBOUND_ALLOW_LIST, PROVIDER_BASE_URL_ALLOW_LIST, DEMO_DATASET, PUBLIC_BASE_URL, WORKFLOW_BUNDLE_PATH, ...inherited } = process.env;
  env = {
    ...inherited,
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    // The running stack's object store: its password is in the stack's own data folder (secrets.json), not in this one.
    S3_ACCESS_KEY: stack.s3.accessKey,
    S3_SECRET_KEY: stack.s3.secretKey,
    HOST: '127.0.0.1',
    PORT: String(port),
    TEMPORAL_TASK_QUEUE: `test-${dbName}`,
    LOG_LEVEL: 'warn',
  };
  first = await prepareDatabase(loadConfig(env), join(dataDir, 'demo-workspace.json'));
  await build;
  await Promise.all([startChild('worker', 'worker/main.js'), startChild('api', 'api/main.js')]);
  apiUrl = `http://127.0.0.1:${port}`;
}, 300_000);

afterAll(async () => {
  await Promise.all(
    children.map(({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      return exited;
    }),
  );
  // The unscheduled post's batch workflow sleeps until its (far) scheduledTime: end what is left.
  if (env) {
    const config = loadConfig(env);
    const { namespace } = config.temporal;
    // The raw service calls: listing through a Client would decode memos, which the codec encrypts.
    const connection = await Connection.connect({ address: config.temporal.address });
    const running = await connection.workflowService.listWorkflowExecutions({ namespace, query: `TaskQueue = '${config.temporal.taskQueue}' AND ExecutionStatus = 'Running'` });
    for (const w of running.executions) {
      await connection.workflowService.terminateWorkflowExecution({ namespace, workflowExecution: { workflowId: w.execution?.workflowId }, reason: 'test over' }).catch(() => undefined);
    }
    await connection.close();
  }
  if (dbName) await dropTestDatabase(dbName);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('README walkthrough', () => {
  it('first start loaded the demo dataset the README announces, once', async () => {
    expect(first.dataset).not.toBe('off');
    const line = describeDataset(first.dataset)!;
    expect(line).toMatch(/^Demo dataset loaded: /);
    // The README shows the banner line up to its timing.
    expect(README).toContain(line.slice(0, line.indexOf(' in ')));
    expect(README).toContain(`${DEMO_DATASET.companies} companies, ${DEMO_DATASET.people.toLocaleString('en-US')} people`);
    const again = await prepareDatabase(loadConfig(env), join(dataDir, 'demo-workspace.json'));
    expect(again.dataset).toEqual({ loaded: false, reason: 'dataset_not_empty' });
    expect(again.demo).toEqual(first.demo);
    expect((await prepareDatabase(loadConfig({ ...env, DEMO_DATASET: 'off' }), join(dataDir, 'demo-workspace.json'))).dataset).toBe('off');
    expect(loadConfig({ NODE_ENV: 'production' }).demoDataset).toBe(false);
    expect(() => loadConfig({ DEMO_DATASET: 'maybe' })).toThrow(/DEMO_DATASET must be one of/);
  });

  it('every command answers what the README shows', { timeout: 300_000 }, async () => {
    const steps = readWalkthrough(README);
    expect(steps.length).toBeGreaterThanOrEqual(10);
    const kept: Record<string, string> = {};
    for (const step of steps) {
      const pattern = parseAnswer(step.answer);
      const used = namesUsed(step.command);
      const fixed = Object.fromEntries(Object.entries(kept).filter(([k]) => used.has(k)));
      const deadline = Date.now() + (step.repeat ? REPEAT_FOR_MS : 0);
      for (;;) {
        const shell = { PATH: process.env.PATH, HOME: process.env.HOME, API: apiUrl, API_KEY: first.demo.apiKey, ...kept };
        const { stdout } = await run('bash', ['-c', step.command], { env: shell, timeout: 30_000 });
        let problem: string;
        try {
          Object.assign(kept, matchAnswer(pattern, JSON.parse(stdout), fixed));
          break;
        } catch (e) {
          problem = (e as Error).message;
        }
        if (Date.now() >= deadline) {
          throw new Error(`README line ${step.line}: ${step.command}\nanswered ${stdout}\nwhich differs from the README ${problem}`);
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    expect(Object.keys(kept).sort()).toEqual(['JOB_ID', 'LISTENING_SOURCE_ID', 'POST_ID', 'PROVIDER_ID', 'SEGMENT_ID', 'SOURCE_ID']);
  });
});
