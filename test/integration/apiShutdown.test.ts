/**
 * Readiness-first shutdown (issue 31): on SIGTERM the API fails /readyz at once but keeps
 * accepting and serving new connections for SHUTDOWN_DELAY_MS, so a load balancer that follows
 * readiness (a Kubernetes Service) stops routing to it before it refuses anything; then it drains
 * and exits 0. Before, it refused new connections at once: requests routed to it in the seconds
 * the balancer needed to notice got connection errors (502s).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
});
afterAll(async () => app?.close());

describe('API shutdown', () => {
  it('SIGTERM: /readyz 503 at once, new connections still served during SHUTDOWN_DELAY_MS, then exit 0', async () => {
    const ws = await app.createWorkspace({ credits: 7 });
    const api = await app.startApiProcess({ SHUTDOWN_DELAY_MS: '2500' });
    expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
    const signalledAt = Date.now();
    process.kill(api.pid, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    const ready = await fetch(`${api.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as any).checks.shutdown).toMatchObject({ ok: false });
    // New connections (no keep-alive reuse: a fresh agent per request) are served during the delay.
    let served = 0;
    while (Date.now() - signalledAt < 2000) {
      const res = await fetch(`${api.url}/credits/balance`, { headers: { 'x-api-key': ws.apiKey, connection: 'close' } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).data.balance).toBe(7);
      served++;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(served).toBeGreaterThan(5);
    // Then it drains and stops: new connections are refused.
    const deadline = Date.now() + 10_000;
    let refused = false;
    while (!refused && Date.now() < deadline) {
      refused = await fetch(`${api.url}/healthz`).then(() => false, () => true);
      if (!refused) await new Promise((r) => setTimeout(r, 100));
    }
    expect(refused).toBe(true);
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(2500);
    await api.stop();
  }, 60_000);
});
