/**
 * The `type` of every `ApplicationFailure` that crosses the boundary between activities,
 * workflows and the API: one name per failure, used by the code that throws it and by the code
 * that reads it (a retry policy's `nonRetryableErrorTypes`, a `cause.type ===` check), so the two
 * sides cannot drift apart. The values are recorded in histories and shown as job error codes:
 * never change one. Also the one walker of a failure's cause chain. Deterministic: workflows,
 * activities and the API import it alike.
 */
import { ApplicationFailure } from '@temporalio/workflow';

/** Webhook deliveries (job webhooks and event deliveries). */
export const WEBHOOK_FAILURE = {
  /** The receiver answered 410 Gone, or the workspace is gone: final. */
  gone: 'WebhookGone',
  /** The URL resolves to a blocked address: final. */
  outboundBlocked: 'OutboundBlocked',
  /** The request cannot be sent as configured (e.g. invalid header): final. */
  requestInvalid: 'WebhookRequestInvalid',
  /** Any other failed attempt: retried. */
  deliveryFailed: 'WebhookDeliveryFailed',
} as const;

/** Contacts, sources and segments read by ingest and pull activities. */
export const DATA_FAILURE = {
  sourceNotFound: 'source_not_found',
  sourceNotPullable: 'source_not_pullable',
  segmentNotFound: 'segment_not_found',
  stagedRowsMissing: 'staged_rows_missing',
  contactsFileUnreadable: 'contacts_file_unreadable',
  bulkJobNotFound: 'bulk_job_not_found',
} as const;

/** A listening provider's answer to a source pull (activities/dbSources.ts). */
export const SOURCE_PROVIDER_FAILURE = {
  credentialsInvalid: 'provider_credentials_invalid',
  rejectedQuery: 'provider_rejected_query',
  notConfigured: 'provider_not_configured',
  rateLimited: 'provider_rate_limited',
  unavailable: 'provider_unavailable',
} as const;

/**
 * A social network's answer to a publish step: the failure kinds of activities/providers/social.ts
 * (`transient` is retried like any unnamed failure).
 */
export const PUBLISH_FAILURE = {
  invalidInput: 'invalid_input',
  credentialsRevoked: 'credentials_revoked',
  rateLimited: 'rate_limited',
  outcomeUnknown: 'outcome_unknown',
} as const;

/** The `type` of the ApplicationFailure a rejected reschedule or unschedule Update carries. */
export const SCHEDULE_REJECTION = {
  /** No row id, or a `scheduledTime` that is no date. */
  invalid: 'invalid_schedule',
  /** The row is older than the one the workflow holds: a newer schedule replaced it. */
  stale: 'stale_schedule',
  /** The row is not the one the workflow waits for (or it waits for none yet). */
  notCurrent: 'not_current_schedule',
  /** The workflow no longer waits: it claimed its row or is ending; a new row needs a new run. */
  notWaiting: 'not_waiting',
} as const;

/** The first `ApplicationFailure` on `err`'s cause chain (what the failing code said), else the innermost cause. */
export function rootCause(err: unknown): unknown {
  let e = err;
  while (e && !(e instanceof ApplicationFailure) && (e as { cause?: unknown }).cause) e = (e as { cause: unknown }).cause;
  return e;
}
