/**
 * Contact enrichment (`POST /contacts/unified-data-api`): the requested slices run in parallel;
 * each walks its providers in the planned waterfall order, one activity per (slice, provider),
 * until one finds data. Once all are done, one local activity charges each slice that found data
 * by how many providers were tried (`enrich:<jobId>:<slice>`, so never twice), releasing in the
 * same transaction the hold of the request's maximum price that the API took when it accepted the
 * job, and builds the result; a job that fails or is cancelled releases its hold. (Jobs started
 * before holds existed check the balance here instead: `patched('enrichment-credit-hold')`.)
 *
 * The plan (lookup, providers, timeouts, retries) was fixed by the API at acceptance, so a
 * configuration change never alters a running job's history.
 */
import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation, patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { AttemptOutcome } from '../domain/providerStatus.js';
import type { AttemptRecord, EnrichmentResult, EnrichmentSlice, SliceOutcome } from '../domain/enrichment.js';
import type { EnrichmentPlan, PlannedProvider } from '../domain/enrichmentPlan.js';
import { jobFailure, runJob } from './job.js';
import { rootCause } from './contract/failures.js';
import type { EnrichmentWorkflowInput } from './contract/enrichment.js';
import type { JobInput, JobResult } from './contract/jobs.js';

const local = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

/** One (slice, provider) call: a local activity for in-worker providers, else a regular one. */
function attemptActivity(plan: EnrichmentPlan, p: PlannedProvider) {
  const options = {
    // The adapter gives up at the provider's timeout; the margin covers the activity's own work.
    startToCloseTimeout: p.timeoutMs + 2000,
    retry: {
      maximumAttempts: plan.retry.maxAttempts,
      initialInterval: plan.retry.initialIntervalMs,
      maximumInterval: plan.retry.maxIntervalMs,
      backoffCoefficient: 2,
    },
  };
  return (p.local ? proxyLocalActivities<Activities>(options) : proxyActivities<Activities>(options)).enrichmentAttempt;
}

/** What a failed attempt means: the activity names it in the failure's details. */
function failedOutcome(err: unknown): { outcome: AttemptOutcome; error: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const named = cause.details?.[0];
    const outcome: AttemptOutcome = named === 'rejected' || named === 'unavailable' ? named : cause.nonRetryable ? 'rejected' : 'unavailable';
    return { outcome, error: `${cause.type ?? 'error'}: ${cause.message}` };
  }
  // Timeouts (start-to-close) and other failures once the retries are spent.
  const root = rootCause(cause);
  return { outcome: 'unavailable', error: root instanceof Error ? `${root.name}: ${root.message}` : String(root) };
}

async function runSlice(input: EnrichmentWorkflowInput & JobInput, slice: EnrichmentSlice): Promise<SliceOutcome> {
  const { plan } = input;
  const attempts: AttemptRecord[] = [];
  let data: SliceOutcome['data'];
  for (const p of plan.slices[slice] ?? []) {
    const started = Date.now();
    try {
      const r = await attemptActivity(plan, p)({
        jobId: input.jobId,
        slice,
        provider: p.provider,
        lookup: plan.lookup,
        timeoutMs: p.timeoutMs,
        postsLimit: plan.postsLimit,
        maxRetryAfterMs: plan.retry.maxRetryAfterMs,
      });
      attempts.push({ provider: p.provider, outcome: r.outcome, durationMs: Date.now() - started });
      if (r.outcome === 'found') {
        data = r.data;
        break;
      }
    } catch (err) {
      if (isCancellation(err)) throw err;
      attempts.push({ provider: p.provider, durationMs: Date.now() - started, ...failedOutcome(err) });
    }
  }
  return { slice, attempts, ...(data ? { data } : {}) };
}

export async function enrichmentWorkflow(input: EnrichmentWorkflowInput & JobInput): Promise<JobResult<EnrichmentResult>> {
  return runJob(input, async (job) => {
    const slices = Object.keys(input.plan.slices) as EnrichmentSlice[];
    job.setProgress(0, slices.length);
    // The API reserves the maximum price as a hold when it accepts the job: no balance check here,
    // settling releases the hold, and a failure releases it too. Histories from before keep replaying.
    const held = patched('enrichment-credit-hold');
    if (!held && input.billable && input.plan.maxCredits > 0) {
      const balance = await local.creditBalance(input.workspaceId);
      if (balance < input.plan.maxCredits) {
        throw jobFailure('insufficient_credits', `This request needs up to ${input.plan.maxCredits} credits; the balance is ${balance}`);
      }
    }
    try {
      let done = 0;
      const outcomes = await Promise.all(
        slices.map(async (slice) => {
          const o = await runSlice(input, slice);
          job.setProgress(++done, slices.length);
          return o;
        }),
      );
      return await local.enrichmentSettle({ workspaceId: input.workspaceId, jobId: input.jobId, billable: input.billable, slices: outcomes });
    } catch (err) {
      if (held) await CancellationScope.nonCancellable(() => local.enrichmentReleaseHold({ workspaceId: input.workspaceId, jobId: input.jobId }));
      throw err;
    }
  });
}
