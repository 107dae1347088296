/**
 * Media import and chunk assembly run as workflows on the worker, the request waiting for them
 * within MEDIA_REQUEST_DEADLINE_MS (api/mediaWorkflows.ts); media retention removes old chunks
 * never assembled and old uploads no post references (mediaRetentionWorkflow, its Schedule
 * created by worker/schedules.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { ScheduleNotFoundError } from '@temporalio/client';
import { startTestApp, type TestApp } from '../harness.js';
import { mediaRetentionWorkflow } from '../../workflows/mediaRetention.js';
import { ensureMediaRetentionSchedule, mediaRetentionScheduleId } from '../../worker/schedules.js';

const DEADLINE_MS = 2_000;
/** How long the slow file server holds its answer: past the request deadline, well within the download's 60 s. */
const SLOW_MS = 5_000;

let app: TestApp;
let server: Server;
let serverUrl: string;
const requests: string[] = [];

/** A GIF89a header and filler: an allowed image type. */
const gif = () => Buffer.concat([Buffer.from('GIF89a', 'latin1'), randomBytes(2000)]);
const GIF = gif();

beforeAll(async () => {
  app = await startTestApp({ env: { MEDIA_REQUEST_DEADLINE_MS: String(DEADLINE_MS), MEDIA_RETENTION_HOURS: '24' } });
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const answer = () => res.writeHead(200, { 'content-type': 'image/gif', 'content-length': GIF.length }).end(GIF);
    if (req.url?.startsWith('/slow')) setTimeout(answer, SLOW_MS);
    else answer();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  serverUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await app?.close();
});

async function objectsOf(workspaceId: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of app.deps.storage.client.listObjectsV2(app.deps.storage.bucket, `${workspaceId}/`, true)) out.push((o as { name: string }).name);
  return out.sort();
}

