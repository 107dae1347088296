/**
 * Workspace events and their webhook subscriptions (docs/PUBLISHING.md "Events").
 *
 * An event is recorded by the code that makes the state change, in the same transaction
 * (`recordEvent`): the post's outcome (db/schedules.ts `finishScheduleRow`), the integration's
 * move to `reauth_required` (activities/oauthTokens.ts), the expiry sweep. Its `state_key` names
 * the change (`post.failed:<scheduleId>` …) and is unique, so a retried activity or a second
 * caller records nothing twice. The same statement set creates one pending delivery per active
 * subscription of that type; a delivery workflow per row sends it (infra/eventDispatch.ts).
 */
import type { InferEntity } from '@mikro-orm/core';
import type { EntityManager, InferKyselyDB } from '@mikro-orm/postgresql';
import { sql, type Compilable } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { Queryable } from './pool.js';
import { assertWorkspaceScope } from './tenancy.js';
import { runQuery, typedQueries, uuidArray } from './sqlFragments.js';
import { Integration } from './social.js';
import { WebhookEventDelivery, WebhookSubscription, WorkspaceEvent, type EventDeliveryStatus, type EventType } from './eventEntities.js';

type EventsDB = InferKyselyDB<typeof WebhookSubscription | typeof WorkspaceEvent | typeof WebhookEventDelivery | typeof Integration>;
const q = typedQueries<EventsDB>();

/** Runs a typed statement where the caller's transaction is: a pg client (`onClient`) or an entity manager (`onEntityManager`). */
export type RunTyped = <Row>(query: Compilable<Row>) => Promise<Row[]>;
export const onClient =
  (db: Queryable): RunTyped =>
  (query) =>
    runQuery(db, query);
/** Inside `em.transactional` the entity manager's Kysely runs on its transaction. */
export const onEntityManager =
  (em: EntityManager): RunTyped =>
  async <Row>(query: Compilable<Row>) =>
    (await em.getKysely().executeQuery(query.compile())).rows as Row[];

export interface NewEvent {
  workspaceId: string;
  type: EventType;
  /** Names the state change; a second event with the same key is not recorded. */
  stateKey: string;
  /** The event's `data`: ids, statuses and codes, no personal data. */
  data: Record<string, unknown>;
}

/** A delivery to start (its workflow id derives from `id`). */
export interface DeliveryRef {
  id: string;
  workspaceId: string;
}

/** The body every subscription receives: `{id, type, timestamp, data}`. */
export interface EventPayload {
  id: string;
  type: EventType;
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * Records the event and a pending delivery for each active subscription of its type, or nothing
 * (null) when the state change was recorded before. Run it in the state change's transaction.
 */
export async function recordEvent(run: RunTyped, e: NewEvent): Promise<{ eventId: string; deliveries: DeliveryRef[] } | null> {
  const id = uuidv7();
  const payload: EventPayload = { id, type: e.type, timestamp: new Date().toISOString(), data: e.data };
  const inserted = await run(
    q
      .insertInto('workspace_events')
      .values({ id, workspace_id: e.workspaceId, type: e.type, state_key: e.stateKey, payload: sql`${JSON.stringify(payload)}::jsonb` })
      .onConflict((oc) => oc.column('state_key').doNothing())
      .returning('id'),
  );
  if (!inserted.length) return null;
  const subscriptions = await run(
    q
      .selectFrom('webhook_subscriptions')
      .select('id')
      .where('workspace_id', '=', e.workspaceId)
      .where('status', '=', sql.lit('active'))
      .where(sql<boolean>`${e.type} = any(event_types)`),
  );
  const deliveries = subscriptions.map((s) => ({ id: uuidv7(), workspace_id: e.workspaceId, subscription_id: s.id, event_id: id }));
  if (deliveries.length) await run(q.insertInto('webhook_event_deliveries').values(deliveries));
  return { eventId: id, deliveries: deliveries.map((d) => ({ id: d.id, workspaceId: e.workspaceId })) };
}

/** Deliveries whose workflow was never started (a crash between commit and start), oldest first. */
export async function undispatchedDeliveries(run: RunTyped, olderThanSecs: number, limit: number): Promise<DeliveryRef[]> {
  const rows = await run(
    q
      .selectFrom('webhook_event_deliveries')
      .select(['id', 'workspace_id'])
      .where('status', '=', sql.lit('pending'))
      .where('dispatched_at', 'is', null)
      .where('created_at', '<', sql<Date>`now() - make_interval(secs => ${olderThanSecs})`)
      .orderBy('created_at')
      .limit(limit),
  );
  return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id }));
}

export async function markDeliveriesDispatched(run: RunTyped, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await run(q.updateTable('webhook_event_deliveries').set({ dispatched_at: sql`now()` }).where((eb) => eb('id', '=', eb.fn.any(uuidArray(ids)))));
}

