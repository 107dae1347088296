/**
 * Scheduling: bulk-schedule (validate every row first, then write all rows in one transaction
 * and hand them to one dispatch workflow that starts one publish workflow per row), unschedule
 * (cancels the waiting rows and tells their workflows), and scheduled comments on external
 * pronet posts (a draft with `externalPost: true` scheduled through the same pipeline).
 * Mounted before the posts routes: these static paths share the `/v1/posts/` prefix.
 */
import { TypedSearchAttributes } from '@temporalio/common';
import { v7 as uuidv7 } from 'uuid';
import type { AppDeps } from '../deps.js';
import { SA } from '../../domain/searchAttributes.js';
import { invalidField, type ErrorDetail } from '../../domain/errors.js';
import { ApiError, conflict } from '../errors.js';
import { contentProblem, emptyContentProblem, scheduleBatchWorkflowId, scheduledTimeProblem } from '../../domain/publishing.js';
import type { scheduleBatchWorkflow } from '../../workflows/scheduleBatch.js';
import { PUBLISH_WORKFLOWS } from '../../workflows/contract/publishing.js';
import { parsePronetPostUrl } from '../../domain/pronetUrls.js';
import { isUuid, providerKindsCompatible, type Automation } from '../../domain/social.js';
import type { Queryable } from '../../db/pool.js';
import { mediaContentTypes } from '../../db/media.js';
import { insertExternalReplyDraft, markRepostCancelled } from '../../db/posts.js';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  cancelSchedules,
  livePublishRows,
  lockPostsForScheduling,
  postsForSchedule,
  replaceSchedules,
  type NewScheduleRow,
  type PostForSchedule,
  type ReplacedRow,
} from '../../db/schedules.js';
import { connectedIntegrationProviders } from '../../db/integrations.js';
import { unscheduleWaitingPublishes } from '../publishWorkflows.js';
import { committedPost, connectedProvider, lockedPostOr404 } from '../postLoaders.js';
import { defineRoute } from '../route.js';
import { PostIdParams, PostResponse, postJson } from '../schemas/posts.js';
import { BulkScheduleBody, ExternalReplyBody, MAX_SCHEDULE_ROWS, MessageResponse } from '../schemas/publishing.js';

const MAX_DETAILS = 50;

/**
 * Named in the descriptions of the operations that take a `scheduledTime`: the one rule of theirs
 * JSON Schema cannot carry (issue 27 item 21; scripts/fuzz_hooks.py excuses exactly this refusal).
 */
export const SCHEDULED_TIME_RULE =
  ' Rule outside the schema: `scheduledTime` must be in the future when the request arrives (a property of the clock, which JSON Schema ' +
  'cannot carry; its shape is in the schema); a past time answers 400 `validation_failed` "must be in the future" naming the field.';

function validationFailed(details: ErrorDetail[]): ApiError {
  const first = details[0]!;
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
  return new ApiError(400, 'validation_failed', `${first.path}: ${first.message}${more}; nothing was scheduled`, details);
}

async function mediaTypes(db: Queryable, workspaceId: string, posts: PostForSchedule[]): Promise<Map<string, string>> {
  const names = new Set<string>();
  for (const p of posts) {
    p.media.forEach((m) => names.add(m.fileName));
    p.thread_items.forEach((t) => t.media?.forEach((m) => names.add(m.fileName)));
  }
  return mediaContentTypes(db, workspaceId, [...names]);
}

/**
 * Every row checked before anything is written: the post (of this workspace, draft or scheduled,
 * not a repost child, listed once, nothing of it publishing), the integration (connected, of this
 * workspace, of a kind that suits the post and its content) and the time (ISO 8601, future).
 */
