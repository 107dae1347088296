/**
 * Webhook subscriptions of a workspace (docs/PUBLISHING.md "Events"): create, list, read,
 * delete, rotate the secret, enable again after a 410, list deliveries and re-send one.
 *
 * Create and rotate answer the signing secret once and are not idempotent (`Idempotency-Key`):
 * a replay would need the secret kept in clear in the idempotency records for 24 h.
 */
import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import {
  deleteSubscription,
  enableSubscription,
  findDelivery,
  findSubscription,
  insertRedelivery,
  insertSubscription,
  listDeliveries,
  listSubscriptions,
  markDeliveriesDispatched,
  onEntityManager,
  rotateSubscriptionSecret,
  type DeliveryListRow,
  type SubscriptionRow,
} from '../../db/events.js';
import { sealSubscriptionSecret } from '../../db/secrets.js';
import { secretRotationGraceMs } from '../../domain/events.js';
import { invalidField } from '../../domain/errors.js';
import { keyringOf } from '../../domain/keyring.js';
import { decodeToken, pageMeta, queryFingerprint, type TokenPayload } from '../../domain/pagination.js';
import { isUuid } from '../../domain/social.js';
import { startEventDeliveries } from '../../infra/eventDispatch.js';
import { conflict, notFound } from '../errors.js';
import { assertOutboundUrl } from '../outboundUrls.js';
import { defineRoute } from '../route.js';
import {
  CreateSubscriptionBody,
  DeliveryPage,
  DeliveryParams,
  DeliveryResponse,
  PageQuery,
  SubscriptionDeleted,
  SubscriptionPage,
  SubscriptionParams,
  SubscriptionResponse,
  SubscriptionSecretResponse,
  type DeliveryJson,
  type SubscriptionJson,
} from '../schemas/webhookSubscriptions.js';

const TAG = 'Webhook subscriptions';
const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

const subscriptionJson = (s: SubscriptionRow): SubscriptionJson => ({
  id: s.id,
  url: s.url,
  eventTypes: s.eventTypes,
  description: s.description ?? null,
  status: s.status,
  disabledReason: (s.disabledReason ?? null) as SubscriptionJson['disabledReason'],
  disabledAt: iso(s.disabledAt),
  previousSecretExpiresAt: s.previousSecretExpiresAt && new Date(s.previousSecretExpiresAt) > new Date() ? iso(s.previousSecretExpiresAt) : null,
  createdAt: iso(s.createdAt)!,
});

const deliveryJson = (d: DeliveryListRow): DeliveryJson => ({
  id: d.id,
  eventId: d.eventId,
  eventType: d.eventType,
  redeliveryOf: d.redeliveryOf,
  status: d.status,
  attempts: d.attempts,
  responseCode: d.responseCode,
  lastError: d.lastError,
  createdAt: d.createdAt.toISOString(),
  lastAttemptAt: iso(d.lastAttemptAt),
  finishedAt: iso(d.finishedAt),
});

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** The keyset position of a page token (an id), or undefined for the first page. */
function keysetOf(secret: string, fingerprint: string, token: string | undefined): { from?: TokenPayload; after?: { dir: 'next' | 'prev'; id: string } } {
  if (!token) return {};
  const from = decodeToken(secret, fingerprint, token);
  const [id] = from.after as [string];
  if (typeof id !== 'string' || !isUuid(id)) throw invalidField('/paginationToken', 'is malformed');
  return { from, after: { dir: from.dir, id } };
}

