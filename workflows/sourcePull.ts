/**
 * Source pull (`POST /sources/pull-contacts-from-source/{id}`, job type `source-pull`):
 * marks the source `running`, pages through the audience the listening provider reports for the
 * look-back window, ingests each page (contacts attributed to the source, and to the segment
 * the source is attached to), and ends with `refreshStatus` `succeeded` or `failed`.
 *
 * Periodic refresh (`sourceRefreshWorkflow`, started by the source's Temporal Schedule):
 * registers a `source-pull` job and runs the pull as a child workflow under that job's id, so
 * scheduled pulls are jobs like any other.
 */
import { CancellationScope, ParentClosePolicy, proxyActivities, startChild, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { PullPageResult } from '../activities/dbSources.js';
import { runJob } from './job.js';
import { SOURCE_PROVIDER_FAILURE } from './contract/failures.js';
import { jobWorkflowId, type JobInput, type JobKey, type JobResult } from './contract/jobs.js';
import type { SourcePullInput, SourceRefreshInput } from './contract/sources.js';

const SOURCE_PULL_JOB_TYPE: JobKey = 'source-pull';

/** People per provider page; one activity fetches and ingests one page. */
export const PULL_PAGE_SIZE = 500;
/** Upper bound of pages per pull (500,000 people) so a history stays far below its limits. */
export const MAX_PULL_PAGES = 1000;

export interface SourcePullResult {
  sourceId: string;
  segmentId: string | null;
  provider: string;
  numberOfPastDaysToSync: number;
  window: { since: string; until: string };
  pages: number;
  fetched: number;
  created: number;
  updated: number;
  skipped: number;
  /** People on the suppression list, not written (absent when none). */
  suppressed?: number;
  truncated: boolean;
}

const { beginSourcePull, finishSourcePull, registerScheduledPull, scheduledPullSettings } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

const { pullSourcePage } = proxyActivities<Activities>({
  // Provider call (its own timeout, 30 s by default) plus the ingest of one page.
  startToCloseTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 6,
    nonRetryableErrorTypes: [SOURCE_PROVIDER_FAILURE.credentialsInvalid, SOURCE_PROVIDER_FAILURE.rejectedQuery, SOURCE_PROVIDER_FAILURE.notConfigured],
  },
});

export async function sourcePullWorkflow(input: SourcePullInput & JobInput): Promise<JobResult<SourcePullResult>> {
  return runJob(input, async (job) => {
    const { workspaceId, sourceId } = input;
    const totals: { pages: number; fetched: number; created: number; updated: number; skipped: number; suppressed?: number } = { pages: 0, fetched: 0, created: 0, updated: 0, skipped: 0 };
    try {
      const { query, provider } = await beginSourcePull({
        workspaceId,
        sourceId,
        segmentId: input.segmentId,
        numberOfPastDaysToSync: input.numberOfPastDaysToSync,
      });
      let cursor: string | null = null;
      let truncated = false;
      do {
        const page: PullPageResult = await pullSourcePage({ workspaceId, sourceId, query, cursor, limit: PULL_PAGE_SIZE });
        totals.pages++;
        totals.fetched += page.fetched;
        totals.created += page.created;
        totals.updated += page.updated;
        totals.skipped += page.skipped;
        if (page.suppressed) totals.suppressed = (totals.suppressed ?? 0) + page.suppressed;
        cursor = page.nextCursor;
        job.setProgress(totals.fetched, totals.fetched + (cursor ? PULL_PAGE_SIZE : 0));
        job.setPartial({ sourceId, ...totals });
        if (cursor && totals.pages >= MAX_PULL_PAGES) {
          truncated = true;
          break;
        }
      } while (cursor);
      await finishSourcePull({ workspaceId, sourceId, status: 'succeeded' });
      return {
        sourceId,
        segmentId: input.segmentId,
        provider,
        numberOfPastDaysToSync: input.numberOfPastDaysToSync,
        window: { since: query.since, until: query.until },
        ...totals,
        truncated,
      };
    } catch (err) {
      // Recorded even when the job is being cancelled.
      await CancellationScope.nonCancellable(() => finishSourcePull({ workspaceId, sourceId, status: 'failed' }));
      throw err;
    }
  });
}

/** A UUIDv7 from workflow time and the workflow's deterministic randomness. */
function workflowUuidV7(): string {
  const hex = Date.now().toString(16).padStart(12, '0');
  const rnd = Array.from({ length: 20 }, () => Math.floor(Math.random() * 16).toString(16));
  rnd[0] = '7';
  rnd[4] = ((parseInt(rnd[4]!, 16) & 0x3) | 0x8).toString(16);
  const r = rnd.join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${r.slice(0, 4)}-${r.slice(4, 8)}-${r.slice(8, 20)}`;
}

export async function sourceRefreshWorkflow(input: SourceRefreshInput): Promise<{ jobId: string | null; jobStatus: 'completed' | 'failed' | 'skipped' }> {
  const settings = await scheduledPullSettings(input);
  if (!settings) return { jobId: null, jobStatus: 'skipped' };
  const jobId = workflowUuidV7();
  const workflowId = jobWorkflowId(SOURCE_PULL_JOB_TYPE, jobId);
  const attrs = workflowInfo()
    .typedSearchAttributes.getAll()
    .map((p) => (p.key.name === 'JobType' ? { ...p, value: SOURCE_PULL_JOB_TYPE } : p));
  // Started before its jobs row exists, so GET /jobs/{jobId} never sees a job without a workflow.
  const child = await startChild(sourcePullWorkflow, {
    workflowId,
    args: [
      {
        sourceId: input.sourceId,
        segmentId: null,
        numberOfPastDaysToSync: settings.numberOfPastDaysToSync,
        trigger: 'schedule',
        jobId,
        workspaceId: input.workspaceId,
        jobType: SOURCE_PULL_JOB_TYPE,
        webhook: null,
      },
    ],
    typedSearchAttributes: attrs as never,
    memo: { jobId, workspaceId: input.workspaceId },
    parentClosePolicy: ParentClosePolicy.ABANDON,
  });
  await registerScheduledPull({ ...input, jobId, jobType: SOURCE_PULL_JOB_TYPE, workflowId });
  try {
    await child.result();
    return { jobId, jobStatus: 'completed' };
  } catch {
    // The job's own status says why; the schedule keeps running.
    return { jobId, jobStatus: 'failed' };
  }
}
