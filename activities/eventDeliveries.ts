/**
 * Workspace events to webhook subscriptions (docs/PUBLISHING.md "Events"): sending one delivery
 * (`deliverEvent`, retried by its workflow, workflows/webhookEventDelivery.ts), starting the
 * delivery workflows of a freshly recorded event (`dispatchEventDeliveries`), and the periodic
 * sweep (`sweepWorkspaceEvents`: `integration.expires_soon`, and deliveries a crash left unstarted).
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps.js';
import { postSignedWebhook } from './webhooks.js';
import { eventMessageId, eventStateKey, expiryNoticeDays } from '../domain/events.js';
import { keyringOf } from '../domain/keyring.js';
import {
  deliveryToSend,
  disableSubscription,
  failDelivery,
  integrationsEndingWithin,
  markDeliveriesDispatched,
  onClient,
  recordDeliveryAttempt,
  recordEvent,
  undispatchedDeliveries,
  type DeliveryRef,
} from '../db/events.js';
import { withTransaction } from '../db/pool.js';
import { openSubscriptionSecret } from '../db/secrets.js';
import { withoutTenancy } from '../db/tenancy.js';
import { startEventDeliveries, type EventDeliveryInput } from '../infra/eventDispatch.js';
import { webhookDeliveries } from '../telemetry/metrics.js';
import { WEBHOOK_FAILURE } from '../workflows/contract/failures.js';

const BY_DELIVERY_ID = 'marks event deliveries started, by the (globally unique) ids just recorded';
const SWEEP = 'the events sweep reads every workspace: grants ending soon, deliveries left unstarted';

/** A delivery row left unstarted this long is started by the sweep (the recording process normally starts it at once). */
const UNSTARTED_AFTER_SECS = 30;

/**
 * Starts the delivery workflows of deliveries just recorded. Never throws: a delivery not started
 * here stays `dispatched_at is null` and the events sweep starts it.
 */
export async function dispatchEventDeliveries(deps: Pick<ActivityDeps, 'temporal' | 'config' | 'pool' | 'log'>, deliveries: DeliveryRef[]): Promise<void> {
  if (!deliveries.length) return;
  try {
    const started = await startEventDeliveries(deps.temporal, deps.config.temporal.taskQueue, deliveries);
    await withoutTenancy(BY_DELIVERY_ID, () => markDeliveriesDispatched(onClient(deps.pool), started));
  } catch (err) {
    deps.log.warn({ err, deliveries: deliveries.length }, 'event deliveries not started; the events sweep will start them');
  }
}

export function createEventDeliveryActivities(deps: ActivityDeps) {
  return {
    /** One attempt at one delivery; throws (retryable) unless the receiver acknowledged it or it can never be sent. */
    async deliverEvent(input: EventDeliveryInput): Promise<{ statusCode: number } | { skipped: string }> {
      const em = deps.orm.em;
      const d = await deliveryToSend(em, input.workspaceId, input.deliveryId);
      // Deleted with its subscription, or already ended (a redelivery is a row of its own).
      if (!d) return { skipped: 'the delivery no longer exists' };
      if (d.status !== 'pending') return { skipped: `the delivery is already ${d.status}` };
      if (d.subscription_status !== 'active') {
        await failDelivery(em, d.id, 'the subscription is disabled');
        return { skipped: 'the subscription is disabled' };
      }
      const keyring = keyringOf(deps.config);
      const secrets = [openSubscriptionSecret(keyring, d.subscription_id, d.secret_encrypted)];
      // During a rotation's grace period both secrets sign (Standard Webhooks: several `v1,` signatures).
      if (d.previous_secret_encrypted && d.previous_secret_expires_at && new Date(d.previous_secret_expires_at as Date) > new Date()) {
        secrets.push(openSubscriptionSecret(keyring, d.subscription_id, d.previous_secret_encrypted));
      }
      const attempt = Context.current().info.attempt;
      const r = await postSignedWebhook({ url: d.url, secrets, messageId: eventMessageId(d.event_id), payload: d.payload, allowList: deps.config.outboundAllowList });
      const gone = r.statusCode === 410;
      const status = r.error === null ? 'delivered' : gone || r.final ? 'failed' : 'pending';
      await recordDeliveryAttempt(em, d.id, { attempt, responseCode: r.statusCode, error: r.error, status });
      const outcome = r.error === null ? 'delivered' : r.statusCode !== null ? 'rejected' : 'failed';
      webhookDeliveries.inc({ outcome });
      // Never the URL: it may carry a token of the receiver's.
      Context.current().log[outcome === 'delivered' ? 'info' : 'warn']('event delivery', { deliveryId: d.id, attempt, outcome, statusCode: r.statusCode, durationMs: r.durationMs });
      if (gone) {
        await disableSubscription(em, d.subscription_id, 'receiver_gone');
        throw ApplicationFailure.nonRetryable('receiver answered 410 Gone: subscription disabled', WEBHOOK_FAILURE.gone);
      }
      if (r.final) throw ApplicationFailure.nonRetryable(r.error!, r.final);
      if (r.error) throw ApplicationFailure.retryable(r.error, WEBHOOK_FAILURE.deliveryFailed);
      return { statusCode: r.statusCode! };
    },

    /** Ends a delivery whose retries are spent (a no-op when an attempt already ended it). */
    async failEventDelivery(input: EventDeliveryInput & { error: string }): Promise<void> {
      await failDelivery(deps.orm.em, input.deliveryId, input.error);
    },

    /**
     * The events sweep (Temporal Schedule, worker/schedules.ts): one `integration.expires_soon`
     * per grant ending within `INTEGRATION_EXPIRY_NOTICE_DAYS`, and a start for every delivery
     * left unstarted.
     */
    async sweepWorkspaceEvents(): Promise<{ expiresSoon: number; started: number }> {
      return withoutTenancy(SWEEP, async () => {
        const fresh: DeliveryRef[] = [];
        let expiresSoon = 0;
        for (const i of await integrationsEndingWithin(onClient(deps.pool), expiryNoticeDays(deps.config.env))) {
          const recorded = await withTransaction(deps.pool, (tx) =>
            recordEvent(onClient(tx), {
              workspaceId: i.workspaceId,
              type: 'integration.expires_soon',
              stateKey: eventStateKey.expiresSoon(i.id, i.grantExpiresAt),
              data: { integrationId: i.id, provider: i.provider, grantExpiresAt: i.grantExpiresAt.toISOString() },
            }),
          );
          if (recorded) {
            expiresSoon++;
            fresh.push(...recorded.deliveries);
          }
        }
        const unstarted = await undispatchedDeliveries(onClient(deps.pool), UNSTARTED_AFTER_SECS, 500);
        const all = [...fresh, ...unstarted];
        await dispatchEventDeliveries(deps, all);
        return { expiresSoon, started: all.length };
      });
    },
  };
}
