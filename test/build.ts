/**
 * `npm run build` once per test run, for the test files that start the compiled output: the first
 * to ask builds, the others wait for it (two tsc runs writing one dist/ would corrupt each other).
 * Run inside the test run so dist/ is never stale; tsc's incremental build keeps reruns short.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT_DIR } from '../domain/config.js';

const run = promisify(execFile);

export async function buildOnce(): Promise<void> {
  const runId = process.env.TEST_RUN_ID;
  if (!runId) throw new Error('run tests through vitest (test/globalSetup.ts prepares the stack)');
  const dir = join(ROOT_DIR, '.test-data');
  mkdirSync(dir, { recursive: true });
  const done = join(dir, `build-${runId}.done`);
  const lock = join(dir, `build-${runId}.lock`);
  for (;;) {
    if (existsSync(done)) return;
    try {
      mkdirSync(lock);
    } catch {
      await new Promise((r) => setTimeout(r, 500));
      continue;
    }
    try {
      if (existsSync(done)) return;
      await run('npm', ['run', 'build'], { cwd: ROOT_DIR, timeout: 300_000 });
      writeFileSync(done, '');
      return;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}