async function validateBulk(db: Queryable, em: EntityManager, workspaceId: string, body: BulkScheduleBody, now: Date): Promise<NewScheduleRow[]> {
  const details: ErrorDetail[] = [];
  const fail = (path: string, message: string) => {
    if (details.length < MAX_DETAILS) details.push({ path, message });
  };
  const total = body.posts.reduce((s, p) => s + p.schedules.length, 0);
  if (total > MAX_SCHEDULE_ROWS) throw invalidField('/posts', `carries ${total} schedule rows; at most ${MAX_SCHEDULE_ROWS} per request`);

  const postIds = [...new Set(body.posts.map((p) => p.postId.toLowerCase()).filter(isUuid))];
  const providerIds = [...new Set(body.posts.flatMap((p) => p.schedules.map((s) => s.providerId.toLowerCase())).filter(isUuid))];
  const [posts, kindById, live] = await Promise.all([
    postsForSchedule(em, workspaceId, postIds),
    connectedIntegrationProviders(em, providerIds),
    livePublishRows(em, postIds),
  ]);
  const postById = new Map(posts.map((p) => [p.id, p]));
  const publishing = new Set(live.map((r) => r.post_id));
  const types = await mediaTypes(db, workspaceId, posts);

  const rows: NewScheduleRow[] = [];
  const missing: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const [i, entry] of body.posts.entries()) {
    const id = entry.postId.toLowerCase();
    const post = postById.get(id);
    if (!post) {
      missing.push({ path: `/posts/${i}/postId`, message: 'is not a post of this workspace' });
      continue;
    }
    if (seen.has(id)) fail(`/posts/${i}/postId`, 'is listed twice; give one entry with several schedules');
    seen.add(id);
    if (post.parent_post_id) fail(`/posts/${i}/postId`, 'is a repost child; it publishes with its parent');
    // A post that failed only because its account needed reconnecting is scheduled again after the reconnect.
    else if (post.status !== 'draft' && post.status !== 'scheduled' && !(post.status === 'failed' && post.error?.code === 'integration_reauth_required')) {
      fail(`/posts/${i}/postId`, `is ${post.status}; only draft or scheduled posts (or failed with integration_reauth_required) can be scheduled`);
    }
    else if (publishing.has(id)) fail(`/posts/${i}/postId`, 'is already being published');
    const empty = emptyContentProblem({ content: post.content, media: post.media, threadItems: post.thread_items });
    if (empty) fail(`/posts/${i}/postId`, empty);
    for (const [j, s] of entry.schedules.entries()) {
      const at = `/posts/${i}/schedules/${j}`;
      const providerId = s.providerId.toLowerCase();
      const kind = kindById.get(providerId);
      if (!kind) missing.push({ path: `${at}/providerId`, message: 'is not a connected integration of this workspace' });
      else if (!providerKindsCompatible(post.kind, kind)) fail(`${at}/providerId`, `is a ${kind} account; this post is for ${post.kind}`);
      else {
        const problem = contentProblem({ content: post.content, media: post.media, threadItems: post.thread_items, externalPost: post.external_post }, kind, types);
        if (problem) fail(`${at}/${problem[0]}`, problem[1]);
      }
      const timeProblem = scheduledTimeProblem(s.scheduledTime, now);
      if (timeProblem) fail(`${at}/scheduledTime`, timeProblem);
      rows.push({ postId: id, providerId, scheduledTime: new Date(s.scheduledTime), automation: (s.automation ?? {}) as Automation });
    }
  }
  // A well-formed id the workspace does not have is a 404 (like a missing path resource), before any rule of the others.
  if (missing.length) throw new ApiError(404, 'not_found', `${missing[0]!.path}: ${missing[0]!.message}; nothing was scheduled`, missing);
  if (details.length) throw validationFailed(details);
  return rows;
}

/** Writes the rows and starts their dispatch, atomically: the dispatch starts inside the transaction `tx`. */
async function schedule(tx: EntityManager, deps: AppDeps, workspaceId: string, rows: NewScheduleRow[]): Promise<ReplacedRow[]> {
  const ids = [...new Set(rows.map((r) => r.postId))].sort();
  await lockPostsForScheduling(tx, ids);
  // Re-checked under the lock: a publish may have started since validation.
  const live = await livePublishRows(tx, ids);
  if (live.length) throw conflict(`Post ${live[0]!.post_id} is already being published`, 'invalid_post_state');
  const batchId = uuidv7();
  const { stale } = await replaceSchedules(tx, workspaceId, batchId, rows);
  const taskQueue = deps.config.temporal.taskQueue;
  // If the commit fails after this start, the dispatch finds no rows of the batch and does nothing.
  await deps.temporal.workflow.start<typeof scheduleBatchWorkflow>(PUBLISH_WORKFLOWS.scheduleBatch, {
    workflowId: scheduleBatchWorkflowId(batchId),
    taskQueue,
    args: [{ batchId, workspaceId, taskQueue }],
    typedSearchAttributes: new TypedSearchAttributes([
      { key: SA.WorkspaceId, value: workspaceId },
      { key: SA.JobType, value: 'bulk-schedule' },
    ]),
    memo: { workspaceId, rows: rows.length },
  });
  return stale;
}

