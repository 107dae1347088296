/**
 * Starts the real service for one test file: a database of its own (cloned from the migrated
 * template), the API on a random port and a worker on task queues of its own, all against the
 * real PostgreSQL, Temporal and MinIO of the local stack.
 *
 *   const app = await startTestApp();
 *   const ws = await app.createWorkspace({ credits: 100 });
 *   const res = await app.http('GET', '/credits/balance', { apiKey: ws.apiKey });
 *   afterAll(() => app.close());
 *
 * `workerMode: 'process'` runs the worker as a child process that `killWorker()` SIGKILLs and
 * `startWorker()` starts again, for tests of crashes between activities.
 */
import { adminUrl } from './globalSetup.js';
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import { pino, type Logger } from 'pino';
import { ROOT_DIR, loadConfig, type Config } from '../domain/config.js';
import { startApiServer, type ApiServer } from '../api/server.js';
import { createWorkers, type WorkerSet } from '../worker/worker.js';
import { openStores, type Stores } from '../db/connect.js';
import { keyringOf } from '../domain/keyring.js';
import { createApiKey, createWorkspace, type NewWorkspace } from '../db/workspaces.js';
import type { KeyKind, Plan } from '../db/platform.js';
import type { AppDeps } from '../api/deps.js';
import { currentHistoryFile } from './replay/historyVersions.js';
import { withoutTenancy } from '../db/tenancy.js';
import { resealedForReplay } from './historyPayloads.js';

const FIXTURES = 'test fixtures';

export interface HttpResponse<T = any> {
  status: number;
  body: T;
  /** The body exactly as received (before any JSON parsing). */
  text: string;
  headers: Headers;
}

export interface TestApp {
  url: string;
  config: Config;
  deps: AppDeps;
  /**
   * A pool of the connecting (owning) role, for fixtures and assertions in SQL across workspaces and
   * the dataset import (DDL): not the API's pool, whose connections are bound by row-level security.
   */
  pool: pg.Pool;
  createWorkspace(opts?: { name?: string; plan?: Plan; credits?: number }): Promise<NewWorkspace>;
  createApiKey(workspaceId: string, kind: KeyKind): Promise<string>;
  http<T = any>(method: string, path: string, opts?: { apiKey?: string; body?: unknown; headers?: Record<string, string>; rawBody?: RequestInit['body'] }): Promise<HttpResponse<T>>;
  /** Polls GET /jobs/{jobId} until the job is no longer queued or running. */
  waitForJob(jobId: string, apiKey: string, timeoutMs?: number): Promise<any>;
  killWorker(): Promise<void>;
  startWorker(): Promise<void>;
  /** `workerMode: 'process'`: the worker child's pid and whether it is still running (crash tests). */
  workerProcess(): { pid: number | undefined; alive: boolean; exitCode: number | null; signal: NodeJS.Signals | null } | null;
  /** Another API process (compiled by tsx) on the same database, for tests across replicas. */
  startApiProcess(env?: Record<string, string>): Promise<{ url: string; pid: number; stop(): Promise<void> }>;
  /**
   * Saves a workflow's history for the replay tests, as `<name>.json` in the current version
   * folder (`test/replay/historyVersions.ts`) when it is not there yet. A recorded history is
   * frozen: `npm run record-histories` (RECORD_HISTORIES=1) refuses, rather than overwrite one.
   */
  recordHistory(workflowId: string, name: string): Promise<void>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Extra environment for the API and worker (provider URLs, limits …). */
  env?: Record<string, string>;
  workerMode?: 'inline' | 'process' | 'none';
  rateLimitPerMinute?: number;
  /** The API's logger (silent unless TEST_LOG_LEVEL says otherwise), e.g. to count its request log. */
  apiLog?: Logger;
  /** The inline worker's logger (silent unless TEST_LOG_LEVEL says otherwise), e.g. to read its lines. */
  workerLog?: Logger;
}

const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

const handedOut = new Set<number>();

/** Where the kernel's ephemeral ports start (outgoing connections take theirs from there up). */
function ephemeralPortsStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

/** Whether a server can listen on `port` right now. */
async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  const ok = await new Promise<boolean>((resolve) => server.once('error', () => resolve(false)).listen(port, '127.0.0.1', () => resolve(true)));
  if (ok) await new Promise((r) => server.close(r));
  return ok;
}

