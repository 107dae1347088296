/**
 * Issue 12, output shapes: each answer checked through HTTP on the real stack against what the
 * contract (API-SPEC, DESIGN §3) says — discovery profile URLs and emails, people values on
 * company search items, honest job progress, one contact shape everywhere, and cloning the
 * default segment.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDataset } from '../../db/datasetImport.js';
import { startTestApp, type TestApp } from '../harness.js';

let app: TestApp;
let key: string;

beforeAll(async () => {
  app = await startTestApp();
  key = (await app.createWorkspace({ credits: 1_000_000 })).apiKey;
});
afterAll(() => app?.close());

const post = (path: string, body: unknown, k = key) => app.http('POST', path, { apiKey: k, body });
const get = (path: string, k = key) => app.http('GET', path, { apiKey: k });

describe('cloning the default segment (item 12)', () => {
  it('is a 409 naming the reason; a workflowOnly clone copies its workflows', async () => {
    const segments = (await get('/segments/search?q=')).body.data as { id: string; attributes: { isDefault: boolean } }[];
    const def = segments.find((s) => s.attributes.isDefault)!;
    expect(def).toBeTruthy();
    const res = await post(`/segments/${def.id}/clone`, {});
    expect(res.status, JSON.stringify(res.body)).toBe(409);
    expect(res.body.error.code).toBe('default_segment_not_cloneable');
    expect(res.body.error.message).toMatch(/every contact/);
    const wf = await post(`/segments/${def.id}/clone`, { workflowOnly: true, name: 'Automations of all contacts' });
    expect(wf.status, JSON.stringify(wf.body)).toBe(200);
    expect(wf.body.data.attributes).toMatchObject({ name: 'Automations of all contacts', clonedFrom: def.id, isDefault: false, segmentSources: [], conditions: [] });
  });
});

describe('job progress (item 4)', () => {
  const MAPPING = [{ sourceFieldName: 'Email', targetFieldName: 'contact.workEmail' }];

  it('a finished job reports its real final progress (rows), not 1 of 1', async () => {
    const src = await post('/sources', { sourceType: 'importFromWebhook', sourceIdentifier: `progress-${uuidv7()}`, sourceMeta: { config: { fieldMapping: MAPPING } } });
    expect(src.status, JSON.stringify(src.body)).toBe(200);
    const rows = Array.from({ length: 7 }, (_, i) => ({ Email: `row-${i}@progress.example` }));
    const accepted = await post(`/contacts/${src.body.data.id}/bulk-upsert-contacts`, { contactsData: rows });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const done = await app.waitForJob(accepted.body.jobId, key);
    expect(done.jobStatus).toBe('completed');
    expect(done.progress).toEqual({ completed: 7, total: 7, percent: 100 });
    expect(done.progressUnknownReason).toBeNull();
    expect(done.jobResponsePayload).toMatchObject({ totalRows: 7, processedRows: 7, created: 7 });
  });

  it('says progress is unknown (null, with a reason) when no worker answers the status query', async () => {
    const ws = await app.createWorkspace();
    const jobId = uuidv7();
    const workflowId = `bulk-upsert-${jobId}`;
    await app.pool.query(`insert into jobs (id, workspace_id, type, workflow_id) values ($1, $2, 'bulk-upsert', $3)`, [jobId, ws.workspaceId, workflowId]);
    // a task queue no worker polls: the workflow exists and runs, nobody can answer for it
    const handle = await app.deps.temporal.workflow.start('bulkUpsertContactsWorkflow', {
      workflowId,
      taskQueue: `nobody-polls-${jobId}`,
      args: [{ sourceId: uuidv7(), batchId: uuidv7(), totalRows: 5, jobId, workspaceId: ws.workspaceId, jobType: 'bulk-upsert', webhook: null }],
    });
    try {
      const res = await get(`/jobs/${jobId}`, ws.apiKey);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.jobStatus).toBe('queued');
      expect(res.body.data.progress).toBeNull();
      expect(res.body.data.progressUnknownReason).toMatch(/no worker/i);
    } finally {
      await handle.terminate('test done');
    }
  });

  it('a job whose workflow ended before results carried progress says so instead of inventing one', async () => {
    const ws = await app.createWorkspace();
    const jobId = uuidv7();
    // sourceRefreshWorkflow returns a plain result, as job workflows did before (unknown source: skipped)
    const workflowId = `legacy-result-${jobId}`;
    await app.pool.query(`insert into jobs (id, workspace_id, type, workflow_id) values ($1, $2, 'source-pull', $3)`, [jobId, ws.workspaceId, workflowId]);
    await app.deps.temporal.workflow.execute('sourceRefreshWorkflow', {
      workflowId,
      taskQueue: app.config.temporal.taskQueue,
      args: [{ workspaceId: ws.workspaceId, sourceId: uuidv7() }],
    });
    const res = await get(`/jobs/${jobId}`, ws.apiKey);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ jobStatus: 'completed', progress: null, jobResponsePayload: { jobId: null, jobStatus: 'skipped' } });
    expect(res.body.data.progressUnknownReason).toMatch(/final progress/);
  });
});
