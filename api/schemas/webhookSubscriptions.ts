/** Webhook subscriptions and the workspace events they receive (docs/PUBLISHING.md "Events"). */
import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES } from '../../domain/events.js';
import { DataOf, NonBlankString, PageOf, PaginationToken } from './common.js';

export const EventTypeSchema = Type.Union(
  EVENT_TYPES.map((t) => Type.Literal(t)),
  { description: '`post.published`, `post.failed`, `integration.reauth_required`, `integration.expires_soon`' },
);

export const CreateSubscriptionBody = Type.Object(
  {
    url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000, description: 'Receiver; must resolve to a public address (the outbound guard)', examples: ['https://hooks.example.com/social'] }),
    eventTypes: Type.Array(EventTypeSchema, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true }),
    description: Type.Optional(NonBlankString({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type CreateSubscriptionBody = Static<typeof CreateSubscriptionBody>;

const date = Type.String({ format: 'date-time' });
const nullableDate = Type.Union([date, Type.Null()]);

export const Subscription = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String(),
    eventTypes: Type.Array(EventTypeSchema),
    description: Type.Union([Type.String(), Type.Null()]),
    status: Type.Union([Type.Literal('active'), Type.Literal('disabled')], { description: '`disabled`: nothing is delivered (see `disabledReason`); `POST …/enable` resumes' }),
    disabledReason: Type.Union([Type.Literal('receiver_gone'), Type.Null()], { description: '`receiver_gone`: the receiver answered 410 Gone' }),
    disabledAt: nullableDate,
    previousSecretExpiresAt: Type.Union([date, Type.Null()], { description: 'After a rotation: until then deliveries carry a second signature with the previous secret' }),
    createdAt: date,
  },
  { description: 'A webhook subscription. Its secret is shown once, at creation and at rotation.' },
);
export type SubscriptionJson = Static<typeof Subscription>;

export const SubscriptionWithSecret = Type.Object(
  {
    ...Subscription.properties,
    secret: Type.String({ description: 'Standard Webhooks signing secret (`whsec_` + base64); shown only in this response', examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] }),
  },
  { description: 'The subscription and its new signing secret, shown this once' },
);

export const SubscriptionResponse = DataOf(Subscription);
export const SubscriptionSecretResponse = DataOf(SubscriptionWithSecret);
export const SubscriptionPage = PageOf(Subscription);
export const SubscriptionDeleted = DataOf(Type.Object({ id: Type.String(), deleted: Type.Literal(true) }));

export const PageQuery = Type.Object(
  { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })), paginationToken: Type.Optional(PaginationToken) },
  { additionalProperties: false },
);

export const SubscriptionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });
export const DeliveryParams = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 100 }), deliveryId: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const Delivery = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    eventId: Type.String({ format: 'uuid', description: 'The event (`id` of the body); the `webhook-id` header is `msg_<eventId>`, the same on every attempt and redelivery' }),
    eventType: EventTypeSchema,
    redeliveryOf: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'The delivery this one re-sends' }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
      description: '`pending`: not yet acknowledged (retried with backoff for 24 h); `delivered`: a 2xx; `failed`: retries spent, 410, an address the guard refuses, or the subscription was disabled',
    }),
    attempts: Type.Integer({ description: 'Attempts made so far' }),
    responseCode: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's status at the last attempt (null: no answer)" }),
    lastError: Type.Union([Type.String(), Type.Null()]),
    createdAt: date,
    lastAttemptAt: nullableDate,
    finishedAt: nullableDate,
  },
  { description: 'One delivery of an event to a subscription' },
);
export type DeliveryJson = Static<typeof Delivery>;
export const DeliveryPage = PageOf(Delivery);
export const DeliveryResponse = DataOf(Delivery);

// ---- Event bodies (published in the document's `webhooks`) ----

const eventEnvelope = (type: (typeof EVENT_TYPES)[number], $id: string, data: ReturnType<typeof Type.Object>, description: string) =>
  Type.Object(
    {
      id: Type.String({ format: 'uuid', description: 'Event id; `webhook-id` is `msg_<id>`' }),
      type: Type.Literal(type),
      timestamp: Type.String({ format: 'date-time', description: 'When the state change was recorded' }),
      data,
    },
    { $id, description },
  );

const postIds = {
  postId: Type.String({ format: 'uuid' }),
  scheduleId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'The schedule row that ended; null for a repost child (the post is its own schedule)' }),
  parentPostId: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'Of a repost child: the post it reshares' })),
  integrationId: Type.String({ format: 'uuid', description: 'The `providerId` it published with' }),
};

export const PostPublishedEvent = eventEnvelope(
  'post.published',
  'PostPublishedEvent',
  Type.Object({ ...postIds, externalId: Type.Union([Type.String(), Type.Null()]), externalUrl: Type.Union([Type.String(), Type.Null()]), publishedAt: nullableDate }),
  'A schedule row of a post, or a repost child, published (one event per row or child, never per retry). Ids only: read the post for its content.',
);
export const PostFailedEvent = eventEnvelope(
  'post.failed',
  'PostFailedEvent',
  Type.Object({ ...postIds, error: Type.Object({ code: Type.String({ description: 'Stable code, e.g. `integration_reauth_required`; the post carries the message', examples: ['integration_reauth_required'] }) }) }),
  'A schedule row of a post, or a repost child, failed for good (after its retries). It can be rescheduled.',
);
const integrationIds = { integrationId: Type.String({ format: 'uuid' }), provider: Type.String({ examples: ['microblog'] }) };
export const IntegrationReauthRequiredEvent = eventEnvelope(
  'integration.reauth_required',
  'IntegrationReauthRequiredEvent',
  Type.Object({ ...integrationIds, status: Type.Literal('reauth_required') }),
  'The network ended the grant (revoked, expired): reconnect through OAuth (same integration id). One event per ended grant.',
);
export const IntegrationExpiresSoonEvent = eventEnvelope(
  'integration.expires_soon',
  'IntegrationExpiresSoonEvent',
  Type.Object({ ...integrationIds, grantExpiresAt: date }),
  'The grant ends within `INTEGRATION_EXPIRY_NOTICE_DAYS` (7 unless set) and cannot be refreshed past that: reconnect before. One event per grant.',
);

export const EVENT_BODIES = [PostPublishedEvent, PostFailedEvent, IntegrationReauthRequiredEvent, IntegrationExpiresSoonEvent] as const;
