/**
 * What every job workflow shares (the contract, its types and the `status` query, is
 * ./contract/jobs.ts): the answer to the `status` query `GET /jobs/{jobId}` reads while the
 * workflow runs, the move to `completed` / `failed` / `cancelled`, and the webhook that tells
 * the caller once the status is final. A job workflow is written as
 *
 *   export async function fooWorkflow(input: FooInput & JobInput): Promise<JobResult<FooPayload>> {
 *     return runJob(input, async (job) => { ...; job.setProgress(done, total); return payload; });
 *   }
 *
 * A closed workflow cannot answer the query reliably, so its result carries what the job ended
 * with: `{jobResponsePayload, progress}` (a failure carries the progress as its second detail).
 * Progress is only ever what the workflow counted (rows, slices, companies); nothing is made up.
 */
import { ApplicationFailure, CancellationScope, ContinueAsNew, isCancellation, proxyActivities, proxySinks, setHandler, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { WEBHOOK_FAILURE, rootCause } from './contract/failures.js';
import { jobStatusQuery, type JobError, type JobInput, type JobProgress, type JobResult, type JobSinks, type JobView } from './contract/jobs.js';

const { jobs } = proxySinks<JobSinks>();

export interface JobTracker {
  /** `percent` when the share done is not `completed / total` (e.g. a file whose row count is not known yet). */
  setProgress(completed: number, total?: number, percent?: number): void;
  /** Partial result visible through the status query while the job runs. */
  setPartial(payload: unknown): void;
}

const { deliverWebhook } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  // Standard Webhooks practice: keep trying with backoff for a day.
  scheduleToCloseTimeout: '24 hours',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 hour', nonRetryableErrorTypes: [WEBHOOK_FAILURE.gone, WEBHOOK_FAILURE.outboundBlocked] },
});

/** Builds a failure the job reports as `{code, message}`. */
export function jobFailure(code: string, message: string, partial?: unknown, progress?: JobProgress): ApplicationFailure {
  const details = progress ? [partial ?? null, progress] : partial === undefined ? [] : [partial];
  return ApplicationFailure.create({ type: code, message, nonRetryable: true, details });
}

function describe(err: unknown): JobError {
  // An activity failure wraps the application failure that says what went wrong.
  const e = rootCause(err);
  if (e instanceof ApplicationFailure) return { code: e.type ?? 'job_failed', message: e.message };
  return { code: 'job_failed', message: err instanceof Error ? err.message : String(err) };
}

/**
 * Answers the `status` query from `view` and returns the tracker that updates it: `runJob` uses
 * it, and so does an intermediate run of a job that continues as new (it reports `running`).
 */
export function trackJob(view: JobView): JobTracker {
  setHandler(jobStatusQuery, () => view);
  return {
    setProgress(completed, total, percent) {
      if (total !== undefined) view.progress.total = total;
      view.progress.completed = completed;
      view.progress.percent = percent ?? (view.progress.total ? Math.floor((100 * completed) / view.progress.total) : 0);
    },
    setPartial(payload) {
      view.jobResponsePayload = payload;
    },
  };
}

export async function runJob<T>(input: JobInput, body: (job: JobTracker) => Promise<T>): Promise<JobResult<T>> {
  const view: JobView = { jobStatus: 'running', progress: { completed: 0, total: 0, percent: 0 }, jobResponsePayload: null, error: null };
  const tracker = trackJob(view);
  try {
    const result = await body(tracker);
    view.jobStatus = 'completed';
    view.jobResponsePayload = result;
    // A finished job is done whatever it counted (also when there was nothing to count).
    view.progress.percent = 100;
    await notify(input, view);
    jobs.finished(input.jobType, 'completed');
    return { jobResponsePayload: result, progress: { ...view.progress } };
  } catch (err) {
    // Continuing as new is how a long job hands over to its next run, not a failure.
    if (err instanceof ContinueAsNew) throw err;
    if (isCancellation(err)) {
      view.jobStatus = 'cancelled';
      view.error = { code: 'cancelled', message: 'The job was cancelled' };
      jobs.finished(input.jobType, 'cancelled');
      throw err;
    }
    view.jobStatus = 'failed';
    view.error = describe(err);
    await notify(input, view);
    jobs.finished(input.jobType, 'failed');
    throw jobFailure(view.error.code, view.error.message, view.jobResponsePayload ?? undefined, { ...view.progress });
  }
}

/** The webhook body of DESIGN §4; the same payload `GET /jobs/{jobId}` answers. */
export function webhookPayload(input: JobInput, view: JobView) {
  return {
    type: view.jobStatus === 'completed' ? 'job.completed' : 'job.failed',
    jobId: input.jobId,
    jobType: input.jobType,
    jobStatus: view.jobStatus,
    jobResponsePayload: view.jobResponsePayload,
    ...(view.error ? { error: view.error } : {}),
    timestamp: new Date().toISOString(),
  };
}

async function notify(input: JobInput, view: JobView): Promise<void> {
  if (!input.webhook?.url) return;
  const payload = webhookPayload(input, view);
  // A failed delivery is recorded on the job (webhook_deliveries); it never changes the job's outcome.
  await CancellationScope.nonCancellable(() =>
    deliverWebhook({
      workspaceId: input.workspaceId,
      jobId: input.jobId,
      messageId: `msg_${workflowInfo().workflowId}`,
      url: input.webhook!.url,
      headers: input.webhook!.headers ?? {},
      payload,
    }),
  ).catch(() => undefined);
}
