/**
 * Subject access (`POST /privacy/access-requests`, docs/PRIVACY.md): exports everything the
 * workspace holds about a person as one JSON document in the object store. The input names the
 * request only: the identifiers stay in its PostgreSQL row, sealed, and the document is read and
 * written by an activity, so this history never carries personal data — only the request id,
 * counts, the object's name and a short-lived presigned link. Each step records its outcome in
 * the request row, so a worker killed mid-job leaves a job that finishes with the same result.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { SubjectAccessResult } from '../activities/subjectAccess.js';
import { runJob } from './job.js';
import type { JobInput, JobResult } from './contract/jobs.js';
import type { SubjectAccessWorkflowInput } from './contract/privacy.js';

const steps = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  // the activities heartbeat every 2 s: a step lost with its worker is retried within seconds
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function subjectAccessWorkflow(input: SubjectAccessWorkflowInput & JobInput): Promise<JobResult<SubjectAccessResult>> {
  return runJob(input, async (job) => {
    const step = { workspaceId: input.workspaceId, requestId: input.requestId };
    job.setProgress(0, 3);
    await steps.accessResolve(step);
    job.setProgress(1);
    await steps.accessExport(step);
    job.setProgress(2);
    const result = await steps.accessComplete(step);
    job.setProgress(3);
    return result;
  });
}
