/**
 * The job contract (DESIGN §4): what every job workflow takes and returns, the `status` query
 * `GET /jobs/{jobId}` reads, and the registry of job types: one key per job (also its workflow
 * id prefix and its `JobType` search attribute), naming the workflow type to start, its task
 * queue and the input the caller gives. The API starts a job by its key (api/jobs.ts
 * `startJob`); test/unit/jobRegistry.test.ts checks the table against the workflows.
 */
import { defineQuery, type Sinks } from '@temporalio/workflow';
import type { BulkUpsertArgs } from './contacts.js';
import type { ImportVerifiedCompaniesInput } from './discovery.js';
import type { BulkEnrichmentInput, EnrichmentWorkflowInput } from './enrichment.js';
import type { ErasureWorkflowInput, SubjectAccessWorkflowInput } from './privacy.js';
import type { SourcePullInput } from './sources.js';

export type JobStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface JobError {
  code: string;
  message: string;
}

export interface JobProgress {
  completed: number;
  total: number;
  percent: number;
}

/** The result of every job workflow: the payload and the progress it ended with. */
export interface JobResult<T> {
  jobResponsePayload: T;
  progress: JobProgress;
}

export interface JobView {
  jobStatus: JobStatus;
  progress: JobProgress;
  jobResponsePayload: unknown;
  error: JobError | null;
}

export interface WebhookTarget {
  url: string;
  headers?: Record<string, string>;
}

/** Added by `startJob` to every job workflow's input. */
export interface JobInput {
  jobId: string;
  workspaceId: string;
  jobType: string;
  webhook?: WebhookTarget | null;
}

export const jobStatusQuery = defineQuery<JobView>('status');

/**
 * How a job's end reaches the worker's metrics (worker/telemetry.ts). A sink call is no command:
 * histories are unchanged, and the worker skips it while replaying.
 */
export interface JobSinks extends Sinks {
  jobs: { finished(jobType: string, status: 'completed' | 'failed' | 'cancelled'): void };
}

/** What the caller of each job gives (`startJob` adds `JobInput`), by job key. */
export interface JobArgs {
  enrichment: EnrichmentWorkflowInput;
  'bulk-enrichment': BulkEnrichmentInput;
  'bulk-upsert': BulkUpsertArgs;
  'source-pull': SourcePullInput;
  'import-verified-companies': ImportVerifiedCompaniesInput;
  erasure: ErasureWorkflowInput;
  'subject-access': SubjectAccessWorkflowInput;
}

export type JobKey = keyof JobArgs;

export interface JobRegistration {
  /** The workflow type name (the exported function's name in workflows/). Recorded in histories: never rename. */
  workflowType: string;
  /** Appended to the worker's base task queue; '' is the base queue itself. */
  taskQueueSuffix: string;
}

/**
 * Every job type. All run on the base task queue (provider calls inside choose their own).
 * The keys are stored in `jobs.type` and in search attributes: never rename one.
 */
export const JOBS: { readonly [K in JobKey]: JobRegistration } = {
  enrichment: { workflowType: 'enrichmentWorkflow', taskQueueSuffix: '' },
  'bulk-enrichment': { workflowType: 'bulkEnrichmentWorkflow', taskQueueSuffix: '' },
  'bulk-upsert': { workflowType: 'bulkUpsertContactsWorkflow', taskQueueSuffix: '' },
  'source-pull': { workflowType: 'sourcePullWorkflow', taskQueueSuffix: '' },
  'import-verified-companies': { workflowType: 'importVerifiedCompaniesWorkflow', taskQueueSuffix: '' },
  erasure: { workflowType: 'erasureWorkflow', taskQueueSuffix: '' },
  'subject-access': { workflowType: 'subjectAccessWorkflow', taskQueueSuffix: '' },
};

/** The shape of job `K`'s workflow, for typed starts by name (`client.workflow.start<JobWorkflowOf<K>>`). */
export type JobWorkflowOf<K extends JobKey> = (input: JobArgs[K] & JobInput) => Promise<JobResult<unknown>>;

/** A job's workflow id: `<job key>-<job id>`. */
export function jobWorkflowId(key: JobKey, jobId: string): string {
  return `${key}-${jobId}`;
}
