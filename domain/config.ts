/**
 * One place that reads the environment. Every process (API, worker, scripts, tests) builds its
 * configuration here, so a variable means the same thing everywhere.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

export interface Config {
  /** Root of the project checkout (tools and data folders live below it). */
  rootDir: string;
  port: number;
  host: string;
  /** Port of the worker's `GET /healthz` probe (0: none); it listens on `host`. */
  workerHealthPort: number;
  /** Public base URL used to build `jobStatusEndpoint` and docs links. */
  publicBaseUrl: string;
  databaseUrl: string;
  temporal: { address: string; namespace: string; taskQueue: string; uiUrl: string };
  /**
   * `publicEndpoint`: the object store as clients reach it, used only to presign `readUrl`s (default: `endpoint`).
   * `pathStyle`: `https://host/bucket/key` (MinIO, most S3-compatible servers) or `https://bucket.host/key` (AWS S3's virtual hosts).
   * Credentials: `S3_ACCESS_KEY`/`S3_SECRET_KEY`, else the AWS SDK's `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/`AWS_SESSION_TOKEN`.
   */
  s3: {
    endpoint: string; publicEndpoint: string; accessKey: string; secretKey: string; sessionToken?: string; bucket: string; region: string; pathStyle: boolean;
    /** A request to the object store fails after this long without a byte either way (`S3_REQUEST_TIMEOUT_MS`, 10 s): a stalled store cannot hang /readyz or uploads. */
    requestTimeoutMs: number;
  };
  /** Connections at most in each process's one PostgreSQL pool (docs/DEPLOY.md "Connection arithmetic"). */
  dbPoolMax: { api: number; worker: number };
  /**
   * On SIGTERM the API first fails readiness and keeps serving for this long (`SHUTDOWN_DELAY_MS`,
   * 0 by default; the Helm chart sets it), so a load balancer stops sending it traffic before it
   * refuses new connections; then it drains.
   */
  shutdownDelayMs: number;
  /** Secret for HMAC pagination tokens and other server-side signatures. */
  serverSecret: string;
  /** Current key of the keyring (`domain/keyring.ts`): 64 hex characters, or any string (stretched). */
  encryptionKey: string;
  /** Earlier keys, kept to decrypt what they encrypted until `secrets:reencrypt` ran. */
  previousEncryptionKeys: string[];
  rateLimitPerMinute: number;
  /**
   * How often each API process announces itself (`api_replicas`) and counts the others; a replica
   * not seen for 3 heartbeats no longer counts. The per-key rate limit is shared by those counted.
   */
  apiReplicaHeartbeatMs: number;
  /**
   * Whether the worker creates (or updates) the Temporal Schedule `oauth-token-refresh-<taskQueue>`
   * that refreshes OAuth tokens ahead of expiry every 10 minutes (`OAUTH_REFRESH_SCHEDULE`, on by
   * default; tests turn it off).
   */
  tokenRefreshSchedule: boolean;
  /** Time to live of a new session key (`key:create --kind session`); 24 h unless set. */
  sessionKeyTtlSeconds: number;
  /** Hosts/CIDRs outbound requests may reach although private (tests, operators). */
  outboundAllowList: string[];
  logLevel: string;
  /** Level of the Temporal SDK's own log lines (worker lifecycle, bundler, Core); workflow and activity lines follow `logLevel`. */
  temporalLogLevel: 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /**
   * Operator endpoints, each on a port of its own (never the API's port; unset: not served):
   * Prometheus `GET /metrics` (optional bearer token), and Temporal's remote payload codec
   * (`POST …/encode`, `…/decode`; API process only; bearer token required).
   */
  metrics: { port: number | null; host: string; token: string };
  codec: { port: number | null; host: string; authToken: string; corsOrigins: string[] };
  bodyLimitBytes: number;
  /**
   * Server-side `statement_timeout` (ms) of each process's database pools (0: none). The API's
   * is short (a request never waits long on one statement); the worker's allows bulk statements
   * (a 10,000-row ingest chunk, a discovery export) but still ends one that hangs.
   */
  statementTimeoutMs: { api: number; worker: number };
  /**
   * Whether `npm start` loads the demo dataset into empty `ds_*` tables (db/demoDataset.ts):
   * `DEMO_DATASET`, on by default, off by default when `NODE_ENV=production`.
   */
  demoDataset: boolean;
  /**
   * v2 discovery searches (docs/DISCOVERY.md "Totals"): matches counted exactly up to
   * `exactCountLimit`; above it `meta.totalRecords` is an estimate, flagged by
   * `meta.totalRecordsEstimated`.
   */
  discovery: DiscoveryConfig;
  /**
   * Media (docs/social-core.md "Media"): `requestDeadlineMs` (`MEDIA_REQUEST_DEADLINE_MS`,
   * default 90 s) is how long an import or assembly request waits for its workflow before it
   * answers 504 `media_deadline_exceeded`; `retentionHours` (`MEDIA_RETENTION_HOURS`, default
   * 168 = 7 days) is the age after which chunks never assembled and uploads no post references
   * are removed; `retentionSchedule` (`MEDIA_RETENTION_SCHEDULE`, on by default) makes the
   * worker create (or update) the hourly Temporal Schedule of that sweep when it starts.
   */
  media: { requestDeadlineMs: number; retentionHours: number; retentionSchedule: boolean };
  /**
   * Retention of personal data (docs/PRIVACY.md "Retention"), in days: soft-deleted contacts
   * (`RETENTION_DELETED_CONTACT_DAYS`, default 30), the per-row results of finished bulk
   * enrichment jobs (`RETENTION_JOB_RESULT_DAYS`, default 30), webhook delivery records
   * (`RETENTION_WEBHOOK_DELIVERY_DAYS`, default 30). `schedule` (`RETENTION_SCHEDULE`, on by
   * default) makes the worker create (or update) the daily Temporal Schedule of the purge.
   */
  retention: { deletedContactDays: number; jobResultDays: number; webhookDeliveryDays: number; accessExportDays: number; schedule: boolean };
  /** The environment this configuration was read from; modules read their own settings here. */
  env: NodeJS.ProcessEnv;
}

