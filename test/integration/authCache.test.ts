/**
 * Keys are cached per API process; a change to a key or workspace row reaches every process
 * through the `auth_changed` NOTIFY trigger. Two API processes on one database: the test's own
 * (in-process) and a child process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';

let app: TestApp;
let other: Awaited<ReturnType<TestApp['startApiProcess']>>;
beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
  other = await app.startApiProcess();
}, 60_000);
afterAll(async () => {
  await other?.stop();
  await app?.close();
});

const balance = async (baseUrl: string, apiKey: string) => (await fetch(`${baseUrl}/credits/balance`, { headers: { 'x-api-key': apiKey } })).status;

/** Polls until `baseUrl` answers 401 for the key; the time it took (ms). */
async function msUntilRefused(baseUrl: string, apiKey: string, since: number, limitMs = 5000): Promise<number> {
  for (;;) {
    const status = await balance(baseUrl, apiKey);
    const elapsed = performance.now() - since;
    if (status === 401) return elapsed;
    expect(status).toBe(200);
    if (elapsed > limitMs) throw new Error(`still ${status} after ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Both processes know (and have cached) the key. */
async function warm(apiKey: string) {
  for (let i = 0; i < 3; i++) {
    expect(await balance(app.url, apiKey)).toBe(200);
    expect(await balance(other.url, apiKey)).toBe(200);
  }
}

const listenerBackends = async () =>
  (await app.pool.query<{ pid: number }>(`select pid from pg_stat_activity where datname = current_database() and application_name = 'listen:auth_changed'`)).rows.map((r) => r.pid);

describe('API key cache across API processes', () => {
  it('a key revoked by a plain row update (as the admin CLI does) gets 401 within a second on the other process', async () => {
    const ws = await app.createWorkspace();
    await warm(ws.apiKey);
    const t0 = performance.now();
    await app.pool.query(`update api_keys set revoked_at = now() where workspace_id = $1`, [ws.workspaceId]);
    const [onOther, onOwn] = await Promise.all([msUntilRefused(other.url, ws.apiKey, t0), msUntilRefused(app.url, ws.apiKey, t0)]);
    expect(onOther).toBeLessThan(1000);
    expect(onOwn).toBeLessThan(1000);
  });

  it('a deleted workspace takes its keys with it on every process', async () => {
    const ws = await app.createWorkspace();
    const user = await app.createApiKey(ws.workspaceId, 'user');
    await warm(ws.apiKey);
    await warm(user);
    const t0 = performance.now();
    await app.pool.query(`delete from workspaces where id = $1`, [ws.workspaceId]);
    expect(await msUntilRefused(other.url, user, t0)).toBeLessThan(1000);
    expect(await msUntilRefused(other.url, ws.apiKey, t0)).toBeLessThan(1000);
  });

  it('while the LISTEN connection is down nothing stale is served, and it comes back', async () => {
    const ws = await app.createWorkspace();
    await warm(ws.apiKey);
    const before = await listenerBackends();
    expect(before.length).toBe(2); // one per API process
    // Both listeners lose their connection; the key is revoked before they can reconnect.
    await app.pool.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = 'listen:auth_changed'`);
    const t0 = performance.now();
    await app.pool.query(`update api_keys set revoked_at = now() where key_hash = encode(sha256($1::bytea), 'hex')`, [ws.apiKey]);
    expect(await msUntilRefused(other.url, ws.apiKey, t0)).toBeLessThan(1000);
    expect(await msUntilRefused(app.url, ws.apiKey, t0)).toBeLessThan(1000);
    // Both reconnect (backoff starts at 0.25 s) and notifications flow again.
    const deadline = performance.now() + 10_000;
    let after: number[] = [];
    while (performance.now() < deadline) {
      after = await listenerBackends();
      if (after.length === 2 && after.every((pid) => !before.includes(pid))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(after.length).toBe(2);
    expect(after.some((pid) => before.includes(pid))).toBe(false);
    const next = await app.createWorkspace();
    await warm(next.apiKey);
    const t1 = performance.now();
    await app.pool.query(`update api_keys set revoked_at = now() where workspace_id = $1`, [next.workspaceId]);
    expect(await msUntilRefused(other.url, next.apiKey, t1)).toBeLessThan(1000);
  });
});

describe('rate limit without a database write per request', () => {
  it('one API process admits the per-key limit, then 429 with Retry-After and RateLimit-* (several: replicaRateLimit.test.ts)', async () => {
    const limited = await startTestApp({ workerMode: 'none', rateLimitPerMinute: 6 });
    try {
      const ws = await limited.createWorkspace();
      const responses = [];
      for (let i = 0; i < 7; i++) responses.push(await limited.http('GET', '/credits/balance', { apiKey: ws.apiKey }));
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200, 429]);
      expect(responses.map((r) => r.headers.get('ratelimit-remaining'))).toEqual(['5', '4', '3', '2', '1', '0', '0']);
      const refused = responses[6]!;
      expect(refused.body.error.code).toBe('rate_limited');
      expect(refused.headers.get('ratelimit-limit')).toBe('6');
      const retry = Number(refused.headers.get('retry-after'));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(60);
      expect(refused.headers.get('ratelimit-reset')).toBe(String(retry));
      // No row is written per request any more: the windows table is gone.
      const table = await limited.pool.query(`select to_regclass('rate_limit_windows') as t`);
      expect(table.rows[0].t).toBeNull();
    } finally {
      await limited.close();
    }
  });
});
