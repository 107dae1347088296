/**
 * `npm test`: typecheck, then every test (unit, integration against the real stack, replay).
 * Services this run had to start are stopped afterwards; services that were already running
 * (a developer's `npm start`) are left alone.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT_DIR } from '../domain/config.js';
import { startStack, stopStack } from './stack.js';

const args = process.argv.slice(2);
const started = (await startStack()).filter((s) => s.startedNow).map((s) => s.service);
let code = 0;
try {
  const tsc = spawnSync('npx', ['tsc', '--noEmit', '-p', '.'], { stdio: 'inherit' });
  if (tsc.status !== 0) code = tsc.status ?? 1;
  const vitest = spawnSync('npx', ['vitest', 'run', ...args], { stdio: 'inherit', env: { ...process.env, FORCE_COLOR: process.env.CI ? '0' : process.env.FORCE_COLOR } });
  if (vitest.status !== 0) code = vitest.status ?? 1;
} finally {
  await stopChaosLeftovers();
  if (started.length) await stopStack(started);
}

/** Stack instances of chaos tests that ended without their teardown (a killed run) are stopped. */
async function stopChaosLeftovers() {
  const dir = join(ROOT_DIR, '.test-data');
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir).filter((n) => n.startsWith('chaos-'))) {
    await stopStack(undefined, { ...process.env, DATA_DIR: join(dir, name) }).catch(() => {});
    rmSync(join(dir, name), { recursive: true, force: true });
  }
}
process.exit(code);
