/**
 * An enrichment provider over HTTP, speaking the JSON contract of docs/providers/enrichment.md:
 *
 *   POST {baseUrl}/v1/enrich
 *   Authorization: Bearer <key from the env variable named by apiKeyEnv>
 *   X-Request-Id: <jobId>:<slice>
 *   {"slice": "emails", "lookup": {"pronet": "...", "fullName": "...", "companyDomain": "..."}, "limit": 20}
 *
 *   200 {"found": true, "data": {"emails": [{"email": "...", "status": "valid"}]}}  |  200 {"found": false}
 *
 * Status classification (domain/enrichment.ts classifyProviderStatus): 4xx other than 429 →
 * rejected; 429 → rate_limited with `Retry-After`; 5xx / network error → unavailable; no answer
 * within `timeoutMs` → timeout. Base URLs come from operator configuration, not from callers;
 * calls go through the outbound filtering agent all the same (a private address needs
 * OUTBOUND_ALLOW_LIST), redirects are not followed, and an error body reaches the job only as
 * the provider's short JSON reason.
 */
import { classifyProviderStatus } from '../../domain/providerStatus.js';
import { sliceDataErrors, type EnrichmentLookup, type EnrichmentSlice, type SliceDataOf } from '../../domain/enrichment.js';
import { type ResolvedProvider } from '../../domain/enrichmentConfig.js';
import {
  OutboundBlockedError,
  OutboundInvalidRequestError,
  OutboundInvalidResponseError,
  OutboundTooLargeError,
  OutboundConnectionError,
  outboundFetch,
  providerErrorReason,
} from '../../infra/outbound.js';
import { EnrichmentProviderError, type EnrichmentProvider, type ProviderCallOptions } from './enrichmentProvider.js';

/** Largest answer accepted from a provider (a slice's data is a few KB). */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** The request body of the contract. */
export interface HttpEnrichRequest {
  slice: EnrichmentSlice;
  lookup: { pronet?: string; fullName?: string; firstName?: string; lastName?: string; companyDomain?: string };
  limit?: number;
}

export class HttpEnrichmentProvider implements EnrichmentProvider {
  readonly name: string;

  constructor(
    private readonly cfg: ResolvedProvider,
    private readonly env: NodeJS.ProcessEnv = process.env,
    /** Upper bound of a `Retry-After` worth waiting for; a longer one skips the provider. */
    private readonly maxRetryAfterMs = 30_000,
    /** Private addresses the operator lets outbound calls reach (OUTBOUND_ALLOW_LIST). */
    private readonly allowList: string[] = [],
  ) {
    this.name = cfg.name;
  }

  async find<S extends EnrichmentSlice>(slice: S, lookup: EnrichmentLookup, opts: ProviderCallOptions): Promise<SliceDataOf<S> | null> {
    const body: HttpEnrichRequest = {
      slice,
      lookup: {
        ...(lookup.pronet ? { pronet: lookup.pronet } : {}),
        ...(lookup.fullName ? { fullName: lookup.fullName } : {}),
        ...(lookup.firstName ? { firstName: lookup.firstName } : {}),
        ...(lookup.lastName ? { lastName: lookup.lastName } : {}),
        ...(lookup.companyDomain ? { companyDomain: lookup.companyDomain } : {}),
      },
      ...(slice === 'pronetPosts' ? { limit: opts.postsLimit } : {}),
    };
    const headers: Record<string, string> = {
      ...(this.cfg.headers ?? {}),
      'content-type': 'application/json',
      accept: 'application/json',
      'x-request-id': opts.requestId,
    };
    const key = this.cfg.apiKeyEnv ? this.env[this.cfg.apiKeyEnv] : undefined;
    if (this.cfg.apiKeyEnv && !key) throw new EnrichmentProviderError('rejected', `${this.name}: environment variable ${this.cfg.apiKeyEnv} (API key) is not set`);
    if (key) headers.authorization = `Bearer ${key}`;

    let status: number;
    let retryAfter: string | null;
    let text: string;
    try {
      // Through the filtering agent: the provider's address is checked when the socket connects.
      const res = await outboundFetch(`${this.cfg.baseUrl}/v1/enrich`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        timeoutMs: opts.timeoutMs,
        maxBytes: MAX_ANSWER_BYTES,
        allowList: this.allowList,
      });
      status = res.status;
      retryAfter = res.headers.get('retry-after');
      text = await res.text();
    } catch (e) {
      const err = e as Error;
      if (err.name === 'TimeoutError' || err.name === 'AbortError') {
        throw new EnrichmentProviderError('timeout', `${this.name}: no answer within ${opts.timeoutMs} ms`);
      }
      if (err instanceof OutboundTooLargeError) throw new EnrichmentProviderError('bad_response', `${this.name}: answer larger than ${MAX_ANSWER_BYTES} bytes`);
      // A refused address or a request HTTP cannot carry (operator configuration): retrying cannot help.
      if (err instanceof OutboundBlockedError) throw new EnrichmentProviderError('rejected', `${this.name}: address not allowed (${err.message})`);
      if (err instanceof OutboundInvalidRequestError) throw new EnrichmentProviderError('rejected', `${this.name}: ${err.message}`);
      if (err instanceof OutboundInvalidResponseError) throw new EnrichmentProviderError('bad_response', `${this.name}: ${err.message}`);
      // One message for every connection failure (no socket error code, which tells a closed port from an unreachable host).
      throw new EnrichmentProviderError('unavailable', `${this.name}: ${err instanceof OutboundConnectionError ? err.message : 'network error'}`);
    }

    const c = classifyProviderStatus(status, retryAfter, this.maxRetryAfterMs, Date.now());
    // The provider's JSON error reason, shortened; a body that is not JSON is never passed on.
    const detail = status >= 200 && status < 300 ? '' : providerErrorReason(status, text);
    switch (c.kind) {
      case 'rejected':
        throw new EnrichmentProviderError('rejected', `${this.name}: HTTP ${status} ${detail}`);
      case 'skip_rate_limited':
        throw new EnrichmentProviderError(
          'rate_limited',
          `${this.name}: HTTP 429, Retry-After ${Math.round(c.delayMs / 1000)} s exceeds the ${Math.round(this.maxRetryAfterMs / 1000)} s bound`,
          c.delayMs,
          true,
        );
      case 'retry':
        if (status === 429) throw new EnrichmentProviderError('rate_limited', `${this.name}: HTTP 429`, c.delayMs);
        throw new EnrichmentProviderError('unavailable', `${this.name}: HTTP ${status} ${detail}`);
      case 'ok':
        break;
    }

    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new EnrichmentProviderError('bad_response', `${this.name}: answer is not JSON`);
    }
    const answer = parsed as { found?: unknown; data?: unknown };
    if (!answer || typeof answer !== 'object' || typeof answer.found !== 'boolean') {
      throw new EnrichmentProviderError('bad_response', `${this.name}: answer lacks the boolean "found"`);
    }
    if (!answer.found) return null;
    const errors = sliceDataErrors(slice, answer.data);
    if (errors.length) throw new EnrichmentProviderError('bad_response', `${this.name}: invalid ${slice} data: ${errors.join('; ')}`);
    return answer.data as SliceDataOf<S>;
  }
}
