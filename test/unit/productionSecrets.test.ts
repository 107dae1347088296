/**
 * With NODE_ENV=production, API and worker refuse to start on a missing, short or development
 * secret, naming the variable: checked by starting the real entry points as child processes.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEV_SECRETS, ROOT_DIR, productionSecretProblems } from '../../domain/config.js';

const STRONG = { SERVER_SECRET: 'a'.repeat(16) + 'b'.repeat(16) + 'c'.repeat(8), ENCRYPTION_KEY: 'f00d'.repeat(16) };

function start(entry: string, env: Record<string, string | undefined>): Promise<{ code: number | null; stderr: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'production', ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete childEnv[k];
  // A port nobody listens on: should the check ever let it through, the process fails instead of serving.
  childEnv.DATABASE_URL = 'postgres://nobody:nothing@127.0.0.1:1/none';
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT_DIR, entry)], { env: childEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) => child.once('exit', (code) => (clearTimeout(timer), resolve({ code, stderr }))));
}

describe('production secrets', () => {
  it.each([
    ['api/main.ts', { SERVER_SECRET: undefined }, 'SERVER_SECRET is not set'],
    ['api/main.ts', { ENCRYPTION_KEY: DEV_SECRETS.ENCRYPTION_KEY }, 'ENCRYPTION_KEY is a known development value'],
    ['worker/main.ts', { SERVER_SECRET: 'change-me' }, 'SERVER_SECRET is a known development value'],
    ['worker/main.ts', { ENCRYPTION_KEY: 'short-but-not-a-dev-value' }, 'ENCRYPTION_KEY is too short (25 characters; at least 32)'],
  ])('%s exits non-zero naming the variable (%o)', async (entry, override, message) => {
    const res = await start(entry, { ...STRONG, ...override });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`refusing to start with NODE_ENV=production: ${message}`);
  });

  it('names every problem; nothing outside production; strong distinct secrets pass', () => {
    expect(productionSecretProblems({ NODE_ENV: 'production' })).toEqual(['SERVER_SECRET is not set', 'ENCRYPTION_KEY is not set']);
    expect(productionSecretProblems({ NODE_ENV: 'production', ...DEV_SECRETS })).toEqual(['SERVER_SECRET is a known development value', 'ENCRYPTION_KEY is a known development value']);
    expect(productionSecretProblems({ NODE_ENV: 'production', SERVER_SECRET: 'Change-Me-'.repeat(5), ENCRYPTION_KEY: STRONG.ENCRYPTION_KEY })).toEqual(['SERVER_SECRET is a known development value']);
    expect(productionSecretProblems({ NODE_ENV: 'production', SERVER_SECRET: STRONG.ENCRYPTION_KEY, ENCRYPTION_KEY: STRONG.ENCRYPTION_KEY })).toEqual(['ENCRYPTION_KEY must differ from SERVER_SECRET']);
    expect(productionSecretProblems({ NODE_ENV: 'production', ...STRONG })).toEqual([]);
    expect(productionSecretProblems({ NODE_ENV: 'development' })).toEqual([]);
    expect(productionSecretProblems({})).toEqual([]);
  });
});
