/** The `jobs` rows (job id → workspace, type, workflow) and the webhook deliveries shown on a job (api/jobs.ts). */
import { v7 as uuidv7 } from 'uuid';
import type { Queryable } from './pool.js';

export interface JobRow {
  id: string;
  type: string;
  workflow_id: string;
  created_at: Date;
}

export interface WebhookDeliveryRow {
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: Date;
}

/** `ifAbsent`: a job already registered under this id is left as it is (idempotent registration). */
export async function insertJob(
  db: Queryable,
  job: { id: string; workspaceId: string; type: string; workflowId: string },
  opts: { ifAbsent?: boolean } = {},
): Promise<void> {
  await db.query(`insert into jobs (id, workspace_id, type, workflow_id) values ($1, $2, $3, $4)${opts.ifAbsent ? ' on conflict do nothing' : ''}`, [
    job.id,
    job.workspaceId,
    job.type,
    job.workflowId,
  ]);
}

export async function deleteJob(db: Queryable, jobId: string): Promise<void> {
  await db.query(`delete from jobs where id = $1`, [jobId]);
}

/** The job, or null when the workspace has no job with this id (`jobId` must be a UUID). */
export async function findJobInWorkspace(db: Queryable, workspaceId: string, jobId: string): Promise<JobRow | null> {
  const r = await db.query<JobRow>(`select id, type, workflow_id, created_at from jobs where id = $1 and workspace_id = $2`, [jobId, workspaceId]);
  return r.rows[0] ?? null;
}

/** Every webhook delivery attempt of the job, oldest first. */
export async function webhookDeliveriesOfJob(db: Queryable, jobId: string): Promise<WebhookDeliveryRow[]> {
  const r = await db.query<WebhookDeliveryRow>(
    `select attempt, status_code, error, duration_ms, created_at from webhook_deliveries where job_id = $1 order by created_at`,
    [jobId],
  );
  return r.rows;
}

/** One delivery attempt of a job's webhook (activities/webhooks.ts): its answer or error, never the headers. */
export async function recordWebhookDelivery(
  db: Queryable,
  d: { workspaceId: string; jobId: string; messageId: string; attempt: number; url: string; statusCode: number | null; error: string | null; durationMs: number },
): Promise<void> {
  await db.query(
    `insert into webhook_deliveries (id, workspace_id, job_id, message_id, attempt, url, status_code, error, duration_ms) values ($1,$2,$3,$4,$5,$6,$7,$8,$9)`,
    [uuidv7(), d.workspaceId, d.jobId, d.messageId, d.attempt, d.url, d.statusCode, d.error, d.durationMs],
  );
}
