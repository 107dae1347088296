/**
 * The deployment files checked without a Docker engine: docker-compose.yml (parsed with `yaml`),
 * the override example, the Dockerfile and the scripts they mount, rule by rule (issue 15 item 1).
 * That the compiled output they run actually starts and serves is test/integration/compiled.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PROCESS_NODE_FLAGS, ROOT_DIR, WORKER_NODE_FLAGS, loadConfig } from '../../domain/config.js';

const read = (file: string) => readFileSync(join(ROOT_DIR, file), 'utf8');

interface Service {
  image?: string;
  build?: { context: string; target: string };
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  expose?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
}

const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const override = parse(read('docker-compose.override.yml.example')) as { services: Record<string, Service> };
const APP = ['api', 'worker'] as const;

/** `./deploy/x.sh:/x.sh:ro` → the repository file, which must exist. */
function mounted(service: Service, containerPath: string): string {
  const volume = (service.volumes ?? []).find((v) => v.split(':')[1] === containerPath);
  expect(volume, `${containerPath} is mounted`).toBeDefined();
  const host = volume!.split(':')[0]!;
  expect(existsSync(join(ROOT_DIR, host)), `${host} exists in the repository`).toBe(true);
  return read(host);
}

/** A compiled entry point (`dist/api/main.js`) must have its source (`api/main.ts`). */
function expectCompiledEntry(args: string[]) {
  expect(args[0]).toBe('node');
  const entry = args.slice(1).find((a) => !a.startsWith('-'))!;
  expect(entry).toMatch(/^dist\/.+\.js$/);
  expect(existsSync(join(ROOT_DIR, entry.replace(/^dist\//, '').replace(/\.js$/, '.ts'))), `${entry} is built from a source file`).toBe(true);
}

describe('docker-compose.yml', () => {
  it('pins every image tag and builds the app from the Dockerfile targets', () => {
    for (const [name, s] of Object.entries(services)) {
      if (s.build) {
        expect(s.build.context, name).toBe('.');
        expect(['api', 'worker'], name).toContain(s.build.target);
      } else {
        expect(s.image, name).toMatch(/^[\w./-]+:[\w.-]*\d[\w.-]*$/);
        expect(s.image, name).not.toMatch(/:(latest|stable|main)$/);
      }
    }
  });

  it('runs node on the compiled output, never tsx or npx', () => {
    expectCompiledEntry(services.api!.command!);
    expectCompiledEntry(services.worker!.command!);
    expectCompiledEntry(services.migrate!.command!);
    // dist/scripts/launch.js execs dist/<role>/main.js (test/integration/nodeVersions.test.ts).
    expect(services.api!.command!.slice(1)).toEqual(['dist/scripts/launch.js', 'api']);
    expect(services.worker!.command!.slice(1)).toEqual(['dist/scripts/launch.js', 'worker']);
    expect(services.migrate!.command).toEqual(['node', 'dist/scripts/migrate.js']);
    expect(read('docker-compose.yml')).not.toMatch(/\b(tsx|npx)\b/);
  });

  it('API and worker start only after the migration job and the MinIO init job completed', () => {
    for (const name of APP) {
      expect(services[name]!.depends_on, name).toMatchObject({
        migrate: { condition: 'service_completed_successfully' },
        'minio-init': { condition: 'service_completed_successfully' },
      });
    }
    expect(services.migrate!.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' }, temporal: { condition: 'service_healthy' } });
  });

  it('Temporal: temporalio/server on PostgreSQL, schema set up and upgraded by an admin-tools job, dynamic config from the repository', () => {
    expect(Object.values(services).some((s) => /auto-setup/.test(s.image ?? ''))).toBe(false);
    const temporal = services.temporal!;
    expect(temporal.image).toMatch(/^temporalio\/server:/);
    expect(temporal.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgres' });
    expect(temporal.depends_on).toEqual({ 'temporal-schema': { condition: 'service_completed_successfully' } });
    const schema = services['temporal-schema']!;
    expect(schema.image).toMatch(/^temporalio\/admin-tools:/);
    expect(schema.image!.split(':')[1]).toBe(temporal.image!.split(':')[1]);
    expect(schema.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    const script = mounted(schema, schema.entrypoint!.at(-1)!);
    for (const step of ['create', 'setup-schema -v 0.0', 'update-schema -d']) expect(script).toContain(`--db "$name" ${step}`);
    expect(script).toContain('temporal:temporal temporal_visibility:visibility');
    expect(script).toContain('set -eu');
    const configPath = temporal.environment!.DYNAMIC_CONFIG_FILE_PATH!;
    const dynamic = parse(mounted(temporal, `/etc/temporal/${configPath}`)) as Record<string, Array<{ value: unknown }>>;
    expect(Object.keys(dynamic).length).toBeGreaterThan(0);
    for (const [key, entries] of Object.entries(dynamic)) {
      expect(key).toMatch(/^[a-z]+(\.[a-zA-Z]+)+$/);
      expect(entries.every((e) => 'value' in e), key).toBe(true);
    }
    expect(temporal.healthcheck?.test).toBeDefined();
  });

  it('publishes the API and the MinIO S3 API (readUrls); Temporal, its UI, the MinIO console and PostgreSQL stay inside', () => {
    const published = Object.entries(services).filter(([, s]) => s.ports?.length);
    expect(published.map(([n]) => n).sort()).toEqual(['api', 'minio']);
    expect(services.api!.ports).toEqual(['${API_PORT:-3000}:3000']);
    expect(services.api!.environment!.PORT).toBe('3000');
    // Presigned readUrls name S3_PUBLIC_ENDPOINT: something must serve them (issue 31).
    expect(services.minio!.ports).toEqual(['${MINIO_PUBLIC_PORT:-9000}:9000']);
    expect(services.api!.environment!.S3_PUBLIC_ENDPOINT).toMatch(/^\$\{S3_PUBLIC_ENDPOINT:\?/);
  });

  it('pulls MinIO from a registry that still serves it (Docker Hub removed minio/minio and minio/mc)', () => {
    for (const name of ['minio', 'minio-init']) expect(services[name]!.image, name).toMatch(/^quay\.io\/minio\/(minio|mc):RELEASE\./);
  });

  it('the override example opens Temporal frontend and UI and the MinIO console on loopback only', () => {
    const o = override.services;
    expect(o.temporal!.ports).toContain('127.0.0.1:7233:7233');
    expect(o['temporal-ui']!.ports!.some((p) => p.startsWith('127.0.0.1:') && p.endsWith(':8080'))).toBe(true);
    expect(o.minio!.ports).toContain('127.0.0.1:9001:9001');
    for (const [name, s] of Object.entries(o)) {
      expect(services[name], `${name} exists in docker-compose.yml`).toBeDefined();
      for (const p of s.ports ?? []) expect(p, name).toMatch(/^127\.0\.0\.1:/);
    }
    expect(read('.gitignore')).toMatch(/^docker-compose\.override\.yml$/m);
    // The codec endpoint: served by the API on the port the UI's (browser-side) endpoint names.
    const codecPort = o.api!.environment!.CODEC_PORT!;
    expect(o.api!.ports).toContain(`127.0.0.1:${codecPort}:${codecPort}`);
    expect(o['temporal-ui']!.environment!.TEMPORAL_CODEC_ENDPOINT).toBe(`http://127.0.0.1:${codecPort}/\${CODEC_AUTH_TOKEN:?set CODEC_AUTH_TOKEN}`);
    expect(o.api!.environment!.CODEC_CORS_ORIGINS).toBe(`http://${o['temporal-ui']!.ports![0]!.split(':').slice(0, 2).join(':')}`);
    expect(services.api!.environment!.CODEC_PORT, 'no codec endpoint by default').toBeUndefined();
  });

  it('MinIO: the app uses its own access key, made with a bucket-only policy by an mc init job', () => {
    const env = services.api!.environment!;
    expect(env.S3_ACCESS_KEY).toMatch(/^\$\{MINIO_APP_ACCESS_KEY:\?/);
    expect(env.S3_SECRET_KEY).toMatch(/^\$\{MINIO_APP_SECRET_KEY:\?/);
    const rootUser = services.minio!.environment!.MINIO_ROOT_USER!;
    expect(Object.values(env)).not.toContain(rootUser);
    expect(JSON.stringify(services.api)).not.toMatch(/MINIO_ROOT/);
    const init = services['minio-init']!;
    expect(init.image).toMatch(/^quay\.io\/minio\/mc:/);
    expect(init.depends_on).toEqual({ minio: { condition: 'service_healthy' } });
    const script = mounted(init, init.entrypoint!.at(-1)!);
    expect(script).toContain('mc mb --ignore-existing "local/$S3_BUCKET"');
    expect(script).toContain('mc admin user add local "$MINIO_APP_ACCESS_KEY" "$MINIO_APP_SECRET_KEY"');
    expect(script).toMatch(/mc admin policy create local (\S+) .*\n[\s\S]*mc admin policy attach local \1 --user "\$MINIO_APP_ACCESS_KEY"/);
    // The policy names the bucket and nothing wider.
    expect(script).toContain('"arn:aws:s3:::$S3_BUCKET/*"');
    expect(script).not.toContain('arn:aws:s3:::*');
    expect(init.environment!.S3_BUCKET).toBe(env.S3_BUCKET);
  });

  it('public URLs: PUBLIC_BASE_URL and S3_PUBLIC_ENDPOINT are required and reach the configuration', () => {
    for (const name of APP) {
      const env = services[name]!.environment!;
      expect(env.PUBLIC_BASE_URL).toMatch(/^\$\{PUBLIC_BASE_URL:\?/);
      expect(env.S3_PUBLIC_ENDPOINT).toMatch(/^\$\{S3_PUBLIC_ENDPOINT:\?/);
    }
    const config = loadConfig({ HOST: '0.0.0.0', PUBLIC_BASE_URL: 'https://api.example.com/', S3_ENDPOINT: 'http://minio:9000', S3_PUBLIC_ENDPOINT: 'https://media.example.com' });
    expect(config.publicBaseUrl).toBe('https://api.example.com');
    expect(config.s3).toMatchObject({ endpoint: 'http://minio:9000', publicEndpoint: 'https://media.example.com' });
    // Without PUBLIC_BASE_URL a wildcard listen address is never a link.
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '3000' }).publicBaseUrl).toBe('http://127.0.0.1:3000');
  });

  it('secrets come from the operator (required, no literal), in production mode; every variable is one the code reads', () => {
    const configSource = read('domain/config.ts');
    for (const name of [...APP, 'migrate'] as const) {
      const env = services[name]!.environment!;
      expect(env.NODE_ENV, name).toBe('production');
      expect(env.SERVER_SECRET, name).toMatch(/^\$\{SERVER_SECRET:\?/);
      expect(env.ENCRYPTION_KEY, name).toMatch(/^\$\{ENCRYPTION_KEY:\?/);
      for (const key of Object.keys(env)) {
        // OTEL_*: read by the OpenTelemetry SDK (telemetry/tracing.ts).
        if (['NODE_ENV', 'NODE_OPTIONS'].includes(key) || key.startsWith('OTEL_')) continue;
        expect(configSource.includes(`env.${key}`) || configSource.includes(`'${key}'`), `${key} is read by domain/config.ts`).toBe(true);
      }
    }
    expect(read('docker-compose.yml')).not.toMatch(/change-me|minioadmin/);
    expect(read('.gitignore')).toMatch(/^\.env$/m);
    // The example names every variable the compose file requires.
    const example = read('deploy/compose.env.example');
    for (const [, v] of read('docker-compose.yml').matchAll(/\$\{(\w+):\?/g)) expect(example).toMatch(new RegExp(`^${v}=`, 'm'));
  });

  it('API and worker start with the node flags npm start gives them, on the command line (NODE_OPTIONS refuses V8 flags)', () => {
    // `--heap-growing-percent` or `--single-threaded-gc` in NODE_OPTIONS: node refuses to start.
    const nodeStarts = (args: string[], env: NodeJS.ProcessEnv = {}) => execFileSync(process.execPath, [...args, '-e', '0'], { env: { PATH: process.env.PATH, ...env }, stdio: 'pipe' });
    for (const name of [...APP, 'migrate'] as const) {
      const options = services[name]!.environment!.NODE_OPTIONS;
      if (options) expect(() => nodeStarts([], { NODE_OPTIONS: String(options) }), `${name}: NODE_OPTIONS=${options}`).not.toThrow();
    }
    // The launcher picks the flags this Node supports (infra/nodeFlags.ts) and execs the entry.
    expect(services.api!.command).toEqual(['node', 'dist/scripts/launch.js', 'api']);
    expect(services.worker!.command).toEqual(['node', 'dist/scripts/launch.js', 'worker']);
    for (const flags of [PROCESS_NODE_FLAGS, WORKER_NODE_FLAGS]) expect(() => nodeStarts(flags), flags.join(' ')).not.toThrow();
  });

  it('API and worker have healthchecks: /readyz and the worker probe', () => {
    expect(services.api!.healthcheck!.test).toEqual(['CMD', 'node', 'dist/scripts/healthcheck.js', 'api']);
    expect(services.worker!.healthcheck!.test).toEqual(['CMD', 'node', 'dist/scripts/healthcheck.js', 'worker']);
    expect(services.worker!.environment!.WORKER_HEALTH_PORT).toMatch(/^\d+$/);
    for (const name of ['postgres', 'temporal', 'minio']) expect(services[name]!.healthcheck?.test, name).toBeDefined();
  });
});

/** Dockerfile instructions per stage (continuation lines joined, comments dropped). */
function dockerfileStages(text: string) {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const args = new Map<string, string>();
  const stages: Array<{ from: string; name: string; instructions: Array<[string, string]> }> = [];
  for (const line of lines) {
    const [, op, rest] = /^(\w+)\s+(.*)$/.exec(line)!;
    const instruction = op!.toUpperCase();
    if (instruction === 'ARG' && !stages.length) {
      const [k, v] = rest!.split('=');
      args.set(k!, v ?? '');
    } else if (instruction === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest!)!;
      stages.push({ from: m[1]!.replace(/\$\{(\w+)\}/g, (_, k) => args.get(k) ?? ''), name: m[2] ?? '', instructions: [] });
    } else stages.at(-1)!.instructions.push([instruction, rest!]);
  }
  return stages;
}

describe('Dockerfile', () => {
  const stages = dockerfileStages(read('Dockerfile'));
  const byName = new Map(stages.map((s) => [s.name, s]));
  /** Instructions of a stage and of the stages it is built FROM. */
  const chain = (name: string): Array<[string, string]> => {
    const s = byName.get(name)!;
    return [...(byName.has(s.from) ? chain(s.from) : []), ...s.instructions];
  };

  it('is multi-stage: build (all deps, npm run build) → runtime (production deps + dist) → api and worker targets', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'runtime', 'worker', 'api']);
    const build = byName.get('build')!.instructions.map(([, r]) => r);
    expect(build).toContain('npm ci --no-audit --no-fund');
    expect(build).toContain('npm run build');
    const runtime = byName.get('runtime')!.instructions;
    expect(runtime.some(([op, r]) => op === 'RUN' && /npm ci --omit=dev/.test(r))).toBe(true);
    expect(runtime).toContainEqual(['COPY', '--from=build /app/dist ./dist']);
    expect(runtime.some(([op, r]) => op === 'COPY' && /\bsrc\b|^\.\s/.test(r))).toBe(false);
    expect(runtime).toContainEqual(['ENV', expect.stringContaining('NODE_ENV=production')]);
    for (const s of stages) expect(s.from, s.name).toMatch(/^(node:\d+\.\d+\.\d+-[\w-]+|build|runtime)$/);
    // compose builds these targets
    for (const name of APP) expect(byName.has(services[name]!.build!.target)).toBe(true);
  });

  it('api and worker run node on dist/ as a non-root user, each with a HEALTHCHECK', () => {
    for (const target of APP) {
      const all = chain(target);
      const users = all.filter(([op]) => op === 'USER').map(([, u]) => u);
      expect(users.length, target).toBeGreaterThan(0);
      expect(users.at(-1), target).not.toMatch(/^(root|0)(:|$)/);
      const cmd = JSON.parse(byName.get(target)!.instructions.find(([op]) => op === 'CMD')![1]) as string[];
      expectCompiledEntry(cmd);
      expect(cmd).toEqual(services[target]!.command);
      const health = byName.get(target)!.instructions.find(([op]) => op === 'HEALTHCHECK')![1];
      expect(health).toContain(`CMD ["node", "dist/scripts/healthcheck.js", "${target}"]`);
    }
    expect(read('Dockerfile')).not.toMatch(/\b(tsx|npx)\b/);
  });

  it('.dockerignore keeps local state and secrets out of the build context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['node_modules', 'dist', '.data', '.env', '.git']) expect(ignored).toContain(entry);
  });

  it('the build stage copies every source folder the build compiles, and the build compiles every source folder', () => {
    const include = (JSON.parse(read('tsconfig.build.json')) as { include: string[] }).include;
    const copied = byName.get('build')!.instructions.filter(([op]) => op === 'COPY').map(([, r]) => r.split(/\s+/)[0]);
    for (const dir of include) expect(copied, `Dockerfile copies ${dir}/`).toContain(dir);
    // Every top-level folder holding TypeScript the service runs (not tests, benchmarks, tooling).
    const sourceDirs = readdirSync(ROOT_DIR, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith('.') && !['node_modules', 'dist', 'test', 'bench'].includes(d.name))
      .filter((d) => readdirSync(join(ROOT_DIR, d.name), { recursive: true }).some((f) => String(f).endsWith('.ts')))
      .map((d) => d.name);
    expect([...sourceDirs].sort()).toEqual([...include].sort());
  });

  it('package.json: the build compiles and bundles; start scripts run node on dist/', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts.build).toBe('tsc -p tsconfig.build.json && node dist/scripts/bundleWorkflows.js');
    // The README's production commands start them with the flags compose and npm start give them.
    expect(pkg.scripts['start:api']).toBe(services.api!.command!.join(' '));
    expect(pkg.scripts['start:worker']).toBe(services.worker!.command!.join(' '));
    const tsconfig = JSON.parse(read('tsconfig.build.json')) as { compilerOptions: { outDir: string; noEmit: boolean } };
    expect(tsconfig.compilerOptions).toMatchObject({ outDir: 'dist', noEmit: false });
    expect(read('.gitignore')).toMatch(/^\/dist\/$/m);
  });
});
