/**
 * The enrichment provider interface (DESIGN §6). A provider answers one slice for one person:
 * the slice's data, or null when it has none. It throws `EnrichmentProviderError` with a kind,
 * and the activity turns the kind alone into a retry decision:
 *
 * - `rejected`      a 4xx other than 429 (bad credentials, invalid input): skip the provider;
 * - `bad_response`  an answer that breaks the contract: skip the provider;
 * - `rate_limited`  429: retry after `Retry-After` (bounded), then skip;
 * - `unavailable`   5xx / connection error: retry with backoff, then skip;
 * - `timeout`       no answer within the provider's timeout: retry with backoff, then skip.
 */
import type { EnrichmentLookup, EnrichmentSlice, SliceDataOf } from '../../domain/enrichment.js';

export interface ProviderCallOptions {
  /** Stable per (job, slice): lets a provider deduplicate a retried call. */
  requestId: string;
  timeoutMs: number;
  /** Most recent posts to return for `pronetPosts`. */
  postsLimit: number;
}

export interface EnrichmentProvider {
  readonly name: string;
  find<S extends EnrichmentSlice>(slice: S, lookup: EnrichmentLookup, opts: ProviderCallOptions): Promise<SliceDataOf<S> | null>;
}

export type ProviderErrorKind = 'rejected' | 'bad_response' | 'rate_limited' | 'unavailable' | 'timeout';

export class EnrichmentProviderError extends Error {
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    /** rate_limited: the provider's `Retry-After`, in ms, when it sent one. */
    readonly retryAfterMs?: number,
    /** rate_limited: the wait asked for exceeds the bound, so the provider is skipped without a retry. */
    readonly final = false,
  ) {
    super(message);
    this.name = 'EnrichmentProviderError';
  }
}
