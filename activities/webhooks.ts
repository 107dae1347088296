/**
 * Webhooks. The signed POST itself (`postSignedWebhook`) is shared with the workspace events'
 * deliveries (activities/eventDeliveries.ts). Job webhooks: a JSON POST signed with Standard
 * Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`) using the
 * workspace's secret, plus the caller's own headers. Every attempt is recorded in
 * `webhook_deliveries` and shown on the job.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Webhook } from 'standardwebhooks';
import { keyringOf } from '../domain/keyring.js';
import { readWebhookSecret } from '../db/secrets.js';
import { recordWebhookDelivery } from '../db/jobs.js';
import type { ActivityDeps } from './deps.js';
import { OutboundBlockedError, OutboundInvalidRequestError, OutboundTooLargeError, safeRequest } from '../infra/outbound.js';
import { webhookDeliveries } from '../telemetry/metrics.js';
import { WEBHOOK_FAILURE } from '../workflows/contract/failures.js';

export interface DeliverWebhookInput {
  workspaceId: string;
  jobId: string;
  /** Same on every retry, so receivers can deduplicate. */
  messageId: string;
  url: string;
  headers: Record<string, string>;
  payload: unknown;
}

/** Headers the caller may not override: they carry the signature and the content type. */
const RESERVED = new Set(['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'content-length', 'host']);

/** The outcome of one signed POST: the receiver's status (null: no answer) and, unless it acknowledged (2xx), why not. */
export interface SignedPostResult {
  statusCode: number | null;
  error: string | null;
  /** Never worth retrying: the address is refused by the outbound guard, or the request cannot be sent. */
  final: typeof WEBHOOK_FAILURE.outboundBlocked | typeof WEBHOOK_FAILURE.requestInvalid | null;
  durationMs: number;
}

/**
 * One Standard Webhooks POST (job webhooks and workspace events share it): `webhook-id`,
 * `webhook-timestamp` and `webhook-signature` with one `v1,<sig>` per secret, space-separated
 * (the specification's way to sign with an old and a new secret during a rotation), through
 * the outbound guard.
 */
export async function postSignedWebhook(input: {
  url: string;
  secrets: string[];
  messageId: string;
  payload: unknown;
  headers?: Record<string, string>;
  allowList: string[];
}): Promise<SignedPostResult> {
  const body = JSON.stringify(input.payload);
  const now = new Date();
  const signature = input.secrets.map((secret) => new Webhook(secret).sign(input.messageId, now, body)).join(' ');
  // The service's user agent unless the caller gave one (an accepted header is sent, never
  // replaced); names are lower-cased so that a caller's `User-Agent` replaces the default.
  const headers: Record<string, string> = { 'user-agent': 'contact-data-api-webhooks/1' };
  for (const [k, v] of Object.entries(input.headers ?? {})) if (!RESERVED.has(k.toLowerCase())) headers[k.toLowerCase()] = String(v);
  Object.assign(headers, {
    'content-type': 'application/json',
    'webhook-id': input.messageId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': signature,
  });
  const started = Date.now();
  let statusCode: number | null = null;
  let error: string | null = null;
  let final: SignedPostResult['final'] = null;
  try {
    const res = await safeRequest(input.url, { method: 'POST', headers, body, timeoutMs: 10_000, maxBytes: 64 * 1024, maxRedirects: 0, allowList: input.allowList });
    statusCode = res.status;
    if (res.status < 200 || res.status >= 300) error = `receiver answered ${res.status}`;
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
    // A receiver that accepted the event but answers with a large body: delivered, body unread.
    if (e instanceof OutboundTooLargeError && e.status !== null && e.status >= 200 && e.status < 300) {
      statusCode = e.status;
      error = null;
    } else if (e instanceof OutboundBlockedError) {
      final = WEBHOOK_FAILURE.outboundBlocked;
    } else if (e instanceof OutboundInvalidRequestError) {
      // Headers HTTP cannot carry (accepted before the API checked them): no retry will ever send them.
      final = WEBHOOK_FAILURE.requestInvalid;
    }
  }
  return { statusCode, error, final, durationMs: Date.now() - started };
}

export function createWebhookActivities(deps: ActivityDeps) {
  return {
    async deliverWebhook(input: DeliverWebhookInput): Promise<{ statusCode: number }> {
      const secret = await readWebhookSecret(deps.pool, keyringOf(deps.config), input.workspaceId);
      if (!secret) throw ApplicationFailure.nonRetryable('workspace no longer exists', WEBHOOK_FAILURE.gone);
      const attempt = Context.current().info.attempt;
      const r = await postSignedWebhook({ url: input.url, secrets: [secret], messageId: input.messageId, payload: input.payload, headers: input.headers, allowList: deps.config.outboundAllowList });
      await record(deps, input, attempt, r.statusCode, r.error, r.durationMs);
      if (r.final) throw ApplicationFailure.nonRetryable(r.error!, r.final);
      if (r.statusCode === 410) throw ApplicationFailure.nonRetryable('receiver answered 410 Gone', WEBHOOK_FAILURE.gone);
      if (r.error) throw ApplicationFailure.retryable(r.error, WEBHOOK_FAILURE.deliveryFailed);
      return { statusCode: r.statusCode! };
    },
  };
}

/** Records one attempt: on the job (`webhook_deliveries`), in the metrics, and as a log line (never the URL or headers). */
async function record(deps: ActivityDeps, input: DeliverWebhookInput, attempt: number, statusCode: number | null, error: string | null, ms: number) {
  const outcome = error === null ? 'delivered' : statusCode !== null ? 'rejected' : 'failed';
  webhookDeliveries.inc({ outcome });
  Context.current().log[outcome === 'delivered' ? 'info' : 'warn']('webhook delivery', { jobId: input.jobId, attempt, outcome, statusCode, durationMs: ms, ...(error ? { error } : {}) });
  await recordWebhookDelivery(deps.orm.em, { workspaceId: input.workspaceId, jobId: input.jobId, messageId: input.messageId, attempt, url: input.url, statusCode, error, durationMs: ms });
}