function int(value: string | undefined, fallback: number): number {
  const n = value === undefined || value === '' ? NaN : Number(value);
  return Number.isFinite(n) ? n : fallback;
}

/** A boolean setting: `true`/`1`/`on`/`yes` or `false`/`0`/`off`/`no`; anything else is refused by name. */
function bool(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'on', 'yes'].includes(v)) return true;
  if (['false', '0', 'off', 'no'].includes(v)) return false;
  throw new Error(`${name} must be one of true, false, 1, 0, on, off, yes, no (got ${JSON.stringify(value)})`);
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Values earlier versions used as fallbacks, published in the source: never used any more (an
 * installation generates its own, `installationSecrets`), refused in SERVER_SECRET and
 * ENCRYPTION_KEY in every environment (`loadConfig`), and in production with more checks.
 */
export const DEV_SECRETS = { SERVER_SECRET: 'dev-server-secret-change-me', ENCRYPTION_KEY: 'dev-encryption-key-change-me' } as const;
/** Shortest production secret: 32 characters (`openssl rand -hex 32` gives 64). */
export const MIN_SECRET_LENGTH = 32;
// Earlier compose files and common placeholders; compared lower-cased.
const KNOWN_DEV_SECRETS = new Set<string>([...Object.values(DEV_SECRETS), 'change-me', 'changeme', 'secret', 'password', 'dev', 'test']);

/**
 * With `NODE_ENV=production`, why these secrets must not be used, one message per variable naming
 * it (empty: fine, and always empty outside production): missing, a known development value, or
 * shorter than 32 characters; and the two must differ.
 */
