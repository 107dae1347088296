/** The `jobs` rows (job id → workspace, type, workflow) and the webhook deliveries shown on a job (api/jobs.ts). */
import { v7 as uuidv7 } from 'uuid';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { InferEntity } from '@mikro-orm/core';
import { Job, WebhookDelivery } from './platform.js';
import { inWorkspace } from './tenancy.js';

export type JobRow = Pick<InferEntity<typeof Job>, 'id' | 'type' | 'workflowId' | 'createdAt'>;
export type WebhookDeliveryRow = Pick<InferEntity<typeof WebhookDelivery>, 'attempt' | 'statusCode' | 'error' | 'durationMs' | 'createdAt'>;

/** `ifAbsent`: a job already registered under this id is left as it is (idempotent registration). */
export async function insertJob(
  em: EntityManager,
  job: { id: string; workspaceId: string; type: string; workflowId: string },
  opts: { ifAbsent?: boolean } = {},
): Promise<void> {
  const row = { ...job, createdAt: new Date() };
  if (opts.ifAbsent) await em.upsert(Job, row, { onConflictFields: ['id'], onConflictAction: 'ignore' });
  else await em.insert(Job, row);
}

export async function deleteJob(em: EntityManager, workspaceId: string, jobId: string): Promise<void> {
  await em.nativeDelete(Job, { id: jobId, workspaceId }, inWorkspace(workspaceId));
}

/** The job, or null when the workspace has no job with this id (`jobId` must be a UUID). */
export async function findJobInWorkspace(em: EntityManager, workspaceId: string, jobId: string): Promise<JobRow | null> {
  return em.findOne(Job, { id: jobId, workspaceId }, inWorkspace(workspaceId));
}

/** Every webhook delivery attempt of the job, oldest first. */
export async function webhookDeliveriesOfJob(em: EntityManager, workspaceId: string, jobId: string): Promise<WebhookDeliveryRow[]> {
  return em.find(WebhookDelivery, { jobId }, { ...inWorkspace(workspaceId), orderBy: { createdAt: 'asc' }, disableIdentityMap: true });
}

/** One delivery attempt of a job's webhook (activities/webhooks.ts): its answer or error, never the headers. */
export async function recordWebhookDelivery(
  em: EntityManager,
  d: { workspaceId: string; jobId: string; messageId: string; attempt: number; url: string; statusCode: number | null; error: string | null; durationMs: number },
): Promise<void> {
  await em.insert(WebhookDelivery, { id: uuidv7(), ...d, createdAt: new Date() });
}
