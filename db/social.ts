/**
 * Social publishing entities: connected accounts (integrations), posts (drafts, scheduled,
 * published, repost children), one schedule row per bulk-schedule row, and media objects stored
 * in MinIO. Tables are created by Migration20261121030000_social.
 */
import { defineEntity, p } from '@mikro-orm/core';
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import { workspaceOwned } from './tenancy.js';
import { workspaceId } from './platform.js';
import type {
  Article,
  Automation,
  IntegrationStatus,
  MediaRef,
  PostError,
  PostStatus,
  Provider,
  ScheduleStatus,
  ThreadItem,
} from '../domain/social.js';

export const Integration = defineEntity({
  name: 'Integration',
  tableName: 'integrations',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('integrations'),
    provider: p.text().$type<Provider>(),
    name: p.text(),
    externalAccountId: p.text(),
    /** AES-256-GCM blob from `encryptCredentials` (domain/credentials.ts); never leaves the server. */
    credentialsEncrypted: p.text().lazy(),
    /** Override of the network's API base URL (tests point it at a fake server). */
    apiBaseUrl: p.text().nullable(),
    status: p.text().$type<IntegrationStatus>().default('connected'),
    createdAt: p.datetime().defaultRaw('now()'),
    /** OAuth scopes granted (empty for a raw-token connect). */
    scopes: p.array().columnType('text[]').default([]),
    /** The account's handle on the network (X username), when known. */
    handle: p.text().nullable(),
    /** When the stored access token ends (it is refreshed before; null: unknown). */
    accessExpiresAt: p.datetime().nullable(),
    /** When the grant itself ends (refresh token expiry; null: until revoked or unknown). */
    grantExpiresAt: p.datetime().nullable(),
  },
  indexes: [
    { name: 'integrations_ws_provider', properties: ['workspaceId', 'provider', 'createdAt', 'id'] },
    { name: 'integrations_ws_created', properties: ['workspaceId', 'createdAt', 'id'] },
    { name: 'integrations_ws_account', properties: ['workspaceId', 'provider', 'externalAccountId'] },
  ],
  checks: [
    { name: 'integrations_provider_check', expression: `provider in ('microblog','pronet','pronetPage')` },
    { name: 'integrations_status_check', expression: `status in ('connected','reauth_required','disconnected')` },
  ],
});

export const Post = defineEntity({
  name: 'Post',
  tableName: 'posts',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('posts'),
    /** Integration id. */
    providerId: p.manyToOne(Integration).mapToPk().fieldName('provider_id').foreignKeyName('posts_provider_id_fkey'),
    status: p.text().$type<PostStatus>(),
    content: p.text(),
    media: p.json<MediaRef[]>().default([] as never),
    articles: p.json<Article[]>().default([] as never),
    threadItems: p.json<ThreadItem[]>().default([] as never),
    automation: p.json<Automation>().defaultRaw(`'{}'`),
    /** True for a comment on someone else's post (external-linkedin-reply). */
    externalPost: p.boolean().default(false),
    externalPostUrl: p.text().nullable(),
    /** Repost children point at the post they reshare (`posts(id) on delete cascade`). */
    parentPostId: () => p.manyToOne(Post).mapToPk().fieldName('parent_post_id').deleteRule('cascade').foreignKeyName('posts_parent_post_id_fkey').nullable(),
    repostDelaySecs: p.integer().nullable(),
    scheduledTime: p.datetime().nullable(),
    publishedAt: p.datetime().nullable(),
    externalId: p.text().nullable(),
    externalUrl: p.text().nullable(),
    /** External ids of published thread items, in order. */
    threadExternalIds: p.json<string[]>().default([] as never),
    error: p.json<PostError>().nullable(),
    /** Rate-limited by its network (429): when the publish workflow's timer retries it; null otherwise. */
    retryAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [
    { name: 'posts_ws_created', properties: ['workspaceId', 'createdAt', 'id'] },
    { name: 'posts_ws_status', properties: ['workspaceId', 'status', 'createdAt', 'id'] },
    { name: 'posts_ws_provider', properties: ['workspaceId', 'providerId', 'createdAt', 'id'] },
    // Serves the scheduledTime sort (asc nulls last / backward: desc nulls first) and ranges.
    { name: 'posts_ws_scheduled', properties: ['workspaceId', 'scheduledTime', 'id'] },
    { name: 'posts_parent', properties: ['parentPostId'], where: 'parent_post_id is not null' },
  ],
  checks: [{ name: 'posts_status_check', expression: `status in ('draft','scheduled','publishing','published','failed','cancelled')` }],
});