/** Connected integrations whose grant ends within `days` (it cannot be refreshed past that: reconnect). */
export async function integrationsEndingWithin(run: RunTyped, days: number): Promise<Array<{ id: string; workspaceId: string; provider: string; grantExpiresAt: Date }>> {
  const rows = await run(
    q
      .selectFrom('integrations')
      .select(['id', 'workspace_id', 'provider', 'grant_expires_at'])
      .where('status', '=', sql.lit('connected'))
      .where('grant_expires_at', 'is not', null)
      .where('grant_expires_at', '<=', sql<Date>`now() + make_interval(days => ${days})`),
  );
  return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id, provider: r.provider, grantExpiresAt: new Date(r.grant_expires_at as Date) }));
}

// ---- Sending (the delivery workflow's activities) ----

/** What one delivery needs to be sent, or null when the delivery (or its subscription) was deleted. */
export async function deliveryToSend(em: EntityManager, workspaceId: string, deliveryId: string) {
  assertWorkspaceScope(workspaceId);
  const row = await em
    .getKysely<EventsDB>()
    .selectFrom('webhook_event_deliveries as d')
    .innerJoin('webhook_subscriptions as s', 's.id', 'd.subscription_id')
    .innerJoin('workspace_events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.status',
      'd.event_id',
      'd.subscription_id',
      's.url',
      's.status as subscription_status',
      's.secret_encrypted',
      's.previous_secret_encrypted',
      's.previous_secret_expires_at',
      'e.payload',
    ])
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
  return row ?? null;
}

/** One attempt's outcome; `final` ends the delivery (delivered, or failed for good). */
export async function recordDeliveryAttempt(
  em: EntityManager,
  deliveryId: string,
  a: { attempt: number; responseCode: number | null; error: string | null; status: EventDeliveryStatus },
): Promise<void> {
  await em
    .getKysely<EventsDB>()
    .updateTable('webhook_event_deliveries')
    .set({
      attempts: sql`greatest(attempts, ${a.attempt})`,
      response_code: a.responseCode,
      last_error: a.error,
      last_attempt_at: sql`now()`,
      status: a.status,
      finished_at: a.status === 'pending' ? null : sql`now()`,
    })
    .where('id', '=', deliveryId)
    .execute();
}

/** Ends a delivery that will not be sent again (retries spent, subscription disabled or deleted). */
export async function failDelivery(em: EntityManager, deliveryId: string, error: string): Promise<void> {
  await em
    .getKysely<EventsDB>()
    .updateTable('webhook_event_deliveries')
    .set({ status: 'failed', last_error: error, finished_at: sql`now()` })
    .where('id', '=', deliveryId)
    .where('status', '=', sql.lit('pending'))
    .execute();
}

/** Stops deliveries to a subscription (its receiver answered 410): status `disabled` with the reason. */
export async function disableSubscription(em: EntityManager, subscriptionId: string, reason: string): Promise<void> {
  await em
    .getKysely<EventsDB>()
    .updateTable('webhook_subscriptions')
    .set({ status: 'disabled', disabled_reason: reason, disabled_at: sql`now()`, updated_at: sql`now()` })
    .where('id', '=', subscriptionId)
    .where('status', '=', sql.lit('active'))
    .execute();
}

// ---- The subscriptions API (request-scoped entity manager) ----

const subscriptionFields = ['id', 'url', 'eventTypes', 'description', 'status', 'disabledReason', 'disabledAt', 'previousSecretExpiresAt', 'createdAt'] as const;
/** A subscription as the API shows it (never its secrets). */
export type SubscriptionRow = Pick<InferEntity<typeof WebhookSubscription>, (typeof subscriptionFields)[number]>;

export async function insertSubscription(
  em: EntityManager,
  s: { id: string; workspaceId: string; url: string; eventTypes: EventType[]; description: string | null; secretEncrypted: string },
): Promise<SubscriptionRow> {
  const row = em.create(WebhookSubscription, { ...s, status: 'active', previousSecretEncrypted: null, previousSecretExpiresAt: null, disabledReason: null, disabledAt: null });
  await em.flush();
  return row;
}

export async function findSubscription(em: EntityManager, id: string): Promise<SubscriptionRow | null> {
  return em.findOne(WebhookSubscription, { id }, { fields: [...subscriptionFields], disableIdentityMap: true });
}

/** A page of the workspace's subscriptions by id (UUIDv7: creation order), and how many there are. */
export async function listSubscriptions(em: EntityManager, page: { after?: { dir: 'next' | 'prev'; id: string }; limit: number }): Promise<{ rows: SubscriptionRow[]; total: number }> {
  const after = page.after;
  const where = after ? { id: after.dir === 'next' ? { $gt: after.id } : { $lt: after.id } } : {};
  const [rows, total] = await Promise.all([
    em.find(WebhookSubscription, where, { fields: [...subscriptionFields], orderBy: { id: after?.dir === 'prev' ? 'desc' : 'asc' }, limit: page.limit, disableIdentityMap: true }),
    em.count(WebhookSubscription, {}),
  ]);
  return { rows, total };
}

/** Deletes the subscription and its delivery records; false when there was none. */
export async function deleteSubscription(em: EntityManager, id: string): Promise<boolean> {
  return (await em.nativeDelete(WebhookSubscription, { id })) > 0;
}

