/**
 * Erasure of a person from every store of the workspace (`POST /privacy/erasure-requests`,
 * docs/PRIVACY.md). The input names the request only: the identifiers stay in its PostgreSQL row,
 * sealed (the claim-check pattern), so this history never carries them. One activity per store,
 * in order: widen the identifiers to what the matching contacts hold, the database (and the
 * suppression list), the object store, Temporal; then the identifiers are dropped and the
 * per-store counts are the job's result. Every step is idempotent and records its report as it
 * commits, so a worker killed mid-job leaves a job that finishes with the same report.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ErasureReport } from '../activities/privacy.js';
import { runJob } from './job.js';
import type { JobInput, JobResult } from './contract/jobs.js';
import type { ErasureWorkflowInput } from './contract/privacy.js';

const steps = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function erasureWorkflow(input: ErasureWorkflowInput & JobInput): Promise<JobResult<ErasureReport>> {
  return runJob(input, async (job) => {
    const step = { workspaceId: input.workspaceId, requestId: input.requestId };
    job.setProgress(0, 4);
    await steps.erasureResolve(step);
    job.setProgress(1);
    await steps.erasureDatabase(step);
    job.setProgress(2);
    await steps.erasureObjectStore(step);
    job.setProgress(3);
    await steps.erasureTemporal({ ...step, ownWorkflowId: workflowInfo().workflowId });
    job.setProgress(4);
    return steps.erasureComplete(step);
  });
}
