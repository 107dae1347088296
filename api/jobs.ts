/**
 * The job path every asynchronous capability uses: a `jobs` row maps the job id to its workspace,
 * type and workflow; the workflow holds the state. `GET /jobs/{jobId}` queries the workflow while
 * it runs and reads its result (payload and final progress) once it closed; the API keeps no copy
 * of progress and never makes one up: unknown progress is `null` with `progressUnknownReason`.
 */
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, TypedSearchAttributes } from '@temporalio/common';
import { SA } from '../domain/searchAttributes.js';
import { v7 as uuidv7 } from 'uuid';
import { conflict, notFound } from './errors.js';
import { isUuid } from '../domain/ids.js';
import { rootCause } from '../workflows/contract/failures.js';
import {
  JOBS,
  jobStatusQuery,
  jobWorkflowId,
  type JobArgs,
  type JobError,
  type JobKey,
  type JobProgress,
  type JobResult,
  type JobView,
  type JobWorkflowOf,
  type WebhookTarget,
} from '../workflows/contract/jobs.js';
import type { AppDeps } from './deps.js';
import type { Static } from '@sinclair/typebox';
import type { JobAccepted } from './schemas/common.js';
import type { JobResponse } from './schemas/platform.js';
import { deleteJob, findJobInWorkspace, insertJob, webhookDeliveriesOfJob } from '../db/jobs.js';
import { logContext } from '../telemetry/log.js';
import { jobsStarted } from '../telemetry/metrics.js';

/** A job workflow, as far as reading its status and result goes. */
type JobWorkflow = (input: any) => Promise<JobResult<unknown>>;

export interface StartJobOptions<K extends JobKey> {
  workspaceId: string;
  /** The job type (workflows/contract/jobs.ts `JOBS`): names the workflow to start, also the workflow id prefix. */
  job: K;
  /** Workflow input; `jobId`, `workspaceId`, `jobType` and `webhook` are added. Keep it small. */
  args: JobArgs[K];
  webhook?: WebhookTarget | null;
  /** Extra search attributes for the Temporal UI (e.g. SourceId). */
  searchAttributes?: Partial<Record<'PostId' | 'SourceId', string>>;
  /** A job id chosen by the caller (e.g. to stage inputs under it first). */
  jobId?: string;
  message?: string;
}

export type JobAcceptedBody = Static<typeof JobAccepted>;

export async function startJob<K extends JobKey>(deps: AppDeps, opts: StartJobOptions<K>): Promise<JobAcceptedBody> {
  const jobId = opts.jobId ?? uuidv7();
  const type = opts.job;
  const workflowId = jobWorkflowId(type, jobId);
  await insertJob(deps.orm.em, { id: jobId, workspaceId: opts.workspaceId, type, workflowId });
  const input = { ...opts.args, jobId, workspaceId: opts.workspaceId, jobType: type, webhook: opts.webhook ?? null };
  const attrs = [
    { key: SA.WorkspaceId, value: opts.workspaceId },
    { key: SA.JobType, value: type },
    ...Object.entries(opts.searchAttributes ?? {}).map(([k, v]) => ({ key: SA[k as 'PostId' | 'SourceId'], value: v! })),
  ];
  // The request that started the job, findable from the workflow (memo, in the UI and `describe()`).
  const requestId = logContext.getStore()?.requestId;
  try {
    await deps.temporal.workflow.start<JobWorkflowOf<K>>(JOBS[type].workflowType, {
      workflowId,
      taskQueue: deps.config.temporal.taskQueue + JOBS[type].taskQueueSuffix,
      args: [input],
      typedSearchAttributes: new TypedSearchAttributes(attrs),
      memo: { jobId, workspaceId: opts.workspaceId, ...(requestId ? { requestId } : {}) },
    });
  } catch (e) {
    await deleteJob(deps.orm.em, opts.workspaceId, jobId);
    if (e instanceof WorkflowExecutionAlreadyStartedError) throw conflict(`Job ${jobId} is already running`);
    throw e;
  }
  jobsStarted.inc({ type });
  deps.log.info({ jobId, jobType: type, workflowId, workspaceId: opts.workspaceId }, 'job started');
  return {
    message: opts.message ?? 'Accepted: the job runs in the background; poll jobStatusEndpoint for its status',
    jobId,
    jobStatusEndpoint: `${deps.config.publicBaseUrl}/jobs/${jobId}`,
  };
}

