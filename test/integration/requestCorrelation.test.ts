/**
 * Issue 31 item 4: the request id appears in every worker log line of the work it started. The
 * API's Temporal client puts it in a header of the workflow start; the workflow carries it to each
 * activity (and to its next run after continue-as-new); the activity interceptor puts it in the
 * log context. Lines are read from the inline worker's real logger (createLogger, as in
 * production), at debug so each activity's end is logged.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../telemetry/log.js';
import { startTestApp, type TestApp } from '../harness.js';

const lines: Record<string, unknown>[] = [];
const capture = new Writable({
  write(chunk, _enc, cb) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    cb();
  },
});

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ workerLog: createLogger({ svc: 'worker', level: 'debug' }, capture) });
});
afterAll(() => app?.close());

async function jobDone(apiKey: string, jobId: string) {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    const job = (await app.http('GET', `/jobs/${jobId}`, { apiKey })).body.data;
    if (!['queued', 'running'].includes(job.jobStatus)) return job;
  }
  throw new Error(`job ${jobId} unfinished`);
}

it('every worker log line of a bulk upsert names the request that started it', async () => {
  const ws = await app.createWorkspace();
  const src = await app.http('POST', '/sources', { apiKey: ws.apiKey, body: { sourceType: 'importFromWebhook', sourceIdentifier: `corr-${Date.now()}` } });
  expect(src.status, JSON.stringify(src.body)).toBe(200);
  const requestId = `corr-${Math.random().toString(36).slice(2)}`;
  const rows = Array.from({ length: 30 }, (_, i) => ({ 'contact.firstName': `C${i}`, 'contact.workEmail': `c${i}@corr.example.com` }));
  const res = await app.http('POST', `/contacts/${src.body.data.id}/bulk-upsert-contacts`, { apiKey: ws.apiKey, body: { contactsData: rows }, headers: { 'x-request-id': requestId } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect((await jobDone(ws.apiKey, res.body.jobId)).jobStatus).toBe('completed');

  const ofJob = lines.filter((l) => l.workflowId === `bulk-upsert-${res.body.jobId}`);
  expect(ofJob.length).toBeGreaterThan(0);
  expect(ofJob.filter((l) => l.msg === 'activity completed').length).toBeGreaterThan(0);
  expect(ofJob.filter((l) => l.requestId !== requestId)).toEqual([]);
  // ISO timestamps, level names, hostname and pid on every line.
  for (const l of ofJob) expect(l).toMatchObject({ level: 'debug', svc: 'worker', hostname: expect.any(String), pid: process.pid, time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/) });
  // Work another request started carries that one's id, not this one's.
  expect(lines.filter((l) => l.requestId === requestId && l.workflowId !== `bulk-upsert-${res.body.jobId}`)).toEqual([]);
});
