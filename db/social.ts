/**
 * Social publishing entities: connected accounts (integrations), posts (drafts, scheduled,
 * published, repost children), one schedule row per bulk-schedule row, and media objects stored
 * in MinIO. Tables are created by Migration20261121030000_social.
 */
import { defineEntity, p } from '@mikro-orm/core';
import { workspaceOwned } from './tenancy.js';
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
    workspaceId: p.uuid(),
    provider: p.string().$type<Provider>(),
    name: p.string(),
    externalAccountId: p.string(),
    /** AES-256-GCM blob from `encryptCredentials` (domain/credentials.ts); never leaves the server. */
    credentialsEncrypted: p.text().lazy(),
    /** Override of the network's API base URL (tests point it at a fake server). */
    apiBaseUrl: p.string().nullable(),
    status: p.string().$type<IntegrationStatus>(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ properties: ['workspaceId', 'provider', 'createdAt'] }],
});

export const Post = defineEntity({
  name: 'Post',
  tableName: 'posts',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: p.uuid(),
    /** Integration id. */
    providerId: p.uuid(),
    status: p.string().$type<PostStatus>(),
    content: p.text(),
    media: p.json<MediaRef[]>(),
    articles: p.json<Article[]>(),
    threadItems: p.json<ThreadItem[]>(),
    automation: p.json<Automation>(),
    /** True for a comment on someone else's post (external-linkedin-reply). */
    externalPost: p.boolean(),
    externalPostUrl: p.text().nullable(),
    /** Repost children point at the post they reshare. */
    parentPostId: p.uuid().nullable(),
    repostDelaySecs: p.integer().nullable(),
    scheduledTime: p.datetime().nullable(),
    publishedAt: p.datetime().nullable(),
    externalId: p.string().nullable(),
    externalUrl: p.text().nullable(),
    /** External ids of published thread items, in order. */
    threadExternalIds: p.json<string[]>(),
    error: p.json<PostError>().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [
    { properties: ['workspaceId', 'createdAt', 'id'] },
    { properties: ['workspaceId', 'status', 'createdAt'] },
    { properties: ['workspaceId', 'providerId', 'createdAt'] },
    { properties: ['workspaceId', 'scheduledTime', 'id'] },
    { properties: ['parentPostId'] },
  ],
});

export const PostSchedule = defineEntity({
  name: 'PostSchedule',
  tableName: 'post_schedules',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    postId: p.uuid(),
    workspaceId: p.uuid(),
    providerId: p.uuid(),
    scheduledTime: p.datetime(),
    automation: p.json<Automation>(),
    workflowId: p.string().unique(),
    status: p.string().$type<ScheduleStatus>(),
    /** Row number within the post's schedules (workflow id `publish-<postId>-<n>`). */
    n: p.integer(),
    createdAt: p.datetime(),
  },
  indexes: [{ properties: ['postId', 'n'] }, { properties: ['workspaceId', 'status', 'scheduledTime'] }],
});

export const MediaObject = defineEntity({
  name: 'MediaObject',
  tableName: 'media_objects',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: p.uuid(),
    /** Object name in the media bucket: `<workspaceId>/<uuidv7>.<ext>`. */
    fileName: p.string().unique(),
    contentType: p.string(),
    sizeBytes: p.bigint('number'),
    /** Chunks of a chunked upload are stored as-is and only become media once assembled. */
    isChunk: p.boolean(),
    createdAt: p.datetime(),
  },
  indexes: [{ properties: ['workspaceId', 'createdAt'] }],
});
