/**
 * Scheduling posts as use cases: bulk-schedule (every row validated first, then all rows written in
 * one transaction of the request's entity manager that also starts their dispatch workflow) and a
 * scheduled comment on an external pronet post (a draft with `externalPost: true` scheduled through
 * the same pipeline). Every statement goes through the request's `scope`; the routes
 * (api/routes/publishing.ts) only adapt HTTP to them.
 */
import { TypedSearchAttributes } from '@temporalio/common';
import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { connectedIntegrationProviders } from '../../db/integrations.js';
import { mediaContentTypes } from '../../db/media.js';
import { insertExternalReplyDraft } from '../../db/posts.js';
import {
  livePublishRows,
  lockPostsForScheduling,
  postsForSchedule,
  replaceSchedules,
  type NewScheduleRow,
  type PostForSchedule,
  type ReplacedRow,
} from '../../db/schedules.js';
import type { WorkspaceScope } from '../../db/scope.js';
import { invalidField, type ErrorDetail } from '../../domain/errors.js';
import { parsePronetPostUrl } from '../../domain/pronetUrls.js';
import { contentProblem, emptyContentProblem, scheduleBatchWorkflowId, scheduledTimeProblem } from '../../domain/publishing.js';
import { SA } from '../../domain/searchAttributes.js';
import { isUuid, providerKindsCompatible, type Automation } from '../../domain/social.js';
import type { scheduleBatchWorkflow } from '../../workflows/scheduleBatch.js';
import { PUBLISH_WORKFLOWS } from '../../workflows/contract/publishing.js';
import type { AppDeps } from '../deps.js';
import { ApiError, conflict } from '../errors.js';
import { committedPost, connectedProvider } from '../postLoaders.js';
import { unscheduleWaitingPublishes } from '../publishWorkflows.js';
import { postJson } from '../schemas/posts.js';
import { MAX_SCHEDULE_ROWS, type BulkScheduleBody, type ExternalReplyBody } from '../schemas/publishing.js';

const MAX_DETAILS = 50;

function validationFailed(details: ErrorDetail[]): ApiError {
  const first = details[0]!;
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
  return new ApiError(400, 'validation_failed', `${first.path}: ${first.message}${more}; nothing was scheduled`, details);
}

async function mediaTypes(scope: WorkspaceScope, posts: PostForSchedule[]): Promise<Map<string, string>> {
  const names = new Set<string>();
  for (const p of posts) {
    p.media.forEach((m) => names.add(m.fileName));
    p.thread_items.forEach((t) => t.media?.forEach((m) => names.add(m.fileName)));
  }
  return mediaContentTypes(scope, [...names]);
}

/**
 * Every row checked before anything is written: the post (of this workspace, draft or scheduled,
 * not a repost child, listed once, nothing of it publishing), the integration (connected, of this
 * workspace, of a kind that suits the post and its content) and the time (ISO 8601, future).
 */
async function validateBulk(scope: WorkspaceScope, body: BulkScheduleBody, now: Date): Promise<NewScheduleRow[]> {
  const { em } = scope;
  const details: ErrorDetail[] = [];
  const fail = (path: string, message: string) => {
    if (details.length < MAX_DETAILS) details.push({ path, message });
  };
  const total = body.posts.reduce((s, p) => s + p.schedules.length, 0);
  if (total > MAX_SCHEDULE_ROWS) throw invalidField('/posts', `carries ${total} schedule rows; at most ${MAX_SCHEDULE_ROWS} per request`);

  const postIds = [...new Set(body.posts.map((p) => p.postId.toLowerCase()).filter(isUuid))];
  const providerIds = [...new Set(body.posts.flatMap((p) => p.schedules.map((s) => s.providerId.toLowerCase())).filter(isUuid))];
  const [posts, kindById, live] = await Promise.all([
    postsForSchedule(scope, postIds),
    connectedIntegrationProviders(em, providerIds),
    livePublishRows(em, postIds),
  ]);
  const postById = new Map(posts.map((p) => [p.id, p]));
  const publishing = new Set(live.map((r) => r.post_id));
  const types = await mediaTypes(scope, posts);

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

/** `POST /v1/posts/bulk-schedule`: nothing is written unless every row is valid. */
export async function bulkSchedule(scope: WorkspaceScope, deps: AppDeps, body: BulkScheduleBody) {
  const rows = await validateBulk(scope, body, new Date());
  const stale = await scope.em.transactional((tx) => schedule(tx, deps, scope.workspaceId, rows));
  await unscheduleWaitingPublishes(deps, stale);
  const posts = new Set(rows.map((r) => r.postId)).size;
  return { message: `Scheduled ${rows.length} publish${rows.length === 1 ? '' : 'es'} for ${posts} post${posts === 1 ? '' : 's'}` };
}

/** `POST /v1/posts/external-linkedin-reply`: the comment's draft and its schedule in one transaction. */
export async function scheduleExternalReply(scope: WorkspaceScope, deps: AppDeps, body: ExternalReplyBody) {
  const { em, workspaceId } = scope;
  const thread = parsePronetPostUrl(body.externalPostUrl);
  if (!thread) throw invalidField('/externalPostUrl', 'is not a pronet post URL or URN (activity, ugcPost or share)');
  const kind = await connectedProvider(em, body.providerId, '/providerId');
  const providerId = body.providerId.toLowerCase();
  if (kind === 'microblog') throw invalidField('/providerId', 'must be a pronet or pronetPage integration');
  const timeProblem = scheduledTimeProblem(body.scheduledTime, new Date());
  if (timeProblem) throw invalidField('/scheduledTime', timeProblem);

  const id = uuidv7();
  await em.transactional(async (tx) => {
    await insertExternalReplyDraft(tx, workspaceId, id, providerId, body.content, body.externalPostUrl.trim());
    await schedule(tx, deps, workspaceId, [{ postId: id, providerId, scheduledTime: new Date(body.scheduledTime), automation: {} }]);
  });
  return { data: postJson(await committedPost(em, id)) };
}
