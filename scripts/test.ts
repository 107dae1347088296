/**
 * `npm test`: typecheck, then every test (unit, integration against the real stack, replay).
 * Services this run had to start are stopped afterwards; services that were already running
 * (a developer's `npm start`) are left alone.
 */
import { spawnSync } from 'node:child_process';
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
  if (started.length) await stopStack(started);
}
process.exit(code);