/** The id of the workspace's one workflow of `type` (the API derives it; visibility finds it by search attribute). */
async function workflowIdOf(type: string, workspaceId: string): Promise<string> {
  for (let i = 0; i < 50; i++) {
    for await (const w of app.deps.temporal.workflow.list({ query: `WorkflowType = '${type}' AND WorkspaceId = '${workspaceId}'` })) return w.workflowId;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no ${type} of workspace ${workspaceId}`);
}

async function mediaRows(workspaceId: string): Promise<string[]> {
  const r = await app.pool.query<{ file_name: string }>(`select file_name from media_objects where workspace_id = $1 order by file_name`, [workspaceId]);
  return r.rows.map((x) => x.file_name);
}

describe('media import past the request deadline', () => {
  it('answers 504 media_deadline_exceeded; the same key then receives the one import, which ran once', async () => {
    const ws = await app.createWorkspace();
    const url = `${serverUrl}/slow/a.gif`;
    const headers = { 'idempotency-key': `slow-${randomUUID()}` };
    const started = Date.now();
    const first = await app.http('POST', '/v1/media/import-from-url', { apiKey: ws.apiKey, body: { url }, headers });
    expect(first.status, JSON.stringify(first.body)).toBe(504);
    expect(first.body.error.code).toBe('media_deadline_exceeded');
    expect(first.body.error.message).toMatch(/same Idempotency-Key/);
    expect(first.headers.get('retry-after')).toBe('5');
    expect(Date.now() - started).toBeLessThan(SLOW_MS);

    // The same request again attaches to the running import and answers its result.
    let second;
    do second = await app.http('POST', '/v1/media/import-from-url', { apiKey: ws.apiKey, body: { url }, headers });
    while (second.status === 504);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body).toMatchObject({ contentType: 'image/gif', fileSizeInBytes: GIF.length });
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    const third = await app.http('POST', '/v1/media/import-from-url', { apiKey: ws.apiKey, body: { url }, headers });
    expect(third.headers.get('idempotent-replayed')).toBe('true');
    expect(third.body.fileName).toBe(second.body.fileName);

    // One download, one object, one row.
    expect(requests.filter((r) => r === '/slow/a.gif')).toHaveLength(1);
    expect(await objectsOf(ws.workspaceId)).toEqual([second.body.fileName]);
    expect(await mediaRows(ws.workspaceId)).toEqual([second.body.fileName]);
    await app.recordHistory(await workflowIdOf('mediaImportWorkflow', ws.workspaceId), 'mediaImport/past-deadline');
  });

  it('without a key says the result cannot be fetched; the import still completes', async () => {
    const ws = await app.createWorkspace();
    const r = await app.http('POST', '/v1/media/import-from-url', { apiKey: ws.apiKey, body: { url: `${serverUrl}/slow/b.gif` } });
    expect(r.status).toBe(504);
    expect(r.body.error.code).toBe('media_deadline_exceeded');
    expect(r.body.error.message).toMatch(/without an Idempotency-Key/);
    expect(r.headers.get('retry-after')).toBeNull();
    const deadline = Date.now() + 30_000;
    while ((await mediaRows(ws.workspaceId)).length === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 250));
    expect(await mediaRows(ws.workspaceId)).toHaveLength(1);
  });
});

describe('chunk assembly', () => {
  it('assembles chunks on the worker and refuses a type that does not match the extension', async () => {
    const ws = await app.createWorkspace();
    const fd = new FormData();
    fd.append('file', new Blob([new Uint8Array(GIF)]), 'part-1');
    const chunk = await app.http('POST', '/v1/media/upload?chunk=true', { apiKey: ws.apiKey, rawBody: fd });
    const chunks = [{ fileName: chunk.body.fileName, chunkNumber: 1 }];
    // This file's deadline is short (2 s): a cold worker may miss it; the same key then collects the result.
    const assemble = async (fileExtension: string) => {
      const headers = { 'idempotency-key': `assemble-${randomUUID()}` };
      let r;
      do r = await app.http('POST', '/v1/media/assemble-chunks', { apiKey: ws.apiKey, body: { chunks, fileExtension }, headers });
      while (r.status === 504);
      return r;
    };
    const wrong = await assemble('png');
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatchObject({
      code: 'file_extension_mismatch',
      message: '/fileExtension: the chunks hold image/gif, which is stored as .gif, not .png',
      details: [{ path: '/fileExtension', message: 'does not match the detected type image/gif' }],
    });
    const ok = await assemble('gif');
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ contentType: 'image/gif', fileSizeInBytes: GIF.length });
    expect(await objectsOf(ws.workspaceId)).toEqual([ok.body.fileName]);
    const runs = [];
    for await (const w of app.deps.temporal.workflow.list({ query: `WorkflowType = 'mediaAssemblyWorkflow' AND WorkspaceId = '${ws.workspaceId}'` })) runs.push(w);
    expect(new Set(runs.map((w) => w.status.name))).toEqual(new Set(['COMPLETED', 'FAILED']));
    await app.recordHistory(runs.find((w) => w.status.name === 'COMPLETED')!.workflowId, 'mediaAssembly/assembled');
    await app.recordHistory(runs.find((w) => w.status.name === 'FAILED')!.workflowId, 'mediaAssembly/refused');
  });
});

describe('media retention', () => {
  async function upload(apiKey: string, query = ''): Promise<string> {
    const fd = new FormData();
    fd.append('file', new Blob([new Uint8Array(gif())], { type: 'image/gif' }), 'a.gif');
    const r = await app.http('POST', `/v1/media/upload${query}`, { apiKey, rawBody: fd });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.fileName;
  }
  const age = (fileName: string, hours: number) => app.pool.query(`update media_objects set created_at = now() - make_interval(hours => $2) where file_name = $1`, [fileName, hours]);

  it('removes old chunks never assembled and old uploads no post references; keeps recent and referenced ones', async () => {
    const ws = await app.createWorkspace();
    const other = await app.createWorkspace();
    const integration = await app.http('POST', '/integrations', { apiKey: ws.apiKey, body: { provider: 'microblog', name: 'x', externalAccountId: 'x-1', credentials: { accessToken: 't' } } });
    expect(integration.status).toBe(200);

    const oldChunk = await upload(ws.apiKey, '?chunk=true');
    const newChunk = await upload(ws.apiKey, '?chunk=true');
    const oldUnused = await upload(ws.apiKey);
    const newUnused = await upload(ws.apiKey);
    const [inMedia, inArticle, inThread] = [await upload(ws.apiKey), await upload(ws.apiKey), await upload(ws.apiKey)];
    // Referenced by a post of another workspace only: not a reference (file names are per workspace).
    const foreignOnly = await upload(ws.apiKey);
    const draft = await app.http('POST', '/v1/posts', {
      apiKey: ws.apiKey,
      body: {
        providerId: integration.body.data.id,
        content: 'keeps its media',
        media: [{ fileName: inMedia }],
        articles: [{ fileName: inArticle, title: 'Deck' }],
        threadItems: [{ content: 'second', media: [{ fileName: inThread }] }],
      },
    });
    expect(draft.status, JSON.stringify(draft.body)).toBe(200);
    const otherIntegration = await app.http('POST', '/integrations', { apiKey: other.apiKey, body: { provider: 'microblog', name: 'y', externalAccountId: 'y-1', credentials: { accessToken: 't' } } });
    await app.pool.query(
      `insert into posts (id, workspace_id, provider_id, status, content, media) values (gen_random_uuid(), $1, $2, 'draft', 'other', $3)`,
      [other.workspaceId, otherIntegration.body.data.id, JSON.stringify([{ fileName: foreignOnly }])],
    );
    for (const f of [oldChunk, oldUnused, inMedia, inArticle, inThread, foreignOnly]) await age(f, 25);
    await age(newChunk, 23);
    await age(newUnused, 23);

    const sweepId = `media-retention-test-${randomUUID()}`;
    const counts = await app.deps.temporal.workflow.execute(mediaRetentionWorkflow, { taskQueue: app.config.temporal.taskQueue, workflowId: sweepId });
    expect(counts).toEqual({ chunks: 1, uploads: 2 });
    await app.recordHistory(sweepId, 'mediaRetention/sweep');
    const kept = [newChunk, newUnused, inMedia, inArticle, inThread].sort();
    expect(await mediaRows(ws.workspaceId)).toEqual(kept);
    expect(await objectsOf(ws.workspaceId)).toEqual(kept);

    // Deleting the post leaves its media unreferenced: the next run removes it.
    expect((await app.http('DELETE', `/v1/posts/${draft.body.data?.id ?? draft.body.id}`, { apiKey: ws.apiKey })).status).toBe(200);
    const again = await app.deps.temporal.workflow.execute(mediaRetentionWorkflow, { taskQueue: app.config.temporal.taskQueue, workflowId: `media-retention-test-${randomUUID()}` });
    expect(again).toEqual({ chunks: 0, uploads: 3 });
    expect(await objectsOf(ws.workspaceId)).toEqual([newChunk, newUnused].sort());
  });

  it('the worker creates its Schedule idempotently, and updates it when run again', async () => {
    const config = { ...app.config, temporal: { ...app.config.temporal, taskQueue: `${app.config.temporal.taskQueue}-schedule` } };
    const id = mediaRetentionScheduleId(config);
    try {
      expect(await ensureMediaRetentionSchedule(app.deps.temporal, config)).toBe(id);
      expect(await ensureMediaRetentionSchedule(app.deps.temporal, { ...config, media: { ...config.media, retentionHours: 48 } })).toBe(id);
      const d = await app.deps.temporal.schedule.getHandle(id).describe();
      expect(d.action).toMatchObject({ type: 'startWorkflow', workflowType: 'mediaRetentionWorkflow', taskQueue: config.temporal.taskQueue });
      expect(d.spec.intervals?.map((i) => i.every)).toEqual([3_600_000]);
      expect(d.state.note).toMatch(/after 48 h/);
    } finally {
      await app.deps.temporal.schedule
        .getHandle(id)
        .delete()
        .catch((e) => {
          if (!(e instanceof ScheduleNotFoundError)) throw e;
        });
    }
  });
});
