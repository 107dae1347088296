/** What an enrichment provider's answer means: attempt outcomes, failure types, HTTP status classification. */
// ---------------------------------------------------------------------------------------------
// Provider answers
// ---------------------------------------------------------------------------------------------

/**
 * Outcome of one (slice, provider) attempt: `found` data, `not_found` (the provider answered,
 * without data), `rejected` (a 4xx other than 429, an invalid answer or an unknown provider:
 * skipped at once), `unavailable` (429/5xx/timeout still failing after the retries: skipped).
 */
export const ATTEMPT_OUTCOMES = ['found', 'not_found', 'rejected', 'unavailable'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** Failure types the provider activity throws; the workflow maps them to outcomes. */
export const PROVIDER_FAILURE = {
  rejected: 'provider_rejected',
  badResponse: 'provider_bad_response',
  unknown: 'provider_unknown',
  rateLimited: 'provider_rate_limited',
  unavailable: 'provider_unavailable',
  timeout: 'provider_timeout',
} as const;

export type HttpClassification =
  | { kind: 'ok' }
  | { kind: 'rejected' }
  | { kind: 'retry'; type: string; delayMs?: number }
  | { kind: 'skip_rate_limited'; delayMs: number };

/**
 * Classifies a provider's HTTP status. 2xx ok; 429 retried after `Retry-After` (bounded by
 * `maxRetryAfterMs`: a longer wait skips the provider); other 4xx rejected; 5xx retried.
 */
export function classifyProviderStatus(status: number, retryAfter: string | null | undefined, maxRetryAfterMs: number, nowMs: number): HttpClassification {
  if (status >= 200 && status < 300) return { kind: 'ok' };
  if (status === 429) {
    const delayMs = parseRetryAfter(retryAfter, nowMs);
    if (delayMs !== null && delayMs > maxRetryAfterMs) return { kind: 'skip_rate_limited', delayMs };
    return delayMs === null ? { kind: 'retry', type: PROVIDER_FAILURE.rateLimited } : { kind: 'retry', type: PROVIDER_FAILURE.rateLimited, delayMs };
  }
  if (status >= 400 && status < 500) return { kind: 'rejected' };
  return { kind: 'retry', type: PROVIDER_FAILURE.unavailable };
}

/** `Retry-After` as delay-seconds or an HTTP date → milliseconds from now (≥ 0), or null. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}