export const PostSchedule = defineEntity({
  name: 'PostSchedule',
  tableName: 'post_schedules',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    postId: p.manyToOne(Post).mapToPk().fieldName('post_id').deleteRule('cascade').foreignKeyName('post_schedules_post_id_fkey'),
    workspaceId: workspaceId('post_schedules'),
    providerId: p.manyToOne(Integration).mapToPk().fieldName('provider_id').foreignKeyName('post_schedules_provider_id_fkey'),
    scheduledTime: p.datetime(),
    automation: p.json<Automation>().defaultRaw(`'{}'`),
    workflowId: p.text().unique('post_schedules_workflow_id_key'),
    status: p.text().$type<ScheduleStatus>(),
    /** Row number within the post's schedules (workflow id `publish-<postId>-<n>`). */
    n: p.integer(),
    createdAt: p.datetime().defaultRaw('now()'),
    /** The bulk-schedule batch the row came from (null for a single schedule). */
    batchId: p.uuid().nullable(),
    externalId: p.text().nullable(),
    externalUrl: p.text().nullable(),
    publishedAt: p.datetime().nullable(),
    /** External ids of published thread items, in order. */
    threadExternalIds: p.json<string[]>().default([] as never),
    error: p.json<PostError>().nullable(),
    updatedAt: p.datetime().defaultRaw('now()'),
    /** Set once the batch workflow started the row's publish workflow (it never starts it twice). */
    dispatchedAt: p.datetime().nullable(),
  },
  uniques: [{ name: 'post_schedules_post_id_n_key', properties: ['postId', 'n'] }],
  indexes: [
    { name: 'post_schedules_post', properties: ['postId', 'n'] },
    { name: 'post_schedules_ws_status', properties: ['workspaceId', 'status', 'scheduledTime'] },
    {
      name: 'post_schedules_batch_pending',
      properties: ['batchId', 'scheduledTime'],
      where: `batch_id is not null and status = 'scheduled' and dispatched_at is null`,
    },
  ],
  checks: [{ name: 'post_schedules_status_check', expression: `status in ('scheduled','publishing','published','failed','cancelled')` }],
});

export const MediaObject = defineEntity({
  name: 'MediaObject',
  tableName: 'media_objects',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('media_objects'),
    /** Object name in the media bucket: `<workspaceId>/<uuidv7>.<ext>`. */
    fileName: p.text().unique('media_objects_file_name_key'),
    contentType: p.text(),
    sizeBytes: p.bigint('number'),
    /** Chunks of a chunked upload are stored as-is and only become media once assembled. */
    isChunk: p.boolean().default(false),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ name: 'media_objects_ws_created', properties: ['workspaceId', 'createdAt'] }],
});

/**
 * One remote create of a publish step (post, thread item, comment, reshare), recorded before it
 * is sent: a retried activity that finds `sending` knows the outcome is unknown and looks the
 * object up instead of sending it again; `ownerAttempt` lets a newer attempt take the step over.
 */
export const PublishAttempt = defineEntity({
  name: 'PublishAttempt',
  tableName: 'publish_attempts',
  filters: workspaceOwned,
  properties: {
    stepKey: p.text().primary(),
    workspaceId: workspaceId('publish_attempts'),
    postId: p.manyToOne(Post).mapToPk().fieldName('post_id').deleteRule('cascade').foreignKeyName('publish_attempts_post_id_fkey'),
    state: p.text().$type<'pending' | 'sending' | 'done' | 'failed'>(),
    attempts: p.integer().default(0),
    externalId: p.text().nullable(),
    externalUrl: p.text().nullable(),
    startedAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
    ownerAttempt: p.integer().default(0),
  },
  indexes: [{ name: 'publish_attempts_post', properties: ['postId'] }],
  checks: [{ name: 'publish_attempts_state_check', expression: `state in ('pending','sending','done','failed')` }],
});

/** Kysely over the scheduling tables, typed from the entities (`em.getKysely<SchedulingDB>()`; inside `em.transactional` it runs on the transaction). */
export type SchedulingDB = InferKyselyDB<typeof Integration | typeof Post | typeof PostSchedule>;

/** Kysely over `publish_attempts`, typed from its entity (the publish steps run it on pg: `typedQueries<PublishAttemptDB>()`). */
export type PublishAttemptDB = InferKyselyDB<typeof PublishAttempt>;
