/**
 * Enrichment activities (DESIGN §4, §6):
 *
 * - `enrichmentAttempt`: one (slice, provider) call. Provider failures become Temporal failures
 *   whose type alone decides what happens: non-retryable (`provider_rejected`,
 *   `provider_bad_response`, `provider_unknown`) skip the provider at once; retryable
 *   (`provider_rate_limited` with `nextRetryDelay` = the provider's `Retry-After`,
 *   `provider_unavailable`, `provider_timeout`) are retried by the activity's retry policy, then
 *   the provider is skipped.
 * - `enrichmentSettle`: in one transaction, releases the hold taken at acceptance and charges each
 *   slice that found data by how many providers were tried, once per (job, slice) whatever the
 *   retries (`enrich:<jobId>:<slice>`), and builds the `jobResponsePayload`.
 * - `enrichmentReleaseHold`: gives the hold back when the job fails or is cancelled.
 *
 * Providers are looked up by name in the worker's enrichment configuration, so credentials never
 * travel through workflow history.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { releaseHold, settleJobCredits } from '../../db/credits.js';
import { PROVIDER_FAILURE } from '../../domain/providerStatus.js';
import { assembleEnrichmentResult, providersTried, sliceDataHasContent, sliceDebitKey, slicePrice, type AnySliceData, type EnrichmentLookup, type EnrichmentResult, type EnrichmentSlice, type SettledSlice, type SliceOutcome } from '../../domain/enrichment.js';
import { loadEnrichmentConfig } from '../../infra/enrichmentConfigFile.js';
import { type ResolvedProvider } from '../../domain/enrichmentConfig.js';
import { InsufficientCreditsError } from '../../domain/errors.js';
import type { ActivityDeps } from '../deps.js';
import { DatasetEnrichmentProvider } from './enrichmentDataset.js';
import { HttpEnrichmentProvider } from './enrichmentHttp.js';
import { EnrichmentProviderError, type EnrichmentProvider } from './enrichmentProvider.js';

export interface EnrichmentAttemptInput {
  jobId: string;
  slice: EnrichmentSlice;
  provider: string;
  lookup: EnrichmentLookup;
  timeoutMs: number;
  postsLimit: number;
  maxRetryAfterMs: number;
}

export interface EnrichmentAttemptResult {
  outcome: 'found' | 'not_found';
  data?: AnySliceData;
}

export interface SettleInput {
  workspaceId: string;
  jobId: string;
  billable: boolean;
  slices: SliceOutcome[];
}

export function createEnrichmentProvider(cfg: ResolvedProvider, deps: Pick<ActivityDeps, 'pool' | 'config'>, maxRetryAfterMs: number): EnrichmentProvider {
  switch (cfg.type) {
    case 'dataset':
      return new DatasetEnrichmentProvider(cfg.name, deps.pool);
    case 'http':
      return new HttpEnrichmentProvider(cfg, deps.config.env, maxRetryAfterMs, deps.config.outboundAllowList);
  }
}

/**
 * The Temporal failure for a provider error. Its `details[0]` names the attempt's outcome once
 * the provider is given up on (`rejected` or `unavailable`), so the workflow needs no table of
 * failure types.
 */
function toFailure(e: EnrichmentProviderError): ApplicationFailure {
  switch (e.kind) {
    case 'rejected':
      return ApplicationFailure.create({ message: e.message, type: PROVIDER_FAILURE.rejected, nonRetryable: true, details: ['rejected'] });
    case 'bad_response':
      return ApplicationFailure.create({ message: e.message, type: PROVIDER_FAILURE.badResponse, nonRetryable: true, details: ['rejected'] });
    case 'rate_limited':
      return ApplicationFailure.create({
        message: e.message,
        type: PROVIDER_FAILURE.rateLimited,
        nonRetryable: e.final,
        details: ['unavailable'],
        ...(e.retryAfterMs !== undefined && !e.final ? { nextRetryDelay: Math.max(1, e.retryAfterMs) } : {}),
      });
    case 'unavailable':
      return ApplicationFailure.create({ message: e.message, type: PROVIDER_FAILURE.unavailable, details: ['unavailable'] });
    case 'timeout':
      return ApplicationFailure.create({ message: e.message, type: PROVIDER_FAILURE.timeout, details: ['unavailable'] });
  }
}

export function createEnrichmentActivities(deps: ActivityDeps) {
  return {
    async enrichmentAttempt(input: EnrichmentAttemptInput): Promise<EnrichmentAttemptResult> {
      const config = loadEnrichmentConfig(deps.config.rootDir, deps.config.env);
      const cfg = config.providers[input.provider];
      if (!cfg) {
        throw ApplicationFailure.create({ message: `provider ${input.provider} is not configured on this worker`, type: PROVIDER_FAILURE.unknown, nonRetryable: true, details: ['rejected'] });
      }
      const provider = createEnrichmentProvider(cfg, deps, input.maxRetryAfterMs);
      try {
        const data = await provider.find(input.slice, input.lookup, {
          requestId: `${input.jobId}:${input.slice}`,
          timeoutMs: input.timeoutMs,
          postsLimit: input.postsLimit,
        });
        return sliceDataHasContent(input.slice, data) ? { outcome: 'found', data: data! } : { outcome: 'not_found' };
      } catch (e) {
        if (e instanceof EnrichmentProviderError) throw toFailure(e);
        throw e;
      }
    },

    /**
     * Charges every slice that found data (its own key `enrich:<jobId>:<slice>`, so a retried
     * activity never charges twice) and builds the job's result.
     */
    async enrichmentSettle(input: SettleInput): Promise<EnrichmentResult> {
      const priced = input.slices.map((slice) => ({ slice, amount: slicePrice(slice) }));
      const charged = priced.filter((p) => p.amount > 0);
      // One transaction: the job's hold is released and every found slice debited, or nothing is.
      const results = await settleJobCredits(deps.pool, {
        workspaceId: input.workspaceId,
        jobId: input.jobId,
        billable: input.billable,
        charges: charged.map(({ slice, amount }) => ({
          amount,
          idempotencyKey: sliceDebitKey(input.jobId, slice.slice),
          reason: `enrichment ${slice.slice}`,
          metadata: { slice: slice.slice, provider: slice.attempts.find((a) => a.outcome === 'found')?.provider ?? null, providersTried: providersTried(slice) },
        })),
      });
      const outcome = new Map(charged.map((p, i) => [p.slice, results[i]!]));
      const settled: SettledSlice[] = priced.map(({ slice, amount }) => {
        const r = outcome.get(slice);
        if (!r) return { ...slice, credits: 0 };
        // Only a job that holds nothing (accepted before holds existed) can find the balance spent
        // meanwhile: its data is withheld, not given unpaid.
        if (r instanceof InsufficientCreditsError) {
          const { data: _withheld, ...rest } = slice;
          return { ...rest, credits: 0, chargeError: r.message };
        }
        // A key already charged (an earlier run of this activity) reports that same charge.
        return { ...slice, credits: input.billable ? amount : 0 };
      });
      return assembleEnrichmentResult(settled);
    },

    /** Gives an enrichment job's hold back when it ends without settling (failed or cancelled). */
    async enrichmentReleaseHold(input: { workspaceId: string; jobId: string }): Promise<number> {
      return releaseHold(deps.pool, input.workspaceId, input.jobId);
    },
  };
}
