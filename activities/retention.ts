/**
 * Activities of the retention purge (workflows/retention.ts, docs/PRIVACY.md "Retention"): each
 * store in batches, each batch committed on its own and heartbeated with the counts so far, so a
 * retried activity (worker killed, timeout) resumes from what is left and keeps counting from
 * where it was. The periods come from the configuration (`RETENTION_*_DAYS`), read here rather
 * than passed by the workflow, so a changed setting applies to the next run.
 */
import { Context } from '@temporalio/activity';
import { status as grpcStatus } from '@grpc/grpc-js';
import { isGrpcServiceError } from '@temporalio/client';
import { SA } from '../domain/searchAttributes.js';
import { deleteAccessRequest, expiredAccessRequests, expiredDeletedContacts, jobWorkflowIdsAmong, purgeDeletedContacts, purgeWebhookDeliveries } from '../db/retention.js';
import { accessObjectName } from './subjectAccess.js';
import { deleteJobsByWorkflowIds, type PersonRowsRemoved } from '../db/privacy.js';
import { withoutTenancy } from '../db/tenancy.js';
import { inWorkspaceUnit, scopeTransaction } from '../db/scope.js';
import type { ActivityDeps } from './deps.js';

/** Contacts listed per batch (each workspace's share purged in one transaction). */
const CONTACT_BATCH = 200;
const DELIVERY_BATCH = 1000;
const DAY_MS = 86_400_000;

export interface JobResultsPurged {
  workflowExecutions: number;
  jobs: number;
}

const cutoffOf = (days: number) => new Date(Date.now() - days * DAY_MS);

/** The counts a previous attempt heartbeated, or `zero`. */
function resumed<T>(zero: T): T {
  const details = Context.current().info.heartbeatDetails as T | undefined;
  return details ? { ...zero, ...details } : zero;
}