export const publishingRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/posts/bulk-schedule',
    tag: 'Social publishing',
    summary: 'Schedule posts, one publish per schedule row',
    description:
      'Every row is validated first (post of the workspace in `draft` or `scheduled`; `providerId` a connected integration whose ' +
      'kind suits the post and its content; `scheduledTime` ISO 8601 in the future; `automation` valid). Any failure answers 400 ' +
      'naming the rows (`/posts/3/schedules/0/scheduledTime`) and schedules nothing. Otherwise each row gets a publish workflow ' +
      '(`publish-<postId>-<n>`) waiting durably for `scheduledTime`; scheduling a post again replaces its rows and reschedules the ' +
      `running workflows. At most ${MAX_SCHEDULE_ROWS} rows per request.` +
      SCHEDULED_TIME_RULE,
    body: BulkScheduleBody,
    bodyLimit: 'bulk', // up to MAX_SCHEDULE_ROWS rows
    responses: { 200: MessageResponse },
    errors: [400, 401, 404, 409, 500], errorCodes: ['invalid_post_state'],
    idempotent: true,
    handler: async ({ body, auth, em, deps }) => {
      const rows = await validateBulk(deps.pool, em, auth.workspaceId, body, new Date());
      const stale = await em.transactional((tx) => schedule(tx, deps, auth.workspaceId, rows));
      await unscheduleWaitingPublishes(deps, stale);
      const posts = new Set(rows.map((r) => r.postId)).size;
      return { message: `Scheduled ${rows.length} publish${rows.length === 1 ? '' : 'es'} for ${posts} post${posts === 1 ? '' : 's'}` };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/v1/posts/external-linkedin-reply',
    tag: 'Social publishing',
    summary: 'Schedule a comment on an external pronet post',
    description:
      'Creates a draft with `externalPost: true` and schedules it like any post: at `scheduledTime` the comment is published on the ' +
      'thread resolved from `externalPostUrl` (feed/update URLs, /posts/ URLs, activity/ugcPost/share URNs). `providerId` must be a ' +
      'connected `pronet` or `pronetPage` integration. Answers the scheduled post.' +
      SCHEDULED_TIME_RULE,
    body: ExternalReplyBody,
    responses: { 200: PostResponse },
    errors: [400, 401, 404, 500],
    idempotent: true,
    handler: async ({ body, auth, em, deps }) => {
      const thread = parsePronetPostUrl(body.externalPostUrl);
      if (!thread) throw invalidField('/externalPostUrl', 'is not a pronet post URL or URN (activity, ugcPost or share)');
      const kind = await connectedProvider(em, body.providerId, '/providerId');
      const providerId = body.providerId.toLowerCase();
      if (kind === 'microblog') throw invalidField('/providerId', 'must be a pronet or pronetPage integration');
      const timeProblem = scheduledTimeProblem(body.scheduledTime, new Date());
      if (timeProblem) throw invalidField('/scheduledTime', timeProblem);

      const id = uuidv7();
      await em.transactional(async (tx) => {
        await insertExternalReplyDraft(tx, auth.workspaceId, id, providerId, body.content, body.externalPostUrl.trim());
        await schedule(tx, deps, auth.workspaceId, [{ postId: id, providerId, scheduledTime: new Date(body.scheduledTime), automation: {} }]);
      });
      return { data: postJson(await committedPost(em, id)) };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/v1/posts/{postId}/unschedule',
    tag: 'Social publishing',
    summary: 'Unschedule a post',
    description:
      'Cancels the waiting publishes of a scheduled post (their workflows are told and stop) and makes it a draft again; its repost ' +
      'children become drafts. A repost child is cancelled. A post already publishing or published answers 409.',
    params: PostIdParams,
    responses: { 200: PostResponse },
    errors: [401, 404, 409, 500], errorCodes: ['invalid_post_state'],
    handler: async ({ params, auth, em, deps }) => {
      const { post, cancelled } = await em.transactional(async (tx) => {
        const post = await lockedPostOr404(tx, params.postId);
        if (post.parentPostId) {
          if (post.status !== 'scheduled' && post.status !== 'draft') throw conflict(`This repost is ${post.status} and cannot be cancelled`, 'invalid_post_state');
          await markRepostCancelled(tx, post.id);
          return { post, cancelled: [] as ReplacedRow[] };
        }
        if (post.status !== 'scheduled') throw conflict(`Only a scheduled post can be unscheduled; this one is ${post.status}`, 'invalid_post_state');
        const live = await livePublishRows(tx, [post.id]);
        if (live.length) throw conflict('The post is already being published', 'invalid_post_state');
        const cancelled = await cancelSchedules(tx, post.id);
        return { post, cancelled };
      });
      await unscheduleWaitingPublishes(deps, cancelled);
      return { data: postJson(await committedPost(em, post.id)) };
    },
  }),
];