export const webhookSubscriptionRoutes = [
  defineRoute({
    method: 'post',
    path: '/webhook-subscriptions',
    tag: TAG,
    summary: 'Subscribe a URL to workspace events',
    description:
      'Events (`post.published`, `post.failed`, `integration.reauth_required`, `integration.expires_soon`) are POSTed to `url`, signed with Standard Webhooks headers using the `secret` answered here, once. Not idempotent: the answer carries the secret, which the service does not keep in clear.',
    body: CreateSubscriptionBody,
    responses: { 200: SubscriptionSecretResponse },
    errors: [400, 401, 500],
    errorCodes: ['url_not_allowed'],
    handler: async ({ body, auth, em, deps }) => {
      await assertOutboundUrl(body.url, deps.config.outboundAllowList, '/url');
      const id = uuidv7();
      const secret = newSecret();
      const row = await insertSubscription(em, {
        id,
        workspaceId: auth.workspaceId,
        url: body.url,
        eventTypes: body.eventTypes,
        description: body.description ?? null,
        secretEncrypted: sealSubscriptionSecret(keyringOf(deps.config), id, secret),
      });
      return { data: { ...subscriptionJson(row), secret } };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/webhook-subscriptions',
    tag: TAG,
    summary: 'List webhook subscriptions',
    description: 'Oldest first.',
    query: PageQuery,
    responses: { 200: SubscriptionPage },
    errors: [400, 401, 500],
    errorCodes: ['invalid_pagination_token'],
    handler: async ({ query, auth, em, deps }) => {
      const limit = query.limit ?? 25;
      const fingerprint = queryFingerprint(auth.workspaceId, { r: 'webhook-subscriptions' });
      const { from, after } = keysetOf(deps.config.serverSecret, fingerprint, query.paginationToken);
      const { rows, total } = await listSubscriptions(em, { after, limit: limit + 1 });
      const page = pageMeta({ secret: deps.config.serverSecret, fingerprint, rows, limit, totalRecords: total, keyOf: (r) => [r.id], from });
      return { data: page.data.map(subscriptionJson), meta: page.meta };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/webhook-subscriptions/{id}',
    tag: TAG,
    summary: 'Get a webhook subscription',
    params: SubscriptionParams,
    responses: { 200: SubscriptionResponse },
    errors: [401, 404, 500],
    handler: async ({ params, em }) => {
      const row = isUuid(params.id) ? await findSubscription(em, params.id) : null;
      if (!row) throw notFound('Webhook subscription', params.id);
      return { data: subscriptionJson(row) };
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/webhook-subscriptions/{id}',
    tag: TAG,
    summary: 'Delete a webhook subscription',
    description: 'Stops its deliveries (one in flight may still arrive) and removes its delivery records.',
    params: SubscriptionParams,
    responses: { 200: SubscriptionDeleted },
    errors: [401, 404, 500],
    handler: async ({ params, em }) => {
      if (!(isUuid(params.id) && (await deleteSubscription(em, params.id)))) throw notFound('Webhook subscription', params.id);
      return { data: { id: params.id, deleted: true as const } };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/webhook-subscriptions/{id}/rotate-secret',
    tag: TAG,
    summary: 'Rotate the signing secret',
    description:
      'Answers a new secret, once. Until `previousSecretExpiresAt` (`WEBHOOK_SECRET_ROTATION_GRACE_HOURS`, 24 h unless set) each delivery carries two signatures in `webhook-signature` (new and previous, space-separated, as Standard Webhooks allows), so a receiver can switch at its own pace. Rotating again within that period drops the oldest secret.',
    params: SubscriptionParams,
    responses: { 200: SubscriptionSecretResponse },
    errors: [401, 404, 500],
    handler: async ({ params, em, deps }) => {
      const secret = newSecret();
      const sealed = isUuid(params.id) ? sealSubscriptionSecret(keyringOf(deps.config), params.id, secret) : '';
      const row = isUuid(params.id) ? await rotateSubscriptionSecret(em, params.id, sealed, new Date(Date.now() + secretRotationGraceMs(deps.config.env))) : null;
      if (!row) throw notFound('Webhook subscription', params.id);
      return { data: { ...subscriptionJson(row), secret } };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/webhook-subscriptions/{id}/enable',
    tag: TAG,
    summary: 'Enable a disabled subscription again',
    description: 'After a 410 Gone disabled it (`disabledReason` `receiver_gone`): new events are delivered again. Deliveries that failed meanwhile can be re-sent one by one.',
    params: SubscriptionParams,
    responses: { 200: SubscriptionResponse },
    errors: [401, 404, 500],
    handler: async ({ params, em }) => {
      const row = isUuid(params.id) ? await enableSubscription(em, params.id) : null;
      if (!row) throw notFound('Webhook subscription', params.id);
      return { data: subscriptionJson(row) };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/webhook-subscriptions/{id}/deliveries',
    tag: TAG,
    summary: "List a subscription's deliveries",
    description: 'Newest first: each with its status, attempts, last response code and error.',
    params: SubscriptionParams,
    query: PageQuery,
    responses: { 200: DeliveryPage },
    errors: [400, 401, 404, 500],
    errorCodes: ['invalid_pagination_token'],
    handler: async ({ params, query, auth, em, deps }) => {
      if (!(isUuid(params.id) && (await findSubscription(em, params.id)))) throw notFound('Webhook subscription', params.id);
      const limit = query.limit ?? 25;
      const fingerprint = queryFingerprint(auth.workspaceId, { r: 'webhook-deliveries', s: params.id });
      const { from, after } = keysetOf(deps.config.serverSecret, fingerprint, query.paginationToken);
      const { rows, total } = await listDeliveries(em, params.id, { after, limit: limit + 1 });
      const page = pageMeta({ secret: deps.config.serverSecret, fingerprint, rows, limit, totalRecords: total, keyOf: (r) => [r.id], from });
      return { data: page.data.map(deliveryJson), meta: page.meta };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/webhook-subscriptions/{id}/deliveries/{deliveryId}/redeliver',
    tag: TAG,
    summary: 'Re-send a delivery',
    description:
      'Sends the same event again (same body, same `webhook-id`) as a new delivery, listed with `redeliveryOf`; answers it (status `pending`). The subscription must be active (409 `subscription_disabled`: enable it first).',
    params: DeliveryParams,
    responses: { 200: DeliveryResponse },
    errors: [401, 404, 409, 500],
    errorCodes: ['subscription_disabled'],
    handler: async ({ params, auth, em, deps }) => {
      const sub = isUuid(params.id) ? await findSubscription(em, params.id) : null;
      if (!sub) throw notFound('Webhook subscription', params.id);
      if (sub.status !== 'active') throw conflict(`Webhook subscription ${params.id} is disabled (${sub.disabledReason ?? 'disabled'}); enable it first`, 'subscription_disabled');
      const ref = isUuid(params.deliveryId) ? await insertRedelivery(em, auth.workspaceId, params.id, params.deliveryId) : null;
      if (!ref) throw notFound('Delivery', params.deliveryId);
      // Not started here (Temporal unreachable): the events sweep starts it.
      const started = await startEventDeliveries(deps.temporal, deps.config.temporal.taskQueue, [ref]).catch(() => []);
      await markDeliveriesDispatched(onEntityManager(em), started);
      return { data: deliveryJson((await findDelivery(em, params.id, ref.id))!) };
    },
  }),
];
