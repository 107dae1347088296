/**
 * Activities of erasure jobs (workflows/erasure.ts), one per store. The person's identifiers
 * never cross the workflow: each activity opens them from the request's row (sealed with the
 * keyring) and returns counts only. Each step records what it decided to remove (object names,
 * workflow runs: no personal data) before removing it, and its counts with or after it, so a
 * retry after a crash removes the rest and answers the same report.
 */
import { Context } from '@temporalio/activity';
import { status as grpcStatus } from '@grpc/grpc-js';
import { isGrpcServiceError, WorkflowNotFoundError } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { keyringOf } from '../domain/keyring.js';
import { createPayloadCodec } from '../domain/payloadCodec.js';
import { SA } from '../domain/searchAttributes.js';
import {
  ERASURE_IDENTIFIERS_CONTEXT,
  completeErasureRequest,
  lockTemporalReport,
  setErasureIdentifiers,
  deleteJobsByWorkflowIds,
  deleteMediaRows,
  eraseFromDatabase,
  expandIdentifiers,
  findErasureRequest,
  mergeErasureRequest,
  needlesOf,
  suppressionKey,
  type DatabaseErasureReport,
  type PersonIdentifiers,
} from '../db/privacy.js';
import { activityScope, scopeTransaction } from '../db/scope.js';
import type { ActivityDeps } from './deps.js';

export interface ErasureStepInput {
  workspaceId: string;
  requestId: string;
}

export interface ErasureReport {
  database: DatabaseErasureReport;
  objectStore: { objects: number };
  temporal: { workflowExecutions: number; jobs: number };
}


interface ErasurePlan {
  expanded?: boolean;
  objects?: string[];
  workflows?: { workflowId: string; runId: string }[];
}

/** Payloads anywhere in a history event (inputs, results, failures' details, queries, memos). */
function* payloadsIn(value: unknown, seen = new Set<object>()): Generator<{ metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }> {
  if (!value || typeof value !== 'object' || seen.has(value) || ArrayBuffer.isView(value)) return;
  seen.add(value);
  const v = value as Record<string, unknown>;
  if (v.data instanceof Uint8Array && v.metadata && typeof v.metadata === 'object') {
    yield v as never;
    return;
  }
  for (const child of Array.isArray(value) ? value : Object.values(v)) yield* payloadsIn(child, seen);
}

const isNotFound = (e: unknown) => isGrpcServiceError(e) && e.code === grpcStatus.NOT_FOUND;