export function createRetentionActivities(deps: ActivityDeps) {
  /**
   * The sweeps name no workspace in their input, so they have no activity scope: the listings run
   * across workspaces (`withoutTenancy`), and each workspace's part in that workspace's own scope.
   */
  const handles = { em: deps.orm.em, db: deps.pool };
  return {
    /** Soft-deleted contacts older than `RETENTION_DELETED_CONTACT_DAYS`, with what hangs off them (as an erasure). */
    async retentionPurgeDeletedContacts(): Promise<PersonRowsRemoved> {
      const total = resumed<PersonRowsRemoved>({ contacts: 0, contactSources: 0, identityLogEntries: 0, stagedRows: 0, idempotencyRecords: 0 });
      const cutoff = cutoffOf(deps.config.retention.deletedContactDays);
      for (;;) {
        const batch = await withoutTenancy('the retention purge lists expired contacts of every workspace', () => expiredDeletedContacts(deps.pool, cutoff, CONTACT_BATCH));
        if (!batch.length) return total;
        const byWorkspace = new Map<string, string[]>();
        for (const c of batch) byWorkspace.set(c.workspaceId, [...(byWorkspace.get(c.workspaceId) ?? []), c.id]);
        let purged = 0;
        for (const [workspaceId, ids] of byWorkspace) {
          const removed = await inWorkspaceUnit(handles, workspaceId, (scope) => purgeDeletedContacts(scope, ids, cutoff));
          for (const k of Object.keys(total) as (keyof PersonRowsRemoved)[]) total[k] += removed[k];
          purged += removed.contacts;
        }
        Context.current().heartbeat(total);
        // Listed but none purged (each revived meanwhile): the next run looks again; never spin.
        if (!purged) return total;
      }
    },

    /** Webhook delivery records older than `RETENTION_WEBHOOK_DELIVERY_DAYS`. */
    async retentionPurgeWebhookDeliveries(): Promise<{ webhookDeliveries: number }> {
      const total = resumed({ webhookDeliveries: 0 });
      const cutoff = cutoffOf(deps.config.retention.webhookDeliveryDays);
      for (;;) {
        const n = await withoutTenancy('the retention purge covers every workspace', () => purgeWebhookDeliveries(deps.pool, cutoff, DELIVERY_BATCH));
        total.webhookDeliveries += n;
        Context.current().heartbeat(total);
        if (n < DELIVERY_BATCH) return total;
      }
    },

    /**
     * Subject-access export documents of requests completed more than `RETENTION_ACCESS_EXPORT_DAYS`
     * ago: the object goes first, then the request's row (a retry in between removes the
     * already-missing object again: S3 answers a removal of a missing key with success).
     */
    async retentionPurgeAccessExports(): Promise<{ accessExports: number }> {
      const total = resumed({ accessExports: 0 });
      const cutoff = cutoffOf(deps.config.retention.accessExportDays);
      for (;;) {
        const batch = await withoutTenancy('the retention purge lists expired access exports of every workspace', () => expiredAccessRequests(deps.pool, cutoff, DELIVERY_BATCH));
        for (const r of batch) {
          await deps.storage.client.removeObject(deps.storage.bucket, accessObjectName(r.workspaceId, r.id));
          total.accessExports += await inWorkspaceUnit(handles, r.workspaceId, (scope) => deleteAccessRequest(scope, r.id));
          Context.current().heartbeat(total);
        }
        if (batch.length < DELIVERY_BATCH) return total;
      }
    },

    /**
     * Finished jobs whose execution closed more than `RETENTION_JOB_RESULT_DAYS` ago: the result
     * lives in the execution (job state is read from the workflow), so the execution is deleted
     * from Temporal, with its `jobs` row and delivery records (db/privacy.ts, as an erasure does).
     * Only this deployment's task queue: deployments sharing a namespace keep theirs.
     */
    async retentionPurgeJobResults(): Promise<JobResultsPurged> {
      const total = resumed<JobResultsPurged>({ workflowExecutions: 0, jobs: 0 });
      const cutoff = cutoffOf(deps.config.retention.jobResultDays);
      const { namespace, taskQueue } = deps.config.temporal;
      const query = `TaskQueue = "${taskQueue}" AND ExecutionStatus != "Running" AND CloseTime < "${cutoff.toISOString()}"`;
      // Every closed run per job workflow; a workflow counts only once its last run has closed (a
      // chain that continued-as-new and still runs keeps its earlier runs and its jobs row).
      // Only workflows whose jobs row is still there are purged, so a run after Temporal accepted
      // a deletion (it deletes in the background) counts nothing twice.
      const runsOf = new Map<string, { workspaceId: string; runIds: string[]; finished: boolean }>();
      for await (const w of deps.temporal.workflow.list({ query })) {
        const workspaceId = w.typedSearchAttributes.get(SA.WorkspaceId);
        if (!workspaceId || !w.typedSearchAttributes.get(SA.JobType)) continue;
        const entry = runsOf.get(w.workflowId) ?? { workspaceId, runIds: [], finished: false };
        entry.runIds.push(w.runId);
        entry.finished ||= w.status.name !== 'CONTINUED_AS_NEW';
        runsOf.set(w.workflowId, entry);
      }
      const byWorkspace = new Map<string, string[]>();
      for (const [workflowId, e] of runsOf) if (e.finished) byWorkspace.set(e.workspaceId, [...(byWorkspace.get(e.workspaceId) ?? []), workflowId]);
      for (const [workspaceId, workflowIds] of byWorkspace) {
        await inWorkspaceUnit(handles, workspaceId, async (scope) => {
          const live = await jobWorkflowIdsAmong(scope, workflowIds);
          for (const workflowId of live) {
            for (const runId of runsOf.get(workflowId)!.runIds) {
              await deps.temporal.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: { workflowId, runId } }).catch((e) => {
                if (!(isGrpcServiceError(e) && e.code === grpcStatus.NOT_FOUND)) throw e;
              });
            }
            Context.current().heartbeat(total);
          }
          // The rows go once their executions are deleted: a retry in between finds them and deletes again.
          total.jobs += await scopeTransaction(scope, (client) => deleteJobsByWorkflowIds(client, scope.workspaceId, live));
          total.workflowExecutions += live.length;
          Context.current().heartbeat(total);
        });
      }
      return total;
    },
  };
}
