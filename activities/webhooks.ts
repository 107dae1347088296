/**
 * Job webhooks: a JSON POST signed with Standard Webhooks headers (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`) using the workspace's secret, plus the caller's own
 * headers. Every attempt is recorded in `webhook_deliveries` and shown on the job.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { Webhook } from 'standardwebhooks';
import { keyringOf } from '../domain/keyring.js';
import { readWebhookSecret } from '../db/secrets.js';
import { recordWebhookDelivery } from '../db/jobs.js';
import type { ActivityDeps } from './deps.js';
import { OutboundBlockedError, OutboundInvalidRequestError, OutboundTooLargeError, safeRequest } from '../infra/outbound.js';
import { webhookDeliveries } from '../telemetry/metrics.js';

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

export function createWebhookActivities(deps: ActivityDeps) {
  return {
    async deliverWebhook(input: DeliverWebhookInput): Promise<{ statusCode: number }> {
      const secret = await readWebhookSecret(deps.pool, keyringOf(deps.config), input.workspaceId);
      if (!secret) throw ApplicationFailure.nonRetryable('workspace no longer exists', 'WebhookGone');
      const body = JSON.stringify(input.payload);
      const now = new Date();
      const signature = new Webhook(secret).sign(input.messageId, now, body);
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
      const attempt = Context.current().info.attempt;
      const started = Date.now();
      let statusCode: number | null = null;
      let error: string | null = null;
      try {
        const res = await safeRequest(input.url, { method: 'POST', headers, body, timeoutMs: 10_000, maxBytes: 64 * 1024, maxRedirects: 0, allowList: deps.config.outboundAllowList });
        statusCode = res.status;
        if (res.status < 200 || res.status >= 300) error = `receiver answered ${res.status}`;
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
        // A receiver that accepted the event but answers with a large body: delivered, body unread.
        if (e instanceof OutboundTooLargeError && e.status !== null && e.status >= 200 && e.status < 300) {
          statusCode = e.status;
          error = null;
        } else if (e instanceof OutboundBlockedError) {
          await record(deps, input, attempt, statusCode, error, Date.now() - started);
          throw ApplicationFailure.nonRetryable(error, 'OutboundBlocked');
        } else if (e instanceof OutboundInvalidRequestError) {
          // Headers HTTP cannot carry (accepted before the API checked them): no retry will ever send them.
          await record(deps, input, attempt, statusCode, error, Date.now() - started);
          throw ApplicationFailure.nonRetryable(error, 'WebhookRequestInvalid');
        }
      }
      await record(deps, input, attempt, statusCode, error, Date.now() - started);
      if (statusCode === 410) throw ApplicationFailure.nonRetryable('receiver answered 410 Gone', 'WebhookGone');
      if (error) throw ApplicationFailure.retryable(error, 'WebhookDeliveryFailed');
      return { statusCode: statusCode! };
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