export function createPrivacyActivities(deps: ActivityDeps) {
  const keyring = keyringOf(deps.config);
  const codec = createPayloadCodec(deps.config);
  const hmacKey = suppressionKey(deps.config.serverSecret);

  async function load(input: ErasureStepInput): Promise<{ ids: PersonIdentifiers; plan: ErasurePlan; report: Partial<ErasureReport> }> {
    const row = await findErasureRequest(activityScope(), input.requestId);
    if (!row) throw new Error(`erasure request ${input.requestId} not found`);
    const ids: PersonIdentifiers = row.identifiers
      ? JSON.parse(keyring.decryptText(row.identifiers, ERASURE_IDENTIFIERS_CONTEXT))
      : { contactIds: [], emails: [], profileUrls: [] };
    return { ids, plan: (row.plan ?? {}) as ErasurePlan, report: (row.report ?? {}) as Partial<ErasureReport> };
  }

  /** Does any payload of this run's history carry one of the needles (decoded through the codec)? */
  async function historyCarries(workflowId: string, runId: string, needles: string[]): Promise<boolean> {
    const history = await deps.temporal.workflow.getHandle(workflowId, runId).fetchHistory();
    for (const p of payloadsIn(history)) {
      const [decoded] = await codec.decode([p as never]);
      const text = Buffer.from(decoded?.data ?? new Uint8Array()).toString('utf8').toLowerCase();
      if (needles.some((n) => text.includes(n))) return true;
    }
    return false;
  }

  return {
    /**
     * Widens the request's identifiers to everything the matching contacts hold (their emails
     * and profile URLs), once: the later steps search every store for the same set.
     */
    async erasureResolve(input: ErasureStepInput): Promise<void> {
      const { ids, plan } = await load(input);
      if (plan.expanded) return;
      const scope = activityScope();
      const all = await expandIdentifiers(scope.db, scope.workspaceId, ids);
      await scopeTransaction(scope, async (client) => {
        await setErasureIdentifiers(client, scope.workspaceId, input.requestId, keyring.encryptText(JSON.stringify(all), ERASURE_IDENTIFIERS_CONTEXT));
        await mergeErasureRequest(client, scope.workspaceId, input.requestId, 'plan', { expanded: true });
      });
    },

    /** The workspace's tables, and the suppression list (db/privacy.ts eraseFromDatabase). */
    async erasureDatabase(input: ErasureStepInput): Promise<DatabaseErasureReport> {
      const { ids } = await load(input);
      return eraseFromDatabase(activityScope(), input.requestId, ids, hmacKey);
    },

    /** Objects under the workspace's prefix whose bytes carry one of the identifiers (contacts files, exports). */
    async erasureObjectStore(input: ErasureStepInput): Promise<{ objects: number }> {
      const scope = activityScope();
      const { ids, plan, report } = await load(input);
      if (report.objectStore) return report.objectStore;
      let objects = plan.objects;
      if (!objects) {
        const needles = needlesOf(ids);
        const { client, bucket } = deps.storage;
        objects = [];
        for await (const o of client.listObjectsV2(bucket, `${scope.workspaceId}/`, true) as AsyncIterable<{ name?: string }>) {
          if (!o.name) continue;
          Context.current().heartbeat(o.name);
          const chunks: Buffer[] = [];
          for await (const c of await client.getObject(bucket, o.name)) chunks.push(c as Buffer);
          const text = Buffer.concat(chunks).toString('utf8').toLowerCase();
          if (needles.some((n) => text.includes(n))) objects.push(o.name);
        }
        await mergeErasureRequest(scope.db, scope.workspaceId, input.requestId, 'plan', { objects });
      }
      if (objects.length) await deps.storage.client.removeObjects(deps.storage.bucket, objects);
      await scopeTransaction(scope, async (client) => {
        await deleteMediaRows(client, scope.workspaceId, objects);
        await mergeErasureRequest(client, scope.workspaceId, input.requestId, 'report', { objectStore: { objects: objects.length } });
      });
      return { objects: objects.length };
    },

    /**
     * Temporal: every execution of the workspace (but this erasure's own) whose history carries
     * one of the identifiers, decoded through the payload codec, is deleted (DeleteWorkflowExecution),
     * a running one terminated first; its jobs row and delivery records go with it.
     */
    async erasureTemporal(input: ErasureStepInput & { ownWorkflowId: string }): Promise<{ workflowExecutions: number; jobs: number }> {
      const scope = activityScope();
      const { ids, plan, report } = await load(input);
      if (report.temporal) return report.temporal;
      let runs = plan.workflows;
      if (!runs) {
        const needles = needlesOf(ids);
        runs = [];
        for await (const w of deps.temporal.workflow.list({ query: `${SA.WorkspaceId.name} = "${scope.workspaceId}"` })) {
          if (w.workflowId === input.ownWorkflowId) continue;
          Context.current().heartbeat(w.workflowId);
          if (await historyCarries(w.workflowId, w.runId, needles).catch((e) => (isNotFound(e) ? false : Promise.reject(e)))) runs.push({ workflowId: w.workflowId, runId: w.runId });
        }
        await mergeErasureRequest(scope.db, scope.workspaceId, input.requestId, 'plan', { workflows: runs });
      }
      const namespace = deps.config.temporal.namespace;
      for (const r of runs) {
        await deps.temporal.workflow
          .getHandle(r.workflowId, r.runId)
          .terminate('personal data erasure')
          .catch(() => undefined);
        await deps.temporal.workflowService.deleteWorkflowExecution({ namespace, workflowExecution: r }).catch((e) => {
          if (!isNotFound(e)) throw e;
        });
      }
      // Temporal deletes in the background: the step ends when every history is gone (else it times out and is retried).
      for (const r of runs) {
        while (await deps.temporal.workflow.getHandle(r.workflowId, r.runId).describe().then(() => true, (e) => (e instanceof WorkflowNotFoundError || isNotFound(e) ? false : Promise.reject(e)))) {
          Context.current().heartbeat(r.workflowId);
          await sleep(500);
        }
      }
      const workflowIds = [...new Set(runs.map((r) => r.workflowId))];
      const result = await scopeTransaction(scope, async (client) => {
        const done = await lockTemporalReport(client, scope.workspaceId, input.requestId);
        if (done) return done;
        const temporal = { workflowExecutions: runs.length, jobs: await deleteJobsByWorkflowIds(client, scope.workspaceId, workflowIds) };
        await mergeErasureRequest(client, scope.workspaceId, input.requestId, 'report', { temporal });
        return temporal;
      });
      return result;
    },

    /** Drops the request's identifiers (only the counts stay) and answers the report. */
    async erasureComplete(input: ErasureStepInput): Promise<ErasureReport> {
      await completeErasureRequest(activityScope(), input.requestId);
      const { report } = await load(input);
      return report as ErasureReport;
    },
  };
}
