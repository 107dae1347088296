/**
 * Issue 31 item 4: with OTEL_EXPORTER_OTLP_ENDPOINT set, one bulk upsert request is one trace at a
 * (fake) OTLP collector: the API's HTTP server span, the workflow start, the workflow run, its
 * activities, the SQL statements of the API and of the activities, and the activity's outbound
 * webhook call. The API and the worker are real processes started as in production (their entry
 * points start tracing before anything loads pg or http). Spans carry no personal data: no email
 * sent in the request, no query string.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { startOtlpCollector, type OtlpCollector, type ReceivedSpan } from '../fakes/otlpCollector.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhookReceiver.js';

let collector: OtlpCollector;
let receiver: WebhookReceiver;
let app: TestApp;
let api: { url: string; stop(): Promise<void> };
beforeAll(async () => {
  collector = await startOtlpCollector();
  receiver = await startWebhookReceiver();
  app = await startTestApp({ workerMode: 'process', env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100' } });
  api = await app.startApiProcess();
}, 180_000);
afterAll(async () => {
  await api?.stop();
  await app?.close();
  await receiver?.close();
  await collector?.close();
});

const call = async (method: string, path: string, apiKey: string, body?: unknown) => {
  const res = await fetch(api.url + path, { method, headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (await res.json()) as any };
};

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 200))) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not seen in ${timeoutMs} ms (${collector.spans.length} spans received: ${[...new Set(collector.spans.map((s) => s.name))].join(', ')})`);
  }
}

it('a bulk upsert is one trace: HTTP, workflow start, workflow, activities, SQL and the outbound webhook', async () => {
  const ws = await app.createWorkspace();
  const src = await call('POST', '/sources', ws.apiKey, { sourceType: 'importFromWebhook', sourceIdentifier: `trace-${Date.now()}` });
  expect(src.status, JSON.stringify(src.body)).toBe(200);
  const marker = `tr${Math.random().toString(36).slice(2, 10)}`;
  const rows = Array.from({ length: 5 }, (_, i) => ({ 'contact.firstName': `${marker}name${i}`, 'contact.workEmail': `${marker}${i}@trace.example.com` }));
  const res = await call('POST', `/contacts/${src.body.data.id}/bulk-upsert-contacts`, ws.apiKey, { contactsData: rows, webhookConfiguration: { url: receiver.url } });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect((await app.waitForJob(res.body.jobId, ws.apiKey, 60_000)).jobStatus).toBe('completed');
  await receiver.waitFor((b) => JSON.stringify(b).includes(res.body.jobId), 30_000);

  const path = `/contacts/${src.body.data.id}/bulk-upsert-contacts`;
  const root = await until('the API server span', () => collector.spans.find((s) => s.service === 'contact-data-api' && s.kind === 2 && s.attributes['http.target'] === path));
  const inTrace = () => collector.spans.filter((s) => s.traceId === root.traceId);
  const has = (s: ReceivedSpan[], test: (s: ReceivedSpan) => boolean) => s.some(test);
  const trace = await until('the whole trace', () => {
    const t = inTrace();
    const complete =
      has(t, (s) => s.service === 'contact-data-api' && s.name.startsWith('StartWorkflow:')) &&
      has(t, (s) => s.service === 'contact-data-worker' && s.name.startsWith('RunWorkflow:')) &&
      has(t, (s) => s.service === 'contact-data-worker' && s.name.startsWith('RunActivity:')) &&
      has(t, (s) => s.service === 'contact-data-worker' && s.attributes['db.system'] === 'postgresql') &&
      has(t, (s) => s.service === 'contact-data-api' && s.attributes['db.system'] === 'postgresql') &&
      has(t, (s) => s.service === 'contact-data-worker' && s.kind === 3 && String(s.attributes['http.url']).startsWith(receiver.url.replace(/\/hooks$/, '')));
    return complete ? t : undefined;
  });

  // One tree: every span but the root has its parent in this trace, and the SQL of the
  // activities hangs below an activity span, itself below the workflow run.
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  expect(trace.filter((s) => s !== root && !byId.has(s.parentSpanId!)).map((s) => s.name)).toEqual([]);
  const ancestors = (s: ReceivedSpan) => {
    const names: string[] = [];
    for (let p = byId.get(s.parentSpanId!); p; p = byId.get(p.parentSpanId!)) names.push(p.name);
    return names;
  };
  const workerSql = trace.find((s) => s.service === 'contact-data-worker' && s.attributes['db.system'] === 'postgresql')!;
  expect(ancestors(workerSql).some((n) => n.startsWith('RunActivity:'))).toBe(true);
  expect(ancestors(workerSql).some((n) => n.startsWith('RunWorkflow:'))).toBe(true);
  expect(ancestors(workerSql).at(-1)).toBe(root.name);
  // The server span is named by its route template, not the raw path.
  expect(root.name).toBe('POST /contacts/{sourceId}/bulk-upsert-contacts');

  // No personal data in any span, whatever the service.
  expect(collector.spans.filter((s) => JSON.stringify(s).includes(marker)).map((s) => s.name)).toEqual([]);
  expect(collector.rejected).toEqual([]);
});

it('a URL query string is not recorded', async () => {
  const ws = await app.createWorkspace();
  const secret = `q${Math.random().toString(36).slice(2, 10)}`;
  await call('GET', `/jobs/00000000-0000-7000-8000-000000000000?probe=${secret}`, ws.apiKey);
  const span = await until('the GET span', () => collector.spans.find((s) => s.kind === 2 && String(s.attributes['http.target']).startsWith('/jobs/00000000-0000-7000-8000-000000000000')));
  expect(span.attributes['http.target']).toBe('/jobs/00000000-0000-7000-8000-000000000000');
  expect(collector.spans.filter((s) => JSON.stringify(s).includes(secret))).toEqual([]);
});