/** GET /jobs/{jobId}'s `data`. */
export type JobRecord = Static<typeof JobResponse>['data'];

async function jobRow(deps: AppDeps, workspaceId: string, jobId: string) {
  // a malformed id names no job (and would fail the uuid cast): 404 without a query
  if (!isUuid(jobId)) throw notFound('Job', jobId);
  const row = await findJobInWorkspace(deps.orm.em, workspaceId, jobId);
  if (!row) throw notFound('Job', jobId);
  return row;
}

function failureOf(err: unknown): { error: JobError; partial: unknown; progress: JobProgress | null } {
  const cause = rootCause(err);
  if (cause instanceof ApplicationFailure) {
    const progress = cause.details?.[1];
    return { error: { code: cause.type ?? 'job_failed', message: cause.message }, partial: cause.details?.[0] ?? null, progress: isProgress(progress) ? progress : null };
  }
  return { error: { code: 'job_failed', message: err instanceof Error ? err.message : String(err) }, partial: null, progress: null };
}

/** What `GET /jobs/{jobId}` says about a job: its view, and why `progress` is null when it is. */
interface JobState {
  view: Omit<JobView, 'progress'> & { progress: JobProgress | null };
  progressUnknownReason: string | null;
  closedAt: Date | null;
}

const PROGRESS_UNKNOWN = {
  notStarted: 'The job has not started yet',
  noWorker: 'No worker answered the status query; progress is known again once a worker runs the job',
  legacyResult: 'The job ended before jobs recorded their final progress in their result',
  cancelled: 'The job was cancelled; a cancelled job records no final progress',
  stopped: 'The job was stopped outside its workflow; it recorded no final progress',
} as const;

/** Results of job workflows since they carry their progress (`JobResult`); older ones are the bare payload. */
function isJobResult(r: unknown): r is JobResult<unknown> {
  if (!r || typeof r !== 'object' || Array.isArray(r)) return false;
  const keys = Object.keys(r);
  const p = (r as { progress?: unknown }).progress as Partial<JobProgress> | undefined;
  return keys.length === 2 && keys.includes('jobResponsePayload') && typeof p === 'object' && p !== null && typeof p.completed === 'number' && typeof p.total === 'number';
}

const isProgress = (p: unknown): p is JobProgress => !!p && typeof p === 'object' && typeof (p as JobProgress).completed === 'number' && typeof (p as JobProgress).total === 'number';

/** How long GET /jobs waits for a worker to answer the status query before saying progress is unknown. */
const STATUS_QUERY_DEADLINE_MS = 5_000;

