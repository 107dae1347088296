/**
 * The Helm chart (deploy/helm/contact-data-api), checked without a cluster: `helm lint`, and
 * `helm template` validated by kubeconform (-strict) against the Kubernetes JSON schemas, for the
 * default values and for a Temporal Cloud + managed PostgreSQL configuration; then the rules the
 * chart exists for, on the rendered objects. Tools and schemas: scripts/bootstrap.mjs.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ROOT_DIR } from '../../domain/config.js';

const CHART = join(ROOT_DIR, 'deploy', 'helm', 'contact-data-api');
const BIN = join(ROOT_DIR, '.tools', 'bin');
const K8S_VERSION = /kubernetesVersion: '([\d.]+)'/.exec(readFileSync(join(ROOT_DIR, 'scripts', 'bootstrap.mjs'), 'utf8'))![1]!;
const SCHEMAS = join(ROOT_DIR, '.tools', 'kubernetes-json-schema', `v${K8S_VERSION}-strict`);
const tmp = mkdtempSync(join(tmpdir(), 'helm-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const CLOUD_VALUES = `
image: { api: registry.example.com/cda:1.2.3, worker: registry.example.com/cda-worker:1.2.3 }
publicBaseUrl: https://api.example.com
postgres: { caSecret: postgres-ca, apiPoolMax: 8, workerPoolMax: 12 }
temporal:
  address: ns.acct.tmprl.cloud:7233
  namespace: ns.acct
  tls: { enabled: true, secretName: temporal-tls, clientCert: true, serverName: ns.acct.tmprl.cloud }
s3: { endpoint: https://s3.eu-west-1.amazonaws.com, publicEndpoint: https://media.example.com, bucket: acme, region: eu-west-1, pathStyle: false }
api: { autoscaling: { enabled: false }, replicas: 3 }
extraEnv: { RATE_LIMIT_PER_MINUTE: "1200" }
`;

function render(values?: string): { text: string; docs: any[] } {
  const args = ['template', 'cda', CHART, '--namespace', 'apps', '--kube-version', K8S_VERSION];
  if (values) {
    const file = join(tmp, `values-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(file, values);
    args.push('-f', file);
  }
  const text = execFileSync(join(BIN, 'helm'), args, { encoding: 'utf8' });
  return { text, docs: parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean) };
}

function kubeconform(manifests: string): string {
  return execFileSync(join(BIN, 'kubeconform'), ['-strict', '-summary', '-output', 'text', '-schema-location', `${SCHEMAS}/{{ .ResourceKind }}{{ .KindSuffix }}.json`, '-'], { input: manifests, encoding: 'utf8' });
}

const byKind = (docs: any[], kind: string) => docs.filter((d) => d.kind === kind);
const named = (docs: any[], kind: string, suffix: string) => docs.find((d) => d.kind === kind && d.metadata.name.endsWith(suffix));

describe('Helm chart', () => {
  it('the tools and schemas are installed by the bootstrap', () => {
    for (const tool of ['helm', 'kubeconform']) expect(existsSync(join(BIN, tool)), `${tool} (node scripts/bootstrap.mjs)`).toBe(true);
    expect(existsSync(join(SCHEMAS, 'deployment-apps-v1.json'))).toBe(true);
  });

  it('helm lint passes (strict)', () => {
    const out = execFileSync(join(BIN, 'helm'), ['lint', '--strict', CHART], { encoding: 'utf8' });
    expect(out).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it.each([
    ['default values', undefined],
    ['Temporal Cloud mTLS + managed PostgreSQL + S3', CLOUD_VALUES],
  ])('%s: every rendered object validates against the Kubernetes schemas', (_, values) => {
    const { text, docs } = render(values);
    const summary = kubeconform(text);
    expect(summary).toMatch(new RegExp(`Summary: ${docs.length} resources? found .* Valid: ${docs.length}, Invalid: 0, Errors: 0, Skipped: 0`));
  });

  it('kubeconform does refuse an invalid object (the check can fail)', () => {
    const { docs } = render();
    const deployment = structuredClone(named(docs, 'Deployment', '-api'));
    deployment.spec.template.spec.containers[0].readinesProbe = deployment.spec.template.spec.containers[0].readinessProbe;
    const out = spawnSync(join(BIN, 'kubeconform'), ['-strict', '-summary', '-schema-location', `${SCHEMAS}/{{ .ResourceKind }}{{ .KindSuffix }}.json`, '-'], { input: JSON.stringify(deployment), encoding: 'utf8' });
    expect(out.status).not.toBe(0);
    expect(out.stdout).toMatch(/additional properties 'readinesProbe' not allowed/);
  });

  it('discovery on a managed OpenSearch: engine, URL and prefix reach every pod; the URL is required', () => {
    const { docs } = render(`${CLOUD_VALUES}discovery: { engine: opensearch, opensearch: { url: "https://search.example.com:9200", indexPrefix: acme } }\n`);
    const containers = [...byKind(docs, 'Deployment'), ...byKind(docs, 'Job')].flatMap((d) => d.spec.template.spec.containers);
    expect(containers.length).toBeGreaterThan(0);
    for (const c of containers) {
      const env = new Map<string, any>(c.env.map((e: any) => [e.name, e.value]));
      expect([env.get('DISCOVERY_ENGINE'), env.get('OPENSEARCH_URL'), env.get('OPENSEARCH_INDEX_PREFIX')]).toEqual(['opensearch', 'https://search.example.com:9200', 'acme']);
      // a managed cluster's indexes are built with a replica by default (a node may go)
      expect([env.get('OPENSEARCH_SHARDS'), env.get('OPENSEARCH_REPLICAS')]).toEqual(['1', '1']);
    }
    const plain = render(CLOUD_VALUES).docs.flatMap((d) => (d.spec?.template?.spec?.containers ?? []) as any[]);
    for (const c of plain) expect(c.env.find((e: any) => e.name === 'OPENSEARCH_URL')).toBeUndefined();
    expect(() => render(`${CLOUD_VALUES}discovery: { engine: opensearch }\n`)).toThrow(/discovery.opensearch.url is required/);
  });

  it('API, worker and migration job: no root, read-only root filesystem, secrets only from the Secret', () => {
    const { docs } = render(CLOUD_VALUES);
    const pods = [...byKind(docs, 'Deployment'), ...byKind(docs, 'Job')].map((d) => d.spec.template.spec);
    expect(pods).toHaveLength(3);
    for (const pod of pods) {
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const c of pod.containers) {
        expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
        expect(c.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
        const env = new Map<string, any>(c.env.map((e: any) => [e.name, e]));
        for (const secret of ['DATABASE_URL', 'SERVER_SECRET', 'ENCRYPTION_KEY', 'S3_ACCESS_KEY', 'S3_SECRET_KEY', 'TEMPORAL_API_KEY']) {
          expect(env.get(secret)?.valueFrom?.secretKeyRef?.name, secret).toBe('contact-data-api');
        }
        // Every setting is one the processes read (OTEL_*: the OpenTelemetry SDK, telemetry/tracing.ts).
        const readers = ['domain/config.ts', 'infra/temporalConnection.ts', 'db/pgConnection.ts'].map((f) => readFileSync(join(ROOT_DIR, f), 'utf8')).join('\n');
        for (const name of env.keys()) if (name !== 'NODE_ENV' && !name.startsWith('OTEL_')) expect(readers.includes(`env.${name}`) || readers.includes(`'${name}'`), `${name} is read`).toBe(true);
        expect(env.get('TEMPORAL_TLS_CERT_FILE').value).toBe('/etc/temporal-tls/tls.crt');
        // Temporal Cloud's server certificate is public: no CA file unless serverCA says so.
        expect(env.has('TEMPORAL_TLS_CA_FILE')).toBe(false);
        expect(env.get('PGSSLROOTCERT').value).toBe('/etc/postgres-ca/ca.crt');
        expect(env.get('S3_PATH_STYLE').value).toBe('false');
        expect(env.get('API_DB_POOL_MAX').value).toBe('8');
      }
    }
  });

  it('tracing: off by default; tracing.otlpEndpoint reaches every pod with its sampler, the OTLP headers from the Secret', () => {
    const envOf = (docs: any[]) => [...byKind(docs, 'Deployment'), ...byKind(docs, 'Job')].map((d) => d.spec.template.spec.containers[0].env as any[]);
    for (const env of envOf(render().docs)) expect(env.find((e) => e.name === 'OTEL_EXPORTER_OTLP_ENDPOINT')).toBeUndefined();
    const traced = envOf(render('tracing: { otlpEndpoint: "http://otel-collector:4318", samplerArg: "0.1" }\n').docs);
    for (const env of traced) {
      expect(env.find((e) => e.name === 'OTEL_EXPORTER_OTLP_ENDPOINT').value).toBe('http://otel-collector:4318');
      expect(env.find((e) => e.name === 'OTEL_TRACES_SAMPLER_ARG').value).toBe('0.1');
      expect(env.find((e) => e.name === 'OTEL_EXPORTER_OTLP_HEADERS').valueFrom.secretKeyRef).toMatchObject({ key: 'OTEL_EXPORTER_OTLP_HEADERS', optional: true });
    }
  });

  it('rolling updates lose no request: readiness-first shutdown within the grace period; probes; HPAs and PDBs', () => {
    const { docs } = render();
    const api = named(docs, 'Deployment', '-api');
    expect(api.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    const pod = api.spec.template.spec;
    const c = pod.containers[0];
    expect(c.command).toEqual(['node', 'dist/scripts/launch.js', 'api']);
    expect(c.readinessProbe.httpGet.path).toBe('/readyz');
    expect(c.livenessProbe.httpGet.path).toBe('/healthz');
    const delayMs = Number(c.env.find((e: any) => e.name === 'SHUTDOWN_DELAY_MS').value);
    // The Service stops routing within a few probe periods, well inside the delay; the delay and the drain fit the grace period.
    expect(delayMs).toBeGreaterThanOrEqual(3 * c.readinessProbe.periodSeconds * 1000);
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(delayMs + 10_000);
    const worker = named(docs, 'Deployment', '-worker').spec.template.spec.containers[0];
    expect(worker.command).toEqual(['node', 'dist/scripts/launch.js', 'worker']);
    expect(worker.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(byKind(docs, 'HorizontalPodAutoscaler').map((h) => h.spec.scaleTargetRef.name).sort()).toEqual([api.metadata.name, named(docs, 'Deployment', '-worker').metadata.name].sort());
    expect(byKind(docs, 'PodDisruptionBudget')).toHaveLength(2);
    // The HPA owns the replica count.
    expect(api.spec.replicas).toBeUndefined();
    const job = byKind(docs, 'Job')[0];
    expect(job.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(job.spec.template.spec.containers[0].command).toEqual(['node', 'dist/scripts/migrate.js']);
  });
});