export function productionSecretProblems(env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.NODE_ENV !== 'production') return [];
  const problems: string[] = [];
  for (const name of ['SERVER_SECRET', 'ENCRYPTION_KEY'] as const) {
    const value = env[name];
    if (!value) problems.push(`${name} is not set`);
    else if (KNOWN_DEV_SECRETS.has(value.trim().toLowerCase()) || /change-?me/i.test(value)) problems.push(`${name} is a known development value`);
    else if (value.length < MIN_SECRET_LENGTH) problems.push(`${name} is too short (${value.length} characters; at least ${MIN_SECRET_LENGTH})`);
  }
  if (!problems.length && env.SERVER_SECRET === env.ENCRYPTION_KEY) problems.push('ENCRYPTION_KEY must differ from SERVER_SECRET');
  return problems;
}

/**
 * Secrets of one installation outside production, generated on its first start and kept in
 * `<DATA_DIR>/secrets.json` (mode 0600, owner only): each 32 random bytes, hex. Every process of
 * the installation (stack, API, worker, admin CLI, tests) reads the same file. An installation
 * from before this file (its PostgreSQL data folder exists) sealed its stored secrets and Temporal
 * payloads with the published development key: that key is kept as a previous key (decrypt only)
 * until `npm run admin -- secrets:reencrypt` has moved them (docs/ARCHITECTURE.md "Secrets").
 */
export interface InstallationSecrets {
  serverSecret: string;
  encryptionKey: string;
  previousEncryptionKeys: string[];
  postgresPassword: string;
  minioPassword: string;
}

export const SECRETS_FILE = 'secrets.json';

/** The data folder of this installation (`DATA_DIR`, default `.data/` in the checkout). */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.DATA_DIR ?? join(ROOT_DIR, '.data');
}

const randomSecret = () => randomBytes(32).toString('hex');