async function stateOf(deps: AppDeps, handle: WorkflowHandle): Promise<JobState> {
  let desc;
  try {
    desc = await handle.describe();
  } catch (e) {
    // The jobs row is written just before the workflow starts: in between, the job is queued.
    if (e instanceof WorkflowNotFoundError)
      return { view: { jobStatus: 'queued', progress: null, jobResponsePayload: null, error: null }, progressUnknownReason: PROGRESS_UNKNOWN.notStarted, closedAt: null };
    throw e;
  }
  const status = desc.status.name;
  if (status === 'RUNNING') {
    try {
      const view = await deps.temporal.connection.withDeadline(Date.now() + STATUS_QUERY_DEADLINE_MS, () => handle.query(jobStatusQuery));
      return { view, progressUnknownReason: null, closedAt: null };
    } catch {
      // No worker answers right now (none started yet, or all restarting). A workflow whose first
      // task has completed (started, task scheduled, started, completed) is under way.
      const pickedUp = (desc.historyLength ?? 0) > 3;
      return { view: { jobStatus: pickedUp ? 'running' : 'queued', jobResponsePayload: null, error: null, progress: null }, progressUnknownReason: PROGRESS_UNKNOWN.noWorker, closedAt: null };
    }
  }
  const closedAt = desc.closeTime ?? null;
  const ended = (view: JobState['view'], reason: string | null): JobState => ({ view, progressUnknownReason: reason, closedAt });
  if (status === 'COMPLETED') {
    const result = await handle.result();
    if (isJobResult(result)) return ended({ jobStatus: 'completed', progress: result.progress, jobResponsePayload: result.jobResponsePayload, error: null }, null);
    return ended({ jobStatus: 'completed', progress: null, jobResponsePayload: result, error: null }, PROGRESS_UNKNOWN.legacyResult);
  }
  if (status === 'CANCELLED') return ended({ jobStatus: 'cancelled', progress: null, jobResponsePayload: null, error: { code: 'cancelled', message: 'The job was cancelled' } }, PROGRESS_UNKNOWN.cancelled);
  if (status === 'TERMINATED' || status === 'TIMED_OUT') {
    return ended(
      { jobStatus: 'failed', progress: null, jobResponsePayload: null, error: { code: status.toLowerCase(), message: `The job was ${status.toLowerCase().replace('_', ' ')}` } },
      PROGRESS_UNKNOWN.stopped,
    );
  }
  try {
    await handle.result();
  } catch (e) {
    const { error, partial, progress } = failureOf(e);
    return ended({ jobStatus: 'failed', progress, jobResponsePayload: partial, error }, progress ? null : PROGRESS_UNKNOWN.legacyResult);
  }
  return ended({ jobStatus: 'failed', progress: null, jobResponsePayload: null, error: { code: 'job_failed', message: 'The job failed' } }, PROGRESS_UNKNOWN.stopped);
}

export async function readJob(deps: AppDeps, workspaceId: string, jobId: string): Promise<JobRecord> {
  const row = await jobRow(deps, workspaceId, jobId);
  const handle = deps.temporal.workflow.getHandle<JobWorkflow>(row.workflowId);
  const [{ view, progressUnknownReason, closedAt }, deliveries] = await Promise.all([
    stateOf(deps, handle),
    webhookDeliveriesOfJob(deps.orm.em, workspaceId, jobId),
  ]);
  const last = deliveries.at(-1)?.createdAt;
  const updated = [row.createdAt, closedAt, last].filter(Boolean).map((d) => (d as Date).getTime());
  return {
    id: row.id,
    type: row.type,
    jobStatus: view.jobStatus,
    progress: view.progress,
    progressUnknownReason,
    jobResponsePayload: view.jobResponsePayload,
    error: view.error,
    webhookDeliveries: deliveries.map((d) => ({ attempt: d.attempt, statusCode: d.statusCode ?? null, error: d.error ?? null, durationMs: d.durationMs, createdAt: d.createdAt.toISOString() })),
    createdAt: row.createdAt.toISOString(),
    updatedAt: new Date(Math.max(...updated)).toISOString(),
  };
}

export async function cancelJob(deps: AppDeps, workspaceId: string, jobId: string): Promise<JobRecord> {
  const row = await jobRow(deps, workspaceId, jobId);
  const handle = deps.temporal.workflow.getHandle<JobWorkflow>(row.workflowId);
  // A job that has ended while its workflow still retries the webhook is ended too: cancelling it
  // would neither change its outcome nor (the delivery is non-cancellable) stop the retries.
  const { view } = await stateOf(deps, handle);
  if (view.jobStatus !== 'running' && view.jobStatus !== 'queued')
    throw conflict(`Job ${jobId} has already ended (${view.jobStatus}); its webhook notification, if any, is still delivered`, 'job_not_running');
  await handle.cancel();
  // Wait briefly so the answer shows the cancellation rather than a still-running job.
  await Promise.race([handle.result().catch(() => undefined), new Promise((r) => setTimeout(r, 3000))]);
  return readJob(deps, workspaceId, jobId);
}
