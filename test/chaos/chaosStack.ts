/**
 * A stack instance of the chaos tests' own (PostgreSQL, Temporal, MinIO under
 * `.test-data/chaos-<id>/`, on free ports), with the API and the worker as child processes the
 * way `npm start` runs them. Services are killed with SIGKILL and started again by the stack
 * script; the shared stack other test files use is never touched.
 *
 * PostgreSQL runs with the settings `npm start` gives it (scripts/stack.ts postgresSettings,
 * durable by default): an operator's `PG_SYNCHRONOUS_COMMIT` of the runner is not passed on.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { PROCESS_NODE_FLAGS, ROOT_DIR, loadConfig, type Config } from '../../domain/config.js';
import { servicePid, startStack, stopStack, type ServiceName } from '../../scripts/stack.js';
import { openDatabase, migrate, ormOptions, type MikroORM } from '../../db/orm.js';
import { freePort } from '../harness.js';

export interface AppProcess {
  name: 'api' | 'worker';
  child: ChildProcess;
  pid: number;
  /** Exits seen so far (none, if the process survived). */
  exits: { code: number | null; signal: string | null }[];
}

export interface ChaosStack {
  id: string;
  env: NodeJS.ProcessEnv;
  config: Config;
  apiUrl: string;
  /** A pool of the test's own, for assertions (it survives the database's restarts). */
  pool: pg.Pool;
  /** The ORM over that pool (workspaces are created through it). */
  orm: MikroORM;
  api: AppProcess;
  worker: AppProcess;
  /** SIGKILLs the service and waits until it is gone. */
  kill(service: ServiceName): Promise<number>;
  /** Starts the stack again (the killed service), retrying while the old one lets go. */
  restart(): Promise<void>;
  /** SIGKILLs the worker process and starts a new one, as `npm start` does when a child dies (`worker` is then the new one). */
  replaceWorker(): Promise<void>;
  /** Both app processes are the ones started first and still run. */
  appsAlive(): boolean;
  /** Tail of an app process's log (for failure messages). */
  logTail(name: 'api' | 'worker', lines?: number): string;
  http<T = any>(method: string, path: string, opts?: { apiKey?: string; body?: unknown; rawBody?: RequestInit['body'] }): Promise<{ status: number; body: T }>;
  close(): Promise<void>;
}


function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startChaosStack(extraEnv: Record<string, string> = {}): Promise<ChaosStack> {
  const id = randomBytes(4).toString('hex');
  const data = join(ROOT_DIR, '.test-data', `chaos-${id}`);
  mkdirSync(data, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env };
  // This instance's services are always the embedded ones, never an external one of the runner.
  for (const k of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_UI_URL', 'S3_ENDPOINT', 'PUBLIC_BASE_URL', 'PG_SYNCHRONOUS_COMMIT']) delete env[k];
  Object.assign(env, {
    DATA_DIR: data,
    PG_PORT: String(await freePort()),
    TEMPORAL_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    MINIO_PORT: String(await freePort()),
    MINIO_CONSOLE_PORT: String(await freePort()),
    PORT: String(await freePort()),
    OUTBOUND_ALLOW_LIST: '127.0.0.1,::1',
    PROVIDER_BASE_URL_ALLOW_LIST: '127.0.0.1,::1',
    RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
    ...extraEnv,
  });
  const config = loadConfig(env);
  try {
    return await startApps(id, data, env, config);
  } catch (e) {
    await stopStack(undefined, env).catch(() => {});
    rmSync(data, { recursive: true, force: true });
    throw e;
  }
}

async function startApps(id: string, data: string, env: NodeJS.ProcessEnv, config: Config): Promise<ChaosStack> {
  await startStack(env);
  const db = await openDatabase(config.databaseUrl, { max: 4 }, { migrations: { ...ormOptions(config.databaseUrl).migrations, silent: true } });
  await migrate(db.orm);
  const pool = db.pool;

  const logs = { api: join(data, 'logs', 'api.log'), worker: join(data, 'logs', 'worker.log') };
  const spawnApp = async (name: 'api' | 'worker'): Promise<AppProcess> => {
    const fd = openSync(logs[name], 'a');
    // As `npm start` runs them: the entry itself is the child (tsx as a loader), so its pid is the process's.
    const child = fork(join(ROOT_DIR, name, 'main.ts'), [], {
      execArgv: [...PROCESS_NODE_FLAGS, '--import', 'tsx'],
      env: { ...env, WORKFLOW_BUNDLE_PATH: process.env.WORKFLOW_BUNDLE_PATH ?? '' },
      stdio: ['ignore', fd, fd, 'ipc'],
    });
    closeSync(fd);
    const proc: AppProcess = { name, child, pid: child.pid!, exits: [] };
    child.on('exit', (code, signal) => proc.exits.push({ code, signal }));
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code, signal) => reject(new Error(`${name} exited at start (${code ?? signal})\n${tailOf(logs[name])}`)));
    });
    return proc;
  };
  const tailOf = (file: string, lines = 40) => {
    try {
      return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  };
  const [worker, api] = await Promise.all([spawnApp('worker'), spawnApp('api')]);
  const apiUrl = `http://127.0.0.1:${env.PORT}`;

  const stack: ChaosStack = {
    id,
    env,
    config,
    apiUrl,
    pool,
    orm: db.orm,
    api,
    worker,
    async kill(service) {
      const pid = servicePid(service, env);
      if (!pid) throw new Error(`${service} of chaos stack ${id} is not running`);
      process.kill(pid, 'SIGKILL');
      while (alive(pid)) await sleep(20);
      return pid;
    },
    async replaceWorker() {
      const old = stack.worker;
      process.kill(old.pid, 'SIGKILL');
      while (alive(old.pid)) await sleep(20);
      stack.worker = await spawnApp('worker');
    },
    async restart() {
      // A killed postmaster's backends end on their own once they notice; until then the new
      // server refuses the data folder, so the start is retried.
      const deadline = Date.now() + 60_000;
      for (;;) {
        try {
          await startStack(env);
          return;
        } catch (e) {
          if (Date.now() > deadline) throw e;
          await sleep(500);
        }
      }
    },
    appsAlive() {
      return [stack.api, stack.worker].every((p) => p.exits.length === 0 && p.child.exitCode === null && alive(p.pid));
    },
    logTail(name, lines) {
      return tailOf(logs[name], lines);
    },
    async http(method, path, o = {}) {
      const res = await fetch(apiUrl + path, {
        method,
        headers: { ...(o.apiKey ? { 'x-api-key': o.apiKey } : {}), ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: o.body === undefined ? o.rawBody : JSON.stringify(o.body),
      });
      const text = await res.text();
      let body: any = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        /* not JSON */
      }
      return { status: res.status, body };
    },
    async close() {
      for (const p of [stack.api, stack.worker]) {
        if (p.child.exitCode === null && p.child.signalCode === null) {
          const exited = new Promise((r) => p.child.once('exit', r));
          p.child.kill('SIGTERM');
          await Promise.race([exited, sleep(10_000)]);
          if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
        }
      }
      await db.close().catch(() => {});
      await stopStack(undefined, env);
      rmSync(data, { recursive: true, force: true });
    },
  };
  return stack;
}
