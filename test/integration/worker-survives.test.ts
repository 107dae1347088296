/**
 * No input an activity gets can end the worker process. The worker runs as a child process
 * (`workerMode: 'process'`); each case hands an activity something hostile and then checks that
 * the same child is still running and that later jobs still complete.
 *
 * Webhook headers HTTP cannot carry (issue 11): the API refuses them, so the job is started here
 * through the job path itself (`startJob`), as a job accepted before that validation existed
 * would run. `lib.request` throws synchronously for them; the delivery used to leave its 10 s
 * deadline timer armed, which then touched the uninitialised request and killed the worker.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJob } from '../../api/jobs.js';
import { loadEnrichmentConfig, planEnrichment } from '../../domain/enrichment.js';
import type { EnrichmentWorkflowInput } from '../../workflows/enrichment.js';
import { startTestApp, type TestApp } from '../harness.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let app: TestApp;
let ws: { workspaceId: string; apiKey: string };
let hooks: { url: string; received: string[]; server: Server };
let workerPid: number | undefined;

beforeAll(async () => {
  const received: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.url ?? '');
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hooks = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
  app = await startTestApp({ workerMode: 'process' });
  ws = await app.createWorkspace({ credits: 1000 });
  workerPid = app.workerProcess()?.pid;
  expect(workerPid).toBeTypeOf('number');
}, 60_000);

afterAll(async () => {
  await app?.close();
  hooks?.server.close();
});

/** The worker child is the one that started and it is still running. */
function expectWorkerAlive() {
  const w = app.workerProcess();
  expect(w, 'worker child process').not.toBeNull();
  expect({ pid: w!.pid, alive: w!.alive, exitCode: w!.exitCode, signal: w!.signal }).toEqual({ pid: workerPid, alive: true, exitCode: null, signal: null });
}

/** An enrichment job (dataset provider only) started through the job path, bypassing API validation. */
async function enrichmentJob(webhook: { url: string; headers?: Record<string, string> } | null): Promise<string> {
  const plan = planEnrichment(
    { fields: ['basic_contact_data'], pronet: `https://www.pronet.example/in/nobody-${randomBytes(4).toString('hex')}/` } as never,
    loadEnrichmentConfig(app.config.rootDir, app.config.env),
  );
  const args: EnrichmentWorkflowInput = { plan, billable: true };
  const accepted = await startJob(app.deps, { workspaceId: ws.workspaceId, type: 'enrichment', workflowType: 'enrichmentWorkflow', args, webhook });
  return accepted.jobId;
}

async function deliveries(jobId: string) {
  const r = await app.pool.query<{ attempt: number; status_code: number | null; error: string | null }>(
    `select attempt, status_code, error from webhook_deliveries where job_id = $1 order by attempt`,
    [jobId],
  );
  return r.rows;
}

async function waitForDelivery(jobId: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await deliveries(jobId);
    if (rows.length) return rows;
    if (Date.now() > deadline) throw new Error(`no webhook delivery recorded for job ${jobId}`);
    await sleep(100);
  }
}

describe('webhook headers HTTP cannot carry', () => {
  it('fail the delivery once, without a retry, and the worker lives on', async () => {
    const hostile: Array<Record<string, string>> = [
      { 'bad name': 'x' },
      { 'x-crlf': 'a\r\nx-injected: 1' },
      { 'x-snowman': 'caf\u00e9 \u2603' },
      { 'x-nul': 'a\u0000b' },
    ];
    const jobs: string[] = [];
    for (const [i, headers] of hostile.entries()) jobs.push(await enrichmentJob({ url: `${hooks.url}/hostile-${i}`, headers }));
    for (const jobId of jobs) {
      const job = await app.waitForJob(jobId, ws.apiKey, 30_000);
      expect(job.jobStatus, JSON.stringify(job)).toBe('completed');
      const rows = await waitForDelivery(jobId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ attempt: 1, status_code: null });
      expect(rows[0]!.error).toMatch(/header/i);
    }
    // The old deadline timer fired 10 s after the request; a retry would come 5 s after the failure.
    await sleep(11_500);
    expectWorkerAlive();
    for (const jobId of jobs) expect(await deliveries(jobId)).toHaveLength(1);
    expect(hooks.received.filter((u) => u.startsWith('/hostile-'))).toEqual([]);

    // Later jobs still run and their webhooks still arrive.
    const after = await enrichmentJob({ url: `${hooks.url}/after`, headers: { 'x-fine': 'yes' } });
    expect((await app.waitForJob(after, ws.apiKey, 30_000)).jobStatus).toBe('completed');
    expect(await waitForDelivery(after)).toEqual([{ attempt: 1, status_code: 204, error: null }]);
    expect(hooks.received).toContain('/after');
    expectWorkerAlive();
  }, 90_000);
});
