/**
 * The API and the worker start on every Node major that `engines` admits (package.json), the way
 * the image starts them: `node scripts/launch.(ts|js) api|worker`, which picks the flags this Node
 * supports (infra/nodeFlags.ts) and replaces itself with the service. Node 24+ refuses
 * `--experimental-async-context-frame` ("bad option"): before the launcher, neither process
 * started there. Node 24 and 26 are installed by the bootstrap (EXTRA_NODE_VERSIONS); the project's
 * own Node 22 is the one running the tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../domain/config.js';
import { ASYNC_CONTEXT_FRAME } from '../../infra/nodeFlags.js';
import { cloneTestDatabase, dropTestDatabase, freePort } from '../harness.js';

const engines = (JSON.parse(readFileSync(join(ROOT_DIR, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
// Read, not imported: importing scripts/bootstrap.mjs would run it.
const EXTRA_NODE_VERSIONS = JSON.parse(/EXTRA_NODE_VERSIONS = (\[[^\]]*\])/.exec(readFileSync(join(ROOT_DIR, 'scripts', 'bootstrap.mjs'), 'utf8'))![1]!.replaceAll("'", '"')) as string[];
const nodes = [
  { version: process.versions.node, bin: process.execPath },
  ...EXTRA_NODE_VERSIONS.map((version) => ({ version, bin: join(ROOT_DIR, '.tools', 'node', version, 'bin', 'node') })),
];

let db: { name: string; url: string };
beforeAll(async () => {
  db = await cloneTestDatabase('node_');
});
afterAll(async () => {
  if (db) await dropTestDatabase(db.name);
});

/** `node --import tsx scripts/launch.ts <role>` on the given Node; resolves once `ready(url)` holds. */
async function launch(bin: string, role: 'api' | 'worker', env: NodeJS.ProcessEnv, readyUrl: string) {
  const child = spawn(bin, ['--import', 'tsx', 'scripts/launch.ts', role], { cwd: ROOT_DIR, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  child.stdout!.on('data', (b: Buffer) => output.push(b.toString()));
  child.stderr!.on('data', (b: Buffer) => output.push(b.toString()));
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${role} on ${bin} exited (${child.exitCode}):\n${output.join('')}`);
    if ((await fetch(readyUrl).then((r) => r.status, () => 0)) === 200) break;
    if (Date.now() > deadline) throw new Error(`${role} not ready in 90 s:\n${output.join('')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return { child, output };
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exited;
}

describe('Node versions', () => {
  it('engines names exactly the majors the tests start the processes on', () => {
    for (const { version } of nodes) expect(semver.satisfies(version, engines), `${version} in ${engines}`).toBe(true);
    expect(new Set(nodes.map((n) => semver.major(n.version)))).toEqual(new Set([22, 24, 26]));
    // Majors in between (odd, short-lived releases) are not admitted: nothing tests them.
    for (const untested of ['23.11.0', '25.0.0', '27.0.0', '20.19.0']) expect(semver.satisfies(untested, engines), untested).toBe(false);
  });

  it.each(nodes)('API and worker start on Node $version with the flags it supports, and stop on SIGTERM', async ({ version, bin }) => {
    expect(existsSync(bin), `${bin} (node scripts/bootstrap.mjs installs it)`).toBe(true);
    const [port, healthPort] = [await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: db.url,
      TEMPORAL_TASK_QUEUE: `test-${db.name}-${semver.major(version)}`,
      HOST: '127.0.0.1',
      PORT: String(port),
      WORKER_HEALTH_PORT: String(healthPort),
      LOG_LEVEL: 'warn',
    };
    const api = await launch(bin, 'api', env, `http://127.0.0.1:${port}/readyz`);
    const worker = await launch(bin, 'worker', env, `http://127.0.0.1:${healthPort}/healthz`);
    try {
      for (const { child } of [api, worker]) {
        // The launcher exec'd the service in its own process: same pid, the flags on its command line.
        const cmdline = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
        expect(cmdline).toContain('--max-old-space-size=384');
        expect(cmdline.includes(ASYNC_CONTEXT_FRAME), cmdline.join(' ')).toBe(semver.major(version) === 22);
      }
      expect(readFileSync(`/proc/${worker.child.pid}/cmdline`, 'utf8').split('\0')).toContain('--single-threaded-gc');
    } finally {
      expect(await stop(worker.child), worker.output.join('')).toBe(0);
      expect(await stop(api.child), api.output.join('')).toBe(0);
    }
  }, 240_000);
});