/**
 * A port nothing listens on right now, for a server started later (a stack's database, MinIO …).
 * Picked below the kernel's ephemeral range: a port from `listen(0)` is one the kernel also hands
 * to outgoing connections, and one did take it before the server started (the chaos stack's
 * MinIO: "port already in use").
 */
export async function freePort(): Promise<number> {
  const top = ephemeralPortsStart();
  const bottom = Math.min(10_000, top - 1_000);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = bottom + Math.floor(Math.random() * (top - bottom));
    // one not handed out before in this process: a stack picks several before starting any
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${bottom} and ${top}`);
}

/** A 400 `validation_failed` with exactly one detail, at `path`, its message matching `message` (`sent` is quoted on failure). */
export function expectOneValidationDetail(res: HttpResponse, path: string, message: RegExp, sent: unknown): void {
  const what = `${JSON.stringify(sent)} -> ${JSON.stringify(res.body)}`;
  expect(res.status, what).toBe(400);
  expect(res.body.error.code, what).toBe('validation_failed');
  expect(res.body.error.details, what).toHaveLength(1);
  expect(res.body.error.details[0].path, what).toBe(path);
  expect(res.body.error.details[0].message, what).toMatch(message);
}

/** A database of the caller's own, cloned from this run's migrated template: its name and URL. */
export async function cloneTestDatabase(label = ''): Promise<{ name: string; url: string }> {
  const runId = process.env.TEST_RUN_ID;
  const template = process.env.TEST_TEMPLATE_DB;
  if (!runId || !template) throw new Error('run tests through vitest (test/globalSetup.ts prepares the stack)');
  const base = loadConfig();
  const name = `t_${runId}_${label}${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl(base.databaseUrl, 'postgres') });
  await admin.connect();
  try {
    // Cloning a template needs it to be idle; concurrent clones of one template can collide, so retry.
    for (let i = 0; ; i++) {
      try {
        await admin.query(`create database ${name} template ${template}`);
        break;
      } catch (e) {
        if (i > 50) throw e;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await admin.end();
  }
  return { name, url: adminUrl(base.databaseUrl, name) };
}

export async function dropTestDatabase(name: string): Promise<void> {
  const a = new pg.Client({ connectionString: adminUrl(loadConfig().databaseUrl, 'postgres') });
  await a.connect();
  await a.query(`drop database if exists ${name} with (force)`).catch(() => {});
  await a.end();
}

/**
 * Workflows a test left running on its task queues (a publish due tomorrow, a job whose worker a
 * test killed) are terminated when its app closes: on a developer's dev server they would stay
 * "Running" in the Temporal UI for good, with no worker to ever poll their queue.
 */
async function terminateLeftovers(temporal: TestApp['deps']['temporal'], taskQueue: string): Promise<void> {
  const running = temporal.workflow.list({ query: `TaskQueue STARTS_WITH "${taskQueue}" AND ExecutionStatus = "Running"` });
  for await (const w of running) await temporal.workflow.getHandle(w.workflowId, w.runId).terminate('test app closed').catch(() => {});
}

export async function startTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const bundlePath = process.env.WORKFLOW_BUNDLE_PATH;
  if (!bundlePath) throw new Error('run tests through vitest (test/globalSetup.ts prepares the stack)');
  const db = await cloneTestDatabase();
  const dbName = db.name;

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    TEMPORAL_TASK_QUEUE: `test-${dbName}`,
    OUTBOUND_ALLOW_LIST: '127.0.0.1,::1',
    // Integrations may point their apiBaseUrl at the local fake networks.
    PROVIDER_BASE_URL_ALLOW_LIST: '127.0.0.1,::1',
    RATE_LIMIT_PER_MINUTE: String(opts.rateLimitPerMinute ?? 1_000_000),
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...opts.env,
  };
  const config = loadConfig(env);
  const ownerPool = new pg.Pool({ connectionString: config.databaseUrl, max: 4 });
  ownerPool.on('error', () => {}); // a connection the server drops fails its query, not the run
  const api: ApiServer = await startApiServer(config, { log: opts.apiLog ?? silent, port: 0 });
  config.publicBaseUrl = api.url;

  let inline: { set: WorkerSet; stores: Stores } | undefined;
  let child: ChildProcess | undefined;

  const startWorker = async () => {
    if (opts.workerMode === 'none') return;
    if (opts.workerMode === 'process') {
      // The worker itself is the child (tsx as a loader, not a launcher), so SIGKILL hits it.
      child = fork(join(ROOT_DIR, 'worker', 'main.ts'), [], { execArgv: ['--import', 'tsx'], env: { ...env, WORKFLOW_BUNDLE_PATH: bundlePath }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      await new Promise<void>((resolve, reject) => {
        child!.once('message', () => resolve());
        child!.once('exit', (code) => reject(new Error(`worker process exited with ${code}`)));
      });
      return;
    }
    const stores = await openStores(config);
    const set = await createWorkers({ config, log: opts.workerLog ?? silent, ...stores }, { workflowBundlePath: bundlePath });
    void set.run();
    inline = { set, stores };
  };
  const stopWorker = async () => {
    if (inline) {
      await inline.set.shutdown();
      await inline.stores.close();
      inline = undefined;
    }
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    child = undefined;
  };
  await startWorker();
  const apiProcesses = new Set<ChildProcess>();

  const http: TestApp['http'] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...(o.apiKey ? { 'x-api-key': o.apiKey } : {}), ...o.headers };
    let body: RequestInit['body'] = o.rawBody;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(api.url + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json')) parsed = text ? JSON.parse(text) : null;
    return { status: res.status, body: parsed as any, text, headers: res.headers };
  };

  return {
    url: api.url,
    config,
    deps: api.deps,
    pool: ownerPool,
    // Workspaces are made by the admin CLI in production (an owner connection); here through the API's pool.
    createWorkspace: (o = {}) => withoutTenancy(FIXTURES, () => createWorkspace(api.deps.orm.em, { name: o.name ?? 'Test workspace', plan: o.plan, credits: o.credits, keyring: keyringOf(config) })),
    createApiKey: (workspaceId, kind) => withoutTenancy(FIXTURES, () => createApiKey(api.deps.orm.em, workspaceId, kind)),
    http,
    async waitForJob(jobId, apiKey, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await http('GET', `/jobs/${jobId}`, { apiKey });
        if (res.status !== 200) throw new Error(`GET /jobs/${jobId} answered ${res.status}: ${JSON.stringify(res.body)}`);
        const s = res.body.data.jobStatus;
        if (s !== 'queued' && s !== 'running') return res.body.data;
        if (Date.now() > deadline) throw new Error(`job ${jobId} still ${s} after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    killWorker: stopWorker,
    async startApiProcess(extra = {}) {
      const port = await freePort();
      const proc = fork(join(ROOT_DIR, 'api', 'main.ts'), [], { execArgv: ['--import', 'tsx'], env: { ...env, ...extra, PORT: String(port) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      await new Promise<void>((resolve, reject) => {
        proc.once('message', () => resolve());
        proc.once('exit', (code) => reject(new Error(`API process exited with ${code}`)));
      });
      const url = `http://${config.host}:${port}`;
      apiProcesses.add(proc);
      const stop = async () => {
        apiProcesses.delete(proc);
        if (proc.exitCode !== null || proc.signalCode !== null) return;
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      };
      return { url, pid: proc.pid!, stop };
    },
    startWorker,
    workerProcess: () => (child ? { pid: child.pid, alive: child.exitCode === null && child.signalCode === null, exitCode: child.exitCode, signal: child.signalCode } : null),
    async recordHistory(workflowId, name) {
      const file = currentHistoryFile(name);
      if (existsSync(file)) {
        if (process.env.RECORD_HISTORIES !== '1') return;
        throw new Error(
          `${relative(ROOT_DIR, file)} is recorded and frozen: histories are never re-recorded. A workflow change that breaks it goes behind patched() or a new workflow type (docs/ARCHITECTURE.md, "Changing a workflow"); a new case gets a new name.`,
        );
      }
      // The CLI writes the canonical JSON form of a history (what replay and the Temporal UI read).
      const out = spawnSync(
        join(ROOT_DIR, '.tools', 'bin', 'temporal'),
        ['workflow', 'show', '--workflow-id', workflowId, '--output', 'json', '--address', config.temporal.address, '--namespace', config.temporal.namespace],
        { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      );
      if (out.status !== 0) throw new Error(`temporal workflow show failed: ${out.stderr}`);
      mkdirSync(dirname(file), { recursive: true });
      // Sealed under the development key, so every installation's replay test opens it.
      writeFileSync(file, await resealedForReplay(out.stdout, config), { flag: 'wx' }); // never over an existing file
    },
    async close() {
      for (const proc of apiProcesses) proc.kill('SIGKILL');
      await terminateLeftovers(api.deps.temporal, config.temporal.taskQueue);
      await stopWorker();
      await api.close();
      await ownerPool.end();
      await dropTestDatabase(dbName);
    },
  };
}
