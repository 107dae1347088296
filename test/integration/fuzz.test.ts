/**
 * schemathesis against the real stack: every check it has (`positive_data_acceptance` with the
 * refusals scripts/fuzz_hooks.py excuses, each for its reason), all phases including the stateful
 * one, a second workspace as the peer of `object_level_authorization`. Any finding fails the test;
 * so does a worker process that is not the one that started (a crash the fuzzer caused).
 *
 * In `npm test` the seed is fixed and the run bounded. `npm run fuzz` (scripts/fuzz.ts) runs the
 * same test as a long campaign: FUZZ_CAMPAIGN=1, a random FUZZ_SEED, more examples per operation.
 * Focused runs: FUZZ_CHECKS=positive_data_acceptance, FUZZ_PATHS=<regex of paths> (e.g. `^/segments`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { pino } from 'pino';
import { ROOT_DIR } from '../../domain/config.js';
import { runSchemathesis } from '../../scripts/fuzz.js';
import { startTestApp, type TestApp } from '../harness.js';

const campaign = process.env.FUZZ_CAMPAIGN === '1';
const seed = Number(process.env.FUZZ_SEED ?? 20261122);
// CI: about a dozen cases per operation and phase keeps the run to a few minutes on 2 cores.
const maxExamples = Number(process.env.FUZZ_MAX_EXAMPLES ?? (campaign ? 100 : 12));
const timeoutMs = campaign ? 4 * 3600_000 : 15 * 60_000;

let app: TestApp;
/** Requests the API logged per workspace (its access log at info). */
const requestsByWorkspace = new Map<string, number>();
const accessLog = pino({ level: 'info' }, {
  write(line: string) {
    const entry = JSON.parse(line) as { msg?: string; workspaceId?: string };
    if (entry.msg === 'request' && entry.workspaceId) requestsByWorkspace.set(entry.workspaceId, (requestsByWorkspace.get(entry.workspaceId) ?? 0) + 1);
  },
});
beforeAll(async () => {
  // The worker runs as its own process so a crash the fuzzer causes shows as a changed pid.
  // The per-IP limit for keyless requests is lifted like the per-key one (the harness sets that):
  // the fuzzer sends thousands of keyless probes, and `ignored_auth` expects 401, not 429.
  // The operator's OAuth apps are configured, as in a deployment that offers connecting: without
  // them POST /integrations/oauth/authorize answers 400 `oauth_app_not_configured` to every valid
  // body (positive_data_acceptance). Authorizing only builds the consent URL; nothing is called.
  app = await startTestApp({
    workerMode: 'process',
    env: {
      ANON_RATE_LIMIT_PER_MINUTE: '1000000',
      OAUTH_REDIRECT_URL: 'https://app.example.com/integrations/oauth/callback',
      X_CLIENT_ID: 'fuzz-x', X_CLIENT_SECRET: 'fuzz-x-secret',
      LINKEDIN_CLIENT_ID: 'fuzz-li', LINKEDIN_CLIENT_SECRET: 'fuzz-li-secret',
    },
    apiLog: accessLog,
  });
});
afterAll(() => app?.close());

describe('schemathesis', () => {
  it('finds nothing, and no process dies', async () => {
    const owner = await app.createWorkspace({ name: 'Fuzz owner', plan: 'enterprise', credits: 1_000_000 });
    const peer = await app.createWorkspace({ name: 'Fuzz peer', plan: 'enterprise', credits: 1_000_000 });
    const workerBefore = app.workerProcess();
    expect(workerBefore?.alive).toBe(true);

    const result = await runSchemathesis({
      baseUrl: app.url,
      ownerKey: owner.apiKey,
      peerKey: peer.apiKey,
      seed,
      maxExamples,
      workers: campaign ? 2 : 1,
      workDir: join(ROOT_DIR, '.test-data', `schemathesis-${process.pid}`),
      echo: campaign || process.env.FUZZ_ECHO === '1',
      checks: process.env.FUZZ_CHECKS?.split(',').filter(Boolean),
      pathRegex: process.env.FUZZ_PATHS || undefined,
    });
    const summary = `schemathesis seed ${seed}: ${result.cases} cases, ${result.findings.length} findings, exit ${result.exitCode}`;
    console.log([summary, ...result.findings.map((f) => `  ${f}`)].join('\n'));
    // The console summary holds a curl reproduction of each failure.
    if (result.exitCode !== 0 && !campaign && process.env.FUZZ_ECHO !== '1') console.log(result.output.slice(-20_000));

    // Same worker process as before the run, still running; the API (this process) still answers.
    const workerAfter = app.workerProcess();
    expect(workerAfter).toEqual({ ...workerBefore, alive: true });
    expect((await app.http('GET', '/healthz')).status).toBe(200);

    expect(result.cases).toBeGreaterThan(0);
    // The peer's key was used (object_level_authorization replays the owner's reads as the peer).
    if (!campaign) expect(requestsByWorkspace.get(peer.workspaceId) ?? 0).toBeGreaterThan(0);
    expect(result.findings).toEqual([]);
    expect(result.exitCode).toBe(0);
  }, timeoutMs);
});