export function installationSecrets(dir: string): InstallationSecrets {
  const file = join(dir, SECRETS_FILE);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const upgraded = existsSync(join(dir, 'postgres', 'PG_VERSION'));
    const created: InstallationSecrets = {
      serverSecret: randomSecret(),
      encryptionKey: randomSecret(),
      previousEncryptionKeys: upgraded ? [DEV_SECRETS.ENCRYPTION_KEY] : [],
      postgresPassword: randomSecret(),
      minioPassword: randomSecret(),
    };
    // Written aside then linked in place: processes starting together all read one complete file.
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, `${JSON.stringify(created, null, 2)}\n`, { mode: 0o600 });
    try {
      linkSync(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const read = JSON.parse(readFileSync(file, 'utf8')) as Partial<InstallationSecrets>;
  for (const k of ['serverSecret', 'encryptionKey', 'postgresPassword', 'minioPassword'] as const) {
    if (typeof read[k] !== 'string' || read[k]!.length < MIN_SECRET_LENGTH) throw new Error(`${file}: ${k} is missing or shorter than ${MIN_SECRET_LENGTH} characters`);
  }
  return { ...(read as InstallationSecrets), previousEncryptionKeys: read.previousEncryptionKeys ?? [] };
}

/** A published development value (any environment): refused by name. */
function refusePublishedSecrets(env: NodeJS.ProcessEnv): void {
  for (const name of ['SERVER_SECRET', 'ENCRYPTION_KEY'] as const) {
    const value = env[name];
    if (value && (KNOWN_DEV_SECRETS.has(value.trim().toLowerCase()) || /change-?me/i.test(value))) {
      throw new Error(`${name} is a known development value, published in the source: unset it (a random one is generated in the data folder) or set a random value (openssl rand -hex 32)`);
    }
  }
}

/** Called first by every process entry point (API, worker, admin CLI): ends the process on unsafe production secrets. */
export function refuseUnsafeProductionSecrets(env: NodeJS.ProcessEnv = process.env): void {
  const problems = productionSecretProblems(env);
  if (!problems.length) return;
  for (const p of problems) process.stderr.write(`refusing to start with NODE_ENV=production: ${p}; set a random value of at least ${MIN_SECRET_LENGTH} characters (openssl rand -hex 32)\n`);
  process.exit(1);
}

/** The port `env[name]` names, or null when it is unset or empty (`0`: any free port). */
function optionalPort(env: NodeJS.ProcessEnv, name: string): number | null {
  const value = env[name];
  if (value === undefined || value.trim() === '') return null;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${name} "${value}" is not a port number (0-65535)`);
  return n;
}

const TEMPORAL_LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;

/** The Temporal SDK's log levels; anything else is refused by name (the SDK would refuse it later, less clearly). */
function temporalLogLevel(value: string | undefined): (typeof TEMPORAL_LOG_LEVELS)[number] {
  if (value === undefined || value.trim() === '') return 'WARN';
  const v = value.trim().toUpperCase();
  if (!(TEMPORAL_LOG_LEVELS as readonly string[]).includes(v)) throw new Error(`TEMPORAL_LOG_LEVEL must be one of ${TEMPORAL_LOG_LEVELS.join(', ')} (got ${JSON.stringify(value)})`);
  return v as (typeof TEMPORAL_LOG_LEVELS)[number];
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    throw new Error(`TEMPORAL_UI_URL "${url}" is not a URL`);
  }
}

/** `dist/` when running the compiled output (`npm run build`); the checkout or image root holds `config/`, `.data/`, `.tools/`. */
const CODE_DIR = resolve(import.meta.dirname, '..');
export const ROOT_DIR = basename(CODE_DIR) === 'dist' ? dirname(CODE_DIR) : CODE_DIR;

/** The API's and worker's Node flags, as the running Node supports them (infra/nodeFlags.ts). */
export { PROCESS_NODE_FLAGS, WORKER_NODE_FLAGS } from '../infra/nodeFlags.js';

/** Ports and names of the embedded services when the environment names no external one (passwords: `installationSecrets`). */
export const EMBEDDED = {
  postgresPort: 54329,
  postgresUser: 'app',
  postgresDb: 'app',
  temporalPort: 7233,
  temporalUiPort: 8233,
  minioPort: 9000,
  minioConsolePort: 9001,
  minioUser: 'minioadmin',
} as const;

/** The embedded services' passwords of earlier versions (published): replaced on the first start of this one (scripts/stack.ts). */
export const LEGACY_EMBEDDED_PASSWORDS = { postgres: 'app', minio: 'minioadmin-secret' } as const;

/** Ports of the embedded services, each overridable so a second stack can run beside the first. */
export function stackPorts(env: NodeJS.ProcessEnv = process.env) {
  const e = EMBEDDED;
  return {
    postgres: int(env.PG_PORT, e.postgresPort),
    temporal: int(env.TEMPORAL_PORT, e.temporalPort),
    temporalUi: int(env.TEMPORAL_UI_PORT, e.temporalUiPort),
    minio: int(env.MINIO_PORT, e.minioPort),
    minioConsole: int(env.MINIO_CONSOLE_PORT, e.minioConsolePort),
    /** The embedded OpenSearch's HTTP port (started only when DISCOVERY_ENGINE=opensearch). */
    opensearch: int(env.OPENSEARCH_PORT, 9200),
  };
}

/**
 * The v2 discovery search's engine (docs/DISCOVERY.md "Engines"): `DISCOVERY_ENGINE=postgres`
 * (default) answers from the ds_* tables; `opensearch` from the OpenSearch indexes at
 * `OPENSEARCH_URL` (default: the embedded node on OPENSEARCH_PORT), whose aliases are named
 * `<OPENSEARCH_INDEX_PREFIX>-people` / `-companies`.
 */
export interface DiscoveryConfig {
  exactCountLimit: number;
  engine: 'postgres' | 'opensearch';
  /** One node's URL, or several separated by commas (a cluster's nodes). */
  opensearchUrl: string;
  indexPrefix: string;
}

/**
 * OPENSEARCH_URL as the client's node list: one URL, or several separated by commas (the nodes of
 * a cluster: a request that cannot reach one is sent to another), each without its trailing slash.
 */
function openSearchNodes(value: string): string {
  const urls = value.split(',').map((u) => u.trim().replace(/\/$/, '')).filter(Boolean);
  for (const u of urls) {
    if (!URL.canParse(u) || !/^https?:$/.test(new URL(u).protocol)) throw new Error(`OPENSEARCH_URL must be http(s) URLs separated by commas; got ${JSON.stringify(u)}`);
  }
  return urls.join(',');
}

export function discoveryConfig(env: NodeJS.ProcessEnv, opensearchPort = stackPorts(env).opensearch): DiscoveryConfig {
  const engine = (env.DISCOVERY_ENGINE || 'postgres').trim().toLowerCase();
  if (engine !== 'postgres' && engine !== 'opensearch') throw new Error(`DISCOVERY_ENGINE must be postgres (the default) or opensearch; got ${JSON.stringify(env.DISCOVERY_ENGINE)}`);
  // the shape of the indexes a re-index builds (db/opensearchIndex.ts reads them): a typo fails here, not at index creation
  for (const [key, min] of [['OPENSEARCH_SHARDS', 1], ['OPENSEARCH_REPLICAS', 0]] as const) {
    const v = env[key];
    if (v !== undefined && v !== '' && !(/^\d+$/.test(v.trim()) && Number(v) >= min)) throw new Error(`${key} must be a whole number ≥ ${min}; got ${JSON.stringify(v)}`);
  }
  const prefix = env.OPENSEARCH_INDEX_PREFIX ?? 'discovery';
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(prefix)) throw new Error(`OPENSEARCH_INDEX_PREFIX must be lowercase letters, digits, - and _; got ${JSON.stringify(prefix)}`);
  return {
    exactCountLimit: int(env.DISCOVERY_EXACT_COUNT_LIMIT, 10_000),
    engine,
    opensearchUrl: openSearchNodes(env.OPENSEARCH_URL || `http://127.0.0.1:${opensearchPort}`),
    indexPrefix: prefix,
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  refusePublishedSecrets(env);
  // Read (or created) only when a value is not in the environment.
  let cached: InstallationSecrets | undefined;
  const secrets = () => (cached ??= installationSecrets(dataDir(env)));
  const port = int(env.PORT, 3000);
  const host = env.HOST ?? '127.0.0.1';
  const e = EMBEDDED;
  const ports = stackPorts(env);
  return {
    rootDir: ROOT_DIR,
    port,
    host,
    workerHealthPort: int(env.WORKER_HEALTH_PORT, 0),
    // Without PUBLIC_BASE_URL (local runs), links name the listen address; a wildcard one is no address a client can call.
    publicBaseUrl: (env.PUBLIC_BASE_URL ?? `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`).replace(/\/$/, ''),
    databaseUrl:
      env.DATABASE_URL ??
      `postgres://${e.postgresUser}:${encodeURIComponent(secrets().postgresPassword)}@127.0.0.1:${ports.postgres}/${e.postgresDb}`,
    temporal: {
      address: env.TEMPORAL_ADDRESS ?? `127.0.0.1:${ports.temporal}`,
      namespace: env.TEMPORAL_NAMESPACE ?? 'default',
      taskQueue: env.TEMPORAL_TASK_QUEUE ?? 'contact-api',
      uiUrl: env.TEMPORAL_UI_URL ?? `http://127.0.0.1:${ports.temporalUi}`,
    },
    s3: {
      endpoint: env.S3_ENDPOINT ?? `http://127.0.0.1:${ports.minio}`,
      publicEndpoint: env.S3_PUBLIC_ENDPOINT ?? env.S3_ENDPOINT ?? `http://127.0.0.1:${ports.minio}`,
      accessKey: env.S3_ACCESS_KEY ?? env.AWS_ACCESS_KEY_ID ?? e.minioUser,
      secretKey: env.S3_SECRET_KEY ?? env.AWS_SECRET_ACCESS_KEY ?? secrets().minioPassword,
      ...(env.S3_SESSION_TOKEN || env.AWS_SESSION_TOKEN ? { sessionToken: env.S3_SESSION_TOKEN || env.AWS_SESSION_TOKEN } : {}),
      bucket: env.S3_BUCKET ?? 'media',
      region: env.S3_REGION ?? env.AWS_REGION ?? 'us-east-1',
      pathStyle: bool('S3_PATH_STYLE', env.S3_PATH_STYLE, true),
      requestTimeoutMs: int(env.S3_REQUEST_TIMEOUT_MS, 10_000),
    },
    dbPoolMax: { api: int(env.API_DB_POOL_MAX, 20), worker: int(env.WORKER_DB_POOL_MAX, 20) },
    shutdownDelayMs: int(env.SHUTDOWN_DELAY_MS, 0),
    serverSecret: env.SERVER_SECRET ?? secrets().serverSecret,
    encryptionKey: env.ENCRYPTION_KEY ?? secrets().encryptionKey,
    // The generated key's predecessors (an upgraded installation) only when that key is in use.
    previousEncryptionKeys: [...list(env.ENCRYPTION_PREVIOUS_KEYS), ...(env.ENCRYPTION_KEY ? [] : secrets().previousEncryptionKeys)],
    rateLimitPerMinute: int(env.RATE_LIMIT_PER_MINUTE, 600),
    apiReplicaHeartbeatMs: int(env.API_REPLICA_HEARTBEAT_MS, 5000),
    tokenRefreshSchedule: bool('OAUTH_REFRESH_SCHEDULE', env.OAUTH_REFRESH_SCHEDULE, true),
    sessionKeyTtlSeconds: int(env.SESSION_KEY_TTL_SECONDS, 24 * 60 * 60),
    outboundAllowList: list(env.OUTBOUND_ALLOW_LIST),
    logLevel: env.LOG_LEVEL ?? 'info',
    temporalLogLevel: temporalLogLevel(env.TEMPORAL_LOG_LEVEL),
    metrics: { port: optionalPort(env, 'METRICS_PORT'), host: env.METRICS_HOST ?? host, token: env.METRICS_TOKEN ?? '' },
    codec: {
      port: optionalPort(env, 'CODEC_PORT'),
      host: env.CODEC_HOST ?? host,
      authToken: env.CODEC_AUTH_TOKEN ?? '',
      // The browser of an operator viewing the Temporal UI calls the codec: its origin is allowed.
      corsOrigins: list(env.CODEC_CORS_ORIGINS ?? originOf(env.TEMPORAL_UI_URL ?? `http://127.0.0.1:${ports.temporalUi}`)),
    },
    bodyLimitBytes: int(env.BODY_LIMIT_BYTES, 10 * 1024 * 1024),
    statementTimeoutMs: { api: int(env.API_STATEMENT_TIMEOUT_MS, 10_000), worker: int(env.WORKER_STATEMENT_TIMEOUT_MS, 300_000) },
    demoDataset: bool('DEMO_DATASET', env.DEMO_DATASET, env.NODE_ENV !== 'production'),
    discovery: discoveryConfig(env, ports.opensearch),
    media: {
      requestDeadlineMs: int(env.MEDIA_REQUEST_DEADLINE_MS, 90_000),
      retentionHours: int(env.MEDIA_RETENTION_HOURS, 168),
      retentionSchedule: bool('MEDIA_RETENTION_SCHEDULE', env.MEDIA_RETENTION_SCHEDULE, true),
    },
    retention: {
      deletedContactDays: int(env.RETENTION_DELETED_CONTACT_DAYS, 30),
      jobResultDays: int(env.RETENTION_JOB_RESULT_DAYS, 30),
      webhookDeliveryDays: int(env.RETENTION_WEBHOOK_DELIVERY_DAYS, 30),
      accessExportDays: int(env.RETENTION_ACCESS_EXPORT_DAYS, 7),
      schedule: bool('RETENTION_SCHEDULE', env.RETENTION_SCHEDULE, true),
    },
    env,
  };
}