/**
 * Puts a new secret in place; the current one becomes the previous, which keeps signing (a second
 * signature in `webhook-signature`) until `graceUntil`. A rotation within the grace period drops
 * the secret before the previous one.
 */
export async function rotateSubscriptionSecret(em: EntityManager, id: string, sealedNew: string, graceUntil: Date): Promise<SubscriptionRow | null> {
  const updated = await em
    .getKysely<EventsDB>()
    .updateTable('webhook_subscriptions')
    .set((eb) => ({ previous_secret_encrypted: eb.ref('secret_encrypted'), secret_encrypted: sealedNew, previous_secret_expires_at: graceUntil, updated_at: sql`now()` }))
    .where('id', '=', id)
    .returning('id')
    .execute();
  return updated.length ? findSubscription(em, id) : null;
}

/** Resumes deliveries to a disabled subscription; null when there is none. */
export async function enableSubscription(em: EntityManager, id: string): Promise<SubscriptionRow | null> {
  const updated = await em
    .getKysely<EventsDB>()
    .updateTable('webhook_subscriptions')
    .set({ status: 'active', disabled_reason: null, disabled_at: null, updated_at: sql`now()` })
    .where('id', '=', id)
    .returning('id')
    .execute();
  return updated.length ? findSubscription(em, id) : null;
}

export interface DeliveryListRow {
  id: string;
  eventId: string;
  eventType: EventType;
  redeliveryOf: string | null;
  status: EventDeliveryStatus;
  attempts: number;
  responseCode: number | null;
  lastError: string | null;
  createdAt: Date;
  lastAttemptAt: Date | null;
  finishedAt: Date | null;
}

const deliveryRows = (em: EntityManager, subscriptionId: string) =>
  em
    .getKysely<EventsDB>()
    .selectFrom('webhook_event_deliveries as d')
    .innerJoin('workspace_events as e', 'e.id', 'd.event_id')
    .select(['d.id', 'd.event_id', 'e.type', 'd.redelivery_of', 'd.status', 'd.attempts', 'd.response_code', 'd.last_error', 'd.created_at', 'd.last_attempt_at', 'd.finished_at'])
    .where('d.subscription_id', '=', subscriptionId);

type DeliveryDbRow = Awaited<ReturnType<ReturnType<typeof deliveryRows>['execute']>>[number];
const deliveryListRow = (r: DeliveryDbRow): DeliveryListRow => ({
  id: r.id,
  eventId: r.event_id,
  eventType: r.type as EventType,
  redeliveryOf: r.redelivery_of,
  status: r.status as EventDeliveryStatus,
  attempts: r.attempts,
  responseCode: r.response_code,
  lastError: r.last_error,
  createdAt: new Date(r.created_at as Date),
  lastAttemptAt: r.last_attempt_at ? new Date(r.last_attempt_at as Date) : null,
  finishedAt: r.finished_at ? new Date(r.finished_at as Date) : null,
});

/** A page of one subscription's deliveries, newest first (ids are UUIDv7), and how many there are. */
export async function listDeliveries(
  em: EntityManager,
  subscriptionId: string,
  page: { after?: { dir: 'next' | 'prev'; id: string }; limit: number },
): Promise<{ rows: DeliveryListRow[]; total: number }> {
  const after = page.after;
  let query = deliveryRows(em, subscriptionId);
  if (after) query = query.where('d.id', after.dir === 'next' ? '<' : '>', after.id);
  const [rows, count] = await Promise.all([
    query.orderBy('d.id', after?.dir === 'prev' ? 'asc' : 'desc').limit(page.limit).execute(),
    em.getKysely<EventsDB>().selectFrom('webhook_event_deliveries').select(sql<number>`count(*)::int`.as('n')).where('subscription_id', '=', subscriptionId).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.map(deliveryListRow), total: count.n };
}

export async function findDelivery(em: EntityManager, subscriptionId: string, deliveryId: string): Promise<DeliveryListRow | null> {
  const row = await deliveryRows(em, subscriptionId).where('d.id', '=', deliveryId).executeTakeFirst();
  return row ? deliveryListRow(row) : null;
}

/** A new pending delivery of the same event to the same subscription (`POST …/redeliver`), or null when there is no such delivery. */
export async function insertRedelivery(em: EntityManager, workspaceId: string, subscriptionId: string, deliveryId: string): Promise<DeliveryRef | null> {
  assertWorkspaceScope(workspaceId);
  const id = uuidv7();
  const inserted = await em
    .getKysely<EventsDB>()
    .insertInto('webhook_event_deliveries')
    .columns(['id', 'subscription_id', 'event_id', 'redelivery_of'])
    .expression((eb) =>
      eb
        .selectFrom('webhook_event_deliveries')
        .select([eb.val(id).as('id'), 'subscription_id', 'event_id', eb.val(deliveryId).as('redelivery_of')])
        .where('id', '=', deliveryId)
        .where('subscription_id', '=', subscriptionId),
    )
    .returning('id')
    .execute();
  return inserted.length ? { id, workspaceId } : null;
}
