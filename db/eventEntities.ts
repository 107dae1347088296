/** Entities of workspace events and their webhook subscriptions (Migration20261128600000_webhook_events, docs/PUBLISHING.md "Events"). */
import { defineEntity, p } from '@mikro-orm/core';
import { workspaceOwned } from './tenancy.js';
import { workspaceId } from './platform.js';

import type { EventType } from '../domain/events.js';

export type { EventType };
export type SubscriptionStatus = 'active' | 'disabled';
export type EventDeliveryStatus = 'pending' | 'delivered' | 'failed';

export const WebhookSubscription = defineEntity({
  name: 'WebhookSubscription',
  tableName: 'webhook_subscriptions',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('webhook_subscriptions'),
    url: p.text(),
    eventTypes: p.array().columnType('text[]').$type<EventType[]>(),
    description: p.text().nullable(),
    /** `whsec_` + base64, sealed with the keyring (context `webhook-subscription:<id>`); shown once, at creation or rotation. */
    secretEncrypted: p.text().lazy(),
    /** The secret a rotation replaced: deliveries are signed with both until `previousSecretExpiresAt`. */
    previousSecretEncrypted: p.text().nullable().lazy(),
    previousSecretExpiresAt: p.datetime().nullable(),
    status: p.text().$type<SubscriptionStatus>().default('active'),
    /** Why deliveries stopped (`receiver_gone`: the receiver answered 410). */
    disabledReason: p.text().nullable(),
    disabledAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ name: 'webhook_subscriptions_workspace', properties: ['workspaceId', 'createdAt'] }],
  checks: [{ name: 'webhook_subscriptions_status_check', expression: `status in ('active','disabled')` }],
});

export const WorkspaceEvent = defineEntity({
  name: 'WorkspaceEvent',
  tableName: 'workspace_events',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('workspace_events'),
    type: p.text().$type<EventType>(),
    /** The state change this event reports (e.g. `post.failed:<scheduleId>`): unique, so it is recorded once. */
    stateKey: p.text().unique('workspace_events_state_key_unique'),
    /** The delivered body: ids and codes only (no post text, no account handle). */
    payload: p.json<Record<string, unknown>>(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ name: 'workspace_events_workspace', properties: ['workspaceId', 'createdAt'] }],
});

export const WebhookEventDelivery = defineEntity({
  name: 'WebhookEventDelivery',
  tableName: 'webhook_event_deliveries',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('webhook_event_deliveries'),
    subscriptionId: p.manyToOne(WebhookSubscription).mapToPk().fieldName('subscription_id').deleteRule('cascade').foreignKeyName('webhook_event_deliveries_subscription_id_fkey'),
    eventId: p.manyToOne(WorkspaceEvent).mapToPk().fieldName('event_id').deleteRule('cascade').foreignKeyName('webhook_event_deliveries_event_id_fkey'),
    /** The delivery this one re-sends (`POST …/redeliver`). */
    redeliveryOf: p.uuid().nullable(),
    status: p.text().$type<EventDeliveryStatus>().default('pending'),
    attempts: p.integer().default(0),
    /** The receiver's status of the last attempt; null when no response came. */
    responseCode: p.integer().nullable(),
    lastError: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    /** When its delivery workflow was started (null: not yet; the events sweep starts it). */
    dispatchedAt: p.datetime().nullable(),
    lastAttemptAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
  },
  indexes: [
    { name: 'webhook_event_deliveries_subscription', properties: ['subscriptionId', 'createdAt'] },
    { name: 'webhook_event_deliveries_event', properties: ['eventId'] },
    { name: 'webhook_event_deliveries_undispatched', expression: `create index webhook_event_deliveries_undispatched on webhook_event_deliveries(created_at) where status = 'pending' and dispatched_at is null` },
  ],
  checks: [{ name: 'webhook_event_deliveries_status_check', expression: `status in ('pending','delivered','failed')` }],
});
