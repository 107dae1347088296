/**
 * One delivery of a workspace event to one webhook subscription (id
 * `webhook-event-delivery-<deliveryId>`, started by infra/eventDispatch.ts): at least once, the
 * activity retried with backoff for 24 h like job webhooks; every attempt is recorded on the
 * delivery row. 410 Gone disables the subscription (no retry).
 */
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { EventDeliveryInput } from '../infra/eventDispatch.js';
import { WEBHOOK_FAILURE } from './contract/failures.js';

const { deliverEvent } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  scheduleToCloseTimeout: '24 hours',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 hour', nonRetryableErrorTypes: [WEBHOOK_FAILURE.gone, WEBHOOK_FAILURE.outboundBlocked, WEBHOOK_FAILURE.requestInvalid] },
});
const { failEventDelivery } = proxyActivities<Activities>({ startToCloseTimeout: '30 seconds', retry: { maximumInterval: '1 minute' } });

export async function webhookEventDeliveryWorkflow(input: EventDeliveryInput): Promise<void> {
  try {
    await deliverEvent(input);
  } catch (err) {
    const cause = (err as { cause?: unknown }).cause;
    const message = cause instanceof ApplicationFailure ? cause.message : err instanceof Error ? err.message : String(err);
    await failEventDelivery({ ...input, error: `gave up: ${message}` });
  }
}
