/**
 * The retention purge on the real stack (workflows/retention.ts, docs/PRIVACY.md "Retention"):
 * a contact soft-deleted 31 days ago goes with its source link and is recorded in the audit
 * trail as `contact.purge` by `system`; one deleted today and an active one stay; old webhook
 * delivery records go, recent ones stay; with `RETENTION_JOB_RESULT_DAYS=0` a finished job's
 * execution is deleted from Temporal with its jobs row; a subject-access export completed 8 days
 * ago is removed from the object store, one made today stays. A second run removes nothing more. The
 * Schedule is created idempotently.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { retentionWorkflow, type RetentionReport } from '../../workflows/retention.js';
import { ensureRetentionSchedule, retentionScheduleId } from '../../worker/schedules.js';
import type { NewWorkspace } from '../../db/workspaces.js';

let app: TestApp;
let ws: NewWorkspace;
const tag = randomBytes(4).toString('hex');
const ids = {} as Record<'old' | 'recent' | 'active' | 'source' | 'job', string>;
const accessExportObjects = {} as Record<'old' | 'recent', string>;

const run = async (n: number): Promise<RetentionReport> =>
  app.deps.temporal.workflow.execute(retentionWorkflow, { taskQueue: app.config.temporal.taskQueue, workflowId: `retention-test-${tag}-${n}` });
const contactRow = async (id: string) => (await app.pool.query<{ status: string }>(`select status from contacts where id = $1`, [id])).rows[0];

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'inline', env: { RETENTION_JOB_RESULT_DAYS: '0' } });
  ws = await app.createWorkspace();
  const src = await app.http('POST', '/sources', { apiKey: ws.apiKey, body: { sourceType: 'pronetInbound', sourceIdentifier: `https://pronet.com/in/keeper-${tag}`, sourceMeta: {} } });
  expect(src.status, JSON.stringify(src.body)).toBe(200);
  ids.source = src.body.data.id;
  for (const who of ['old', 'recent', 'active'] as const) {
    const r = await app.http('POST', `/contacts/${ids.source}`, { apiKey: ws.apiKey, body: { 'contact.pronet': `https://pronet.com/in/${who}-${tag}`, 'contact.firstName': who, 'contact.emails': [`${who}.${tag}@retention.example`] } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ids[who] = r.body.data.id;
  }
  for (const who of ['old', 'recent'] as const) expect((await app.http('DELETE', `/contacts/${ids[who]}`, { apiKey: ws.apiKey })).status).toBe(200);
  await app.pool.query(`update contacts set deleted_at = now() - interval '31 days' where id = $1`, [ids.old]);

  for (const age of ['31 days', '1 hour']) {
    await app.pool.query(
      `insert into webhook_deliveries (id, workspace_id, job_id, message_id, attempt, url, status_code, duration_ms, created_at)
       values (gen_random_uuid(), $1, gen_random_uuid(), 'msg', 1, 'https://hooks.example/x', 200, 5, now() - $2::interval)`,
      [ws.workspaceId, age],
    );
  }

  // Two subject-access exports of the active contact; the older completed 8 days ago (period: 7).
  for (const age of ['old', 'recent'] as const) {
    const r = await app.http('POST', '/privacy/access-requests', { apiKey: ws.apiKey, body: { emails: [`active.${tag}@retention.example`] } });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const done = await app.waitForJob(r.body.jobId, ws.apiKey, 60_000);
    expect(done.jobResponsePayload.contacts).toBe(1);
    accessExportObjects[age] = done.jobResponsePayload.objectName;
  }
  await app.pool.query(`update access_requests set completed_at = now() - interval '8 days' where $1 like '%' || id || '.json'`, [accessExportObjects.old]);

  // A finished job: its result lives in its (closed) execution.
  const job = await app.http('POST', `/contacts/${ids.source}/bulk-upsert-contacts`, { apiKey: ws.apiKey, body: { contactsData: [{ 'contact.firstName': `Jobbed${tag}` }] } });
  expect(job.status, JSON.stringify(job.body)).toBe(202);
  ids.job = job.body.jobId;
  expect((await app.waitForJob(ids.job, ws.apiKey)).jobStatus).toBeTruthy();
  // Visibility is eventually consistent: wait until the closed run is listed.
  const query = `TaskQueue = "${app.config.temporal.taskQueue}" AND ExecutionStatus != "Running" AND WorkflowId = "${(await app.pool.query(`select workflow_id from jobs where id = $1`, [ids.job])).rows[0].workflow_id}"`;
  for (let i = 0; i < 100; i++) {
    let seen = false;
    for await (const _ of app.deps.temporal.workflow.list({ query })) seen = true;
    if (seen) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}, 120_000);
afterAll(async () => {
  await app?.close();
});

describe('retention purge', () => {
  it('purges the expired soft-deleted contact with what hangs off it, old deliveries and finished job results; keeps the rest', async () => {
    const report = await run(1);
    expect(report.deletedContacts).toMatchObject({ contacts: 1, contactSources: 1 });
    expect(report.webhookDeliveries).toBe(1);
    // the bulk upsert and the two access jobs (RETENTION_JOB_RESULT_DAYS=0)
    expect(report.jobResults).toEqual({ workflowExecutions: 3, jobs: 3 });
    expect(report.accessExports).toBe(1);
    await app.recordHistory(`retention-test-${tag}-1`, 'retention/access-exports-purged');
    const stored = (name: string) => app.deps.storage.client.statObject(app.deps.storage.bucket, name).then(() => true, () => false);
    expect(await stored(accessExportObjects.old)).toBe(false);
    expect(await stored(accessExportObjects.recent)).toBe(true);

    expect(await contactRow(ids.old)).toBeUndefined();
    expect((await app.pool.query(`select 1 from contact_sources where contact_id = $1`, [ids.old])).rowCount).toBe(0);
    expect(await contactRow(ids.recent)).toEqual({ status: 'deleted' });
    expect(await contactRow(ids.active)).toEqual({ status: 'active' });
    // The source link of the contact deleted today stays until its own period ends.
    expect((await app.pool.query(`select 1 from contact_sources where contact_id = $1`, [ids.recent])).rowCount).toBe(1);
    const deliveries = await app.pool.query(`select created_at from webhook_deliveries where workspace_id = $1`, [ws.workspaceId]);
    expect(deliveries.rowCount).toBe(1);
    expect((await app.http('GET', `/jobs/${ids.job}`, { apiKey: ws.apiKey })).status).toBe(404);

    const trail = await app.http('GET', '/audit-events?action=contact.purge', { apiKey: ws.apiKey });
    expect(trail.body.data).toEqual([expect.objectContaining({ actor: { apiKeyId: null, kind: 'system' }, resource: { type: 'contact', id: ids.old }, status: null })]);
  });

  it('is idempotent: a second run removes nothing more', async () => {
    const report = await run(2);
    expect(report).toEqual({
      deletedContacts: { contacts: 0, contactSources: 0, identityLogEntries: 0, stagedRows: 0, idempotencyRecords: 0 },
      jobResults: { workflowExecutions: 0, jobs: 0 },
      webhookDeliveries: 0,
      accessExports: 0,
    });
    expect(await contactRow(ids.recent)).toEqual({ status: 'deleted' });
    expect((await app.http('GET', '/audit-events?action=contact.purge', { apiKey: ws.apiKey })).body.data).toHaveLength(1);
  });

  it('creates its Schedule idempotently', async () => {
    const id = retentionScheduleId(app.config);
    try {
      expect(await ensureRetentionSchedule(app.deps.temporal, app.config)).toBe(id);
      expect(await ensureRetentionSchedule(app.deps.temporal, { ...app.config, retention: { ...app.config.retention, deletedContactDays: 7 } })).toBe(id);
      const d = await app.deps.temporal.schedule.getHandle(id).describe();
      expect(d.action).toMatchObject({ type: 'startWorkflow', workflowType: 'retentionWorkflow' });
      expect(d.state.note).toContain('deleted over 7 d ago');
    } finally {
      await app.deps.temporal.schedule.getHandle(id).delete().catch(() => {});
    }
  });
});
