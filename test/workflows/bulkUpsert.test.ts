/**
 * The bulk-upsert workflow (workflows/bulkUpsert.ts) on the time-skipping test server, with the
 * real ingest activities on this file's database: the window keeps PARALLEL_CHUNKS chunks in
 * flight and adds their totals in row order even when a later chunk finishes first, and a batch
 * longer than `chunksPerRun` chunks continues as new with its running totals until the last run
 * reports the whole batch.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Context } from '@temporalio/activity';
import { v7 as uuidv7 } from 'uuid';
import { startTestApp, type TestApp } from '../harness.js';
import { startTimeSkipping, type TimeSkippingWorld } from './timeSkipping.js';
import { stageRows } from '../../db/contactStaging.js';
import { PARALLEL_CHUNKS, bulkUpsertContactsWorkflow } from '../../workflows/bulkUpsert.js';
import type { Activities } from '../../activities/index.js';

let app: TestApp;
let world: TimeSkippingWorld;

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
  world = await startTimeSkipping(app);
});
afterAll(async () => {
  await world?.teardown();
  await app?.close();
});

it('ingests a window of chunks in row order and continues as new with its totals', async () => {
  const ws = await app.createWorkspace();
  const src = await app.http('POST', '/sources', {
    apiKey: ws.apiKey,
    body: { sourceType: 'importFromWebhook', sourceIdentifier: `window-${uuidv7()}`, sourceMeta: { config: { fieldMapping: [{ sourceFieldName: 'Email', targetFieldName: 'contact.workEmail' }] } } },
  });
  expect(src.status, JSON.stringify(src.body)).toBe(200);
  const totalRows = 23;
  const chunkSize = 5;
  const chunksPerRun = 2;
  const batchId = uuidv7();
  await stageRows(app.pool, batchId, Array.from({ length: totalRows }, (_, i) => ({ Email: `row-${i}@window.example` })));

  const runs = new Set<string>();
  const finished: number[] = [];
  let inflight = 0;
  let maxInflight = 0;
  const ingestStagedChunk: Activities['ingestStagedChunk'] = async (input) => {
    runs.add(Context.current().info.workflowExecution!.runId);
    maxInflight = Math.max(maxInflight, ++inflight);
    try {
      // The first chunk of each pair answers last, so the window sees a later chunk finish first.
      if ((input.from / chunkSize) % 2 === 0) await new Promise((r) => setTimeout(r, 400));
      return await world.real.ingestStagedChunk(input);
    } finally {
      inflight--;
      finished.push(input.from);
    }
  };

  const jobId = uuidv7();
  const result = await world.withWorkers({ ingestStagedChunk }, async () => {
    const handle = await world.env.client.workflow.start(bulkUpsertContactsWorkflow, {
      workflowId: `bulk-upsert-${jobId}`,
      taskQueue: world.taskQueue,
      args: [{ sourceId: src.body.data.id, batchId, totalRows, chunkSize, chunksPerRun, jobId, workspaceId: ws.workspaceId, jobType: 'bulk-upsert', webhook: null }],
    });
    return handle.result();
  });

  expect(result.jobResponsePayload).toMatchObject({ sourceId: src.body.data.id, totalRows, processedRows: totalRows, created: totalRows, updated: 0, failed: 0, errors: [] });
  expect(result.progress).toEqual({ completed: totalRows, total: totalRows, percent: 100 });
  // 23 rows, 2 chunks of 5 per run: [0, 10), [10, 20), [20, 23).
  expect(runs.size).toBe(3);
  expect(maxInflight).toBe(PARALLEL_CHUNKS);
  expect(finished.indexOf(5)).toBeLessThan(finished.indexOf(0));
  expect([...finished].sort((a, b) => a - b)).toEqual([0, 5, 10, 15, 20]);

  const contacts = await app.pool.query<{ n: number }>(`select count(*)::int as n from contacts where workspace_id = $1`, [ws.workspaceId]);
  expect(contacts.rows[0]!.n).toBe(totalRows);
  const staged = await app.pool.query<{ n: number }>(`select count(*)::int as n from contact_ingest_staging where batch_id = $1`, [batchId]);
  expect(staged.rows[0]!.n).toBe(0);
});
