/**
 * The production path without Docker: the compiled output (`npm run build`) started the way the
 * image and docker-compose.yml start it, against the real stack. `node dist/scripts/migrate.js`
 * (the migration job) prepares a Temporal namespace of this test's own (registered, search
 * attributes added); then `node dist/api/main.js` and `node dist/worker/main.js` run with
 * NODE_ENV=production, operator secrets, PUBLIC_BASE_URL and S3_PUBLIC_ENDPOINT; the image's
 * HEALTHCHECK commands pass; one authenticated request, one job end to end and one media upload
 * whose readUrl is signed for the public object-store host; SIGTERM stops both cleanly.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR, loadConfig } from '../../domain/config.js';
import { keyringOf } from '../../domain/keyring.js';
import { SEARCH_ATTRIBUTES } from '../../domain/searchAttributes.js';
import { openDatabase } from '../../db/orm.js';
import { createWorkspace, type NewWorkspace } from '../../db/workspaces.js';
import { cloneTestDatabase, dropTestDatabase, freePort } from '../harness.js';
import { buildOnce } from '../build.js';

const run = promisify(execFile);
const PUBLIC_MEDIA = 'http://media.example.test:9443';

let dbName: string;
let env: NodeJS.ProcessEnv;
let api: string;
let workerHealthPort: number;
let ws: NewWorkspace;
let migrateOutput: string;
const children = new Map<string, { child: ChildProcess; output: string[] }>();

/** `node <entry>` exactly as the image's CMD runs it (no IPC, no loader). */
function startCompiled(name: string, entry: string) {
  const child = spawn(process.execPath, [entry], { cwd: ROOT_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const keep = (b: Buffer) => output.push(b.toString());
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  children.set(name, { child, output });
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    const dead = [...children].find(([, c]) => c.child.exitCode !== null);
    if (dead) throw new Error(`${dead[0]} exited (${dead[1].child.exitCode}) while waiting for ${what}:\n${dead[1].output.join('')}`);
    if (Date.now() > deadline) throw new Error(`${what} not reached in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const http = async (method: string, path: string, body?: unknown, apiKey = ws.apiKey) => {
  const res = await fetch(api + path, { method, headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (await res.json()) as any };
};

beforeAll(async () => {
  const build = buildOnce();
  const base = loadConfig();
  const db = await cloneTestDatabase('dist_');
  dbName = db.name;

  const [port, healthPort] = [await freePort(), await freePort()];
  workerHealthPort = healthPort;
  api = `http://127.0.0.1:${port}`;
  const { WORKFLOW_BUNDLE_PATH, OUTBOUND_ALLOW_LIST, PROVIDER_BASE_URL_ALLOW_LIST, ...inherited } = process.env;
  env = {
    ...inherited,
    NODE_ENV: 'production',
    SERVER_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    DATABASE_URL: db.url,
    // The migration job registers this namespace (and its search attributes) like on a fresh server.
    TEMPORAL_ADDRESS: base.temporal.address,
    TEMPORAL_NAMESPACE: `dist-${dbName.replaceAll('_', '-')}`,
    TEMPORAL_TASK_QUEUE: `test-${dbName}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    WORKER_HEALTH_PORT: String(healthPort),
    PUBLIC_BASE_URL: 'https://api.example.test',
    S3_PUBLIC_ENDPOINT: PUBLIC_MEDIA,
    LOG_LEVEL: 'warn',
  };
  await build;
  const migrated = await run(process.execPath, ['dist/scripts/migrate.js'], { cwd: ROOT_DIR, env, timeout: 120_000 });
  migrateOutput = migrated.stdout;
  startCompiled('worker', 'dist/worker/main.js');
  startCompiled('api', 'dist/api/main.js');
  const database = await openDatabase(env.DATABASE_URL!, { max: 1 });
  ws = await createWorkspace(database.orm.em, { name: 'Compiled', credits: 100, keyring: keyringOf(loadConfig(env)) });
  await database.close();
  await waitFor('API /readyz 200', async () => (await fetch(`${api}/readyz`)).status === 200);
  await waitFor('worker /healthz 200', async () => (await fetch(`http://127.0.0.1:${healthPort}/healthz`)).status === 200);
}, 300_000);

afterAll(async () => {
  await Promise.all(
    [...children.values()].map(({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      return exited;
    }),
  );
  if (env?.TEMPORAL_NAMESPACE) {
    const connection = await Connection.connect({ address: loadConfig().temporal.address });
    await connection.operatorService.deleteNamespace({ namespace: env.TEMPORAL_NAMESPACE }).catch(() => {});
    await connection.close();
  }
  if (dbName) await dropTestDatabase(dbName);
});

describe('compiled output (dist/) in production mode', () => {
  it('the migration job registered the namespace with the search attributes', async () => {
    expect(migrateOutput).toContain('migrations applied');
    expect(migrateOutput).toContain(`temporal namespace ${env.TEMPORAL_NAMESPACE} ready`);
    const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS! });
    try {
      const attrs = await connection.operatorService.listSearchAttributes({ namespace: env.TEMPORAL_NAMESPACE! });
      expect(Object.keys(attrs.customAttributes ?? {})).toEqual(expect.arrayContaining([...SEARCH_ATTRIBUTES]));
    } finally {
      await connection.close();
    }
    // Run again (every `docker compose up` does): nothing to add.
    const again = await run(process.execPath, ['dist/scripts/migrate.js'], { cwd: ROOT_DIR, env, timeout: 120_000 });
    expect(again.stdout).toContain('namespaceCreated: false');
    expect(again.stdout).toContain('searchAttributesAdded: []');
  });

  it("the image's HEALTHCHECK commands pass for API and worker", async () => {
    for (const role of ['api', 'worker']) {
      const res = await run(process.execPath, ['dist/scripts/healthcheck.js', role], { cwd: ROOT_DIR, env, timeout: 30_000 });
      expect(res.stdout, role).toMatch(/^200 /);
    }
    const worker = (await (await fetch(`http://127.0.0.1:${workerHealthPort}/healthz`)).json()) as { status: string; workers: Record<string, string> };
    expect(worker).toEqual({ status: 'ok', workers: { [env.TEMPORAL_TASK_QUEUE!]: 'RUNNING', [`${env.TEMPORAL_TASK_QUEUE}-microblog`]: 'RUNNING', [`${env.TEMPORAL_TASK_QUEUE}-pronet`]: 'RUNNING' } });
  });

  it('answers an authenticated request and refuses an unauthenticated one', async () => {
    expect(await http('GET', '/credits/balance')).toMatchObject({ status: 200, body: { data: { balance: 100 } } });
    expect((await http('GET', '/credits/balance', undefined, 'cdk_ws_wrong')).status).toBe(401);
  });

  it('runs a job end to end; its jobStatusEndpoint is on PUBLIC_BASE_URL', async () => {
    const source = await http('POST', '/sources', {
      sourceType: 'importFromWebhook',
      sourceIdentifier: 'dist-check',
      sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'First Name', targetFieldName: 'contact.firstName' }, { sourceFieldName: 'Email', targetFieldName: 'contact.workEmail' }] } },
    });
    expect(source.status, JSON.stringify(source.body)).toBe(200);
    const accepted = await http('POST', `/contacts/${source.body.data.id}/bulk-upsert-contacts`, { contactsData: [{ 'First Name': 'Ada', Email: 'ada@dist.example' }, { 'First Name': 'Alan', Email: 'alan@dist.example' }] });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    expect(accepted.body.jobStatusEndpoint).toBe(`https://api.example.test/jobs/${accepted.body.jobId}`);
    let job: any;
    await waitFor('the job to finish', async () => {
      job = (await http('GET', `/jobs/${accepted.body.jobId}`)).body.data;
      return job.jobStatus !== 'queued' && job.jobStatus !== 'running';
    });
    expect(job).toMatchObject({ jobStatus: 'completed', jobResponsePayload: { totalRows: 2, created: 2, failed: 0 } });
  });

  it('signs readUrls for S3_PUBLIC_ENDPOINT, and the object store accepts them for that host', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108020000009077053e0000000c4944415478da63f8cfc0000003010100c9fe92ef0000000049454e44ae426082', 'hex');
    const fd = new FormData();
    fd.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'pixel.png');
    const res = await fetch(`${api}/v1/media/upload`, { method: 'POST', headers: { 'x-api-key': ws.apiKey }, body: fd });
    const body = (await res.json()) as { readUrl: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    const url = new URL(body.readUrl);
    expect(url.origin).toBe(PUBLIC_MEDIA);
    // What a reverse proxy at the public host does: forward to MinIO keeping the Host header.
    const internal = new URL(loadConfig().s3.endpoint);
    const got = await new Promise<{ status: number; bytes: Buffer }>((resolve, reject) => {
      const req = request({ host: internal.hostname, port: internal.port, path: url.pathname + url.search, headers: { host: url.host } }, (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => resolve({ status: r.statusCode!, bytes: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(got.status).toBe(200);
    expect(got.bytes.equals(png)).toBe(true);
  });

  it('SIGTERM stops API and worker with exit code 0', async () => {
    for (const [name, { child, output }] of children) {
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      expect(await exited, `${name}:\n${output.join('')}`).toBe(0);
    }
  });
});
