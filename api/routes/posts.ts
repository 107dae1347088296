/**
 * Posts: drafts (create, read, partial update, delete), listing with conditions/sort/keyset
 * pagination, and the cross-account reposting configuration (enterprise plan). Scheduling and
 * publishing live in api/routes/publishing.ts and the publish workflows.
 */
import { invalidField } from '../../domain/errors.js';
import { conflict, featureNotAvailable, notFound, notFoundField } from '../errors.js';
import { decodeToken, pageMeta, queryFingerprint, type TokenPayload } from '../../domain/pagination.js';
import { providerKindsCompatible, type Article, type MediaRef, type ThreadItem } from '../../domain/social.js';
import { unknownMedia } from '../../db/media.js';
import type { Queryable } from '../../db/pool.js';
import { integrationProvider } from '../../db/integrations.js';
import {
  cancelRepostChildren,
  deleteUnscheduledPost,
  insertDraftPost,
  markPostCancelled,
  replaceRepostChildren,
  filterPostsPage,
  setPostAutomation,
  updateDraftPost,
} from '../../db/posts.js';
import { cancelSchedules, livePublishRows } from '../../db/schedules.js';
import { unscheduleWaitingPublishes } from '../publishWorkflows.js';
import { committedPost, committedPostOrNull, connectedProvider, lockedPostOr404, postOr404 } from '../postLoaders.js';
import { defineRoute } from '../route.js';
import { IdParams } from '../schemas/common.js';
import {
  CreatePostBody,
  FilterPostsBody,
  PostDeleted,
  PostIdParams,
  PostPage,
  PostResponse,
  postJson,
  RepostingBody,
  UpdatePostBody,
} from '../schemas/posts.js';

/** Every `fileName` a post references must be media of the workspace: 400 naming the first that is not. */
async function checkMediaRefs(db: Queryable, workspaceId: string, p: { media?: MediaRef[]; articles?: Article[]; threadItems?: ThreadItem[] }): Promise<void> {
  const refs: [string, string][] = [];
  p.media?.forEach((m, i) => refs.push([`/media/${i}/fileName`, m.fileName]));
  p.articles?.forEach((a, i) => refs.push([`/articles/${i}/fileName`, a.fileName]));
  p.threadItems?.forEach((t, i) => t.media?.forEach((m, j) => refs.push([`/threadItems/${i}/media/${j}/fileName`, m.fileName])));
  if (!refs.length) return;
  const unknown = await unknownMedia(db, workspaceId, refs.map(([, f]) => f));
  const bad = refs.find(([, f]) => unknown.has(f));
  if (bad) throw notFoundField(bad[0], `"${bad[1]}" is not a media file of this workspace (upload or import it first)`);
}

export const postRoutes = [
  defineRoute({
    method: 'post',
    path: '/v1/posts',
    tag: 'Social publishing',
    summary: 'Create a draft post',
    description: '`media`, `articles` and thread item media reference `fileName`s of the workspace; `automation` may carry `threadDelay`.',
    body: CreatePostBody,
    bodyLimit: 2 * 1024 * 1024, // up to MAX_THREAD_ITEMS texts of MAX_CONTENT_LENGTH, escaped
    responses: { 200: PostResponse },
    errors: [400, 401, 404, 500],
    idempotent: true,
    handler: async ({ body, auth, em, deps }) => {
      await connectedProvider(em, body.providerId, '/providerId');
      await checkMediaRefs(deps.pool, auth.workspaceId, body);
      const post = await insertDraftPost(em, auth.workspaceId, { ...body, providerId: body.providerId.toLowerCase() });
      return { data: postJson(post) };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/v1/posts/filter-posts',
    tag: 'Social publishing',
    summary: 'List posts',
    description: 'Conditions (ANDed) on status, providerId, parentPostId, externalPost and the timestamps; sort; keyset pagination.',
    body: FilterPostsBody,
    responses: { 200: PostPage },
    errors: [400, 401, 500],
    handler: async ({ body, auth, em, deps }) => {
      const limit = body.limit ?? 50;
      // A field sorted on again adds nothing: its first mention is kept (as `fields` lists keep theirs).
      const sortInput = body.sort?.length ? body.sort.filter((s, i, all) => all.findIndex((o) => o.field === s.field) === i) : [{ field: 'createdAt', direction: 'desc' }];
      const fingerprint = queryFingerprint(auth.workspaceId, { r: 'posts', c: body.conditions ?? null, g: body.groupedCondition ?? null, s: sortInput });
      const from: TokenPayload | undefined = body.paginationToken ? decodeToken(deps.config.serverSecret, fingerprint, body.paginationToken) : undefined;
      const { rows, total, keyOf } = await filterPostsPage(em, deps.pool, { workspaceId: auth.workspaceId, filter: body, sort: sortInput, from, limit });
      const page = pageMeta({
        secret: deps.config.serverSecret,
        fingerprint,
        rows,
        limit,
        totalRecords: total,
        keyOf: (r) => keyOf(r.sortRow),
        from,
      });
      return { data: page.data.map((r) => postJson(r.post)), meta: page.meta };
    },
  }),

  defineRoute({
    method: 'post',
    path: '/v1/posts/{postId}/reposting',
    tag: 'Social publishing',
    summary: 'Configure cross-account reposts of a post (Enterprise)',
    description:
      'Sets `automation.crossAccountRepostConfig` and keeps one child post per target account (listable with filter-posts, ' +
      'condition `parentPostId`). Each child reshares the parent at its `scheduledTime` + `scheduleInSecs` ' +
      '(300, 1800, 3600, 7200, 14400, 28800, 43200 or 86400). `enable: false` cancels the children not yet published. ' +
      'Enterprise plan only (403 `feature_not_available`). Honours `Idempotency-Key` (it creates the child posts).',
    params: PostIdParams,
    body: RepostingBody,
    responses: { 200: PostResponse },
    errors: [400, 401, 403, 404, 409, 500], errorCodes: ['invalid_post_state'],
    idempotent: true,
    handler: async ({ params, body, auth, em, deps }) => {
      if (auth.plan !== 'enterprise') throw featureNotAvailable('Cross-account reposting needs the Enterprise plan');
      const { enable, reposts } = body.reposting;
      const parentId = await em.transactional(async (tx) => {
        const parent = await lockedPostOr404(tx, params.postId);
        if (parent.parentPostId) throw conflict('A repost child cannot be reposted; configure its parent', 'invalid_post_state');
        if (parent.externalPost) throw conflict('A comment on an external post cannot be reposted', 'invalid_post_state');
        if (!['draft', 'scheduled'].includes(parent.status)) {
          throw conflict(`Reposting can be configured on a draft or scheduled post; this one is ${parent.status}`, 'invalid_post_state');
        }
        const parentKind = await integrationProvider(em, parent.providerId);
        const seen = new Set<string>();
        for (const [i, t] of reposts.entries()) {
          const path = `/reposting/reposts/${i}/providerId`;
          const id = t.providerId.toLowerCase();
          const kind = await connectedProvider(em, id, path);
          if (id === parent.providerId) throw invalidField(path, 'is the account that publishes the post itself');
          if (seen.has(id)) throw invalidField(path, 'is listed twice');
          if (!providerKindsCompatible(parentKind, kind)) throw invalidField(path, `is a ${kind} account and cannot reshare a ${parentKind} post`);
          seen.add(id);
        }
        const targets = reposts.map((t) => ({ providerId: t.providerId.toLowerCase(), scheduleInSecs: t.scheduleInSecs }));
        const automation = { ...parent.automation, crossAccountRepostConfig: { enabled: enable, providersConfig: targets } };
        await setPostAutomation(tx, parent.id, automation);
        if (enable) await replaceRepostChildren(tx, parent, targets);
        else await cancelRepostChildren(tx, parent.id);
        return parent.id;
      });
      return { data: postJson(await committedPost(em, parentId)) };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/v1/posts/{id}',
    tag: 'Social publishing',
    summary: 'Get a post',
    params: IdParams,
    responses: { 200: PostResponse },
    errors: [401, 404, 500],
    handler: async ({ params, em }) => ({ data: postJson(await postOr404(em, params.id)) }),
  }),

  defineRoute({
    method: 'patch',
    path: '/v1/posts/{id}',
    tag: 'Social publishing',
    summary: 'Update a draft post',
    description: 'Partial update: only the properties sent change. Only drafts can be edited (unschedule a scheduled post first).',
    params: IdParams,
    body: UpdatePostBody,
    bodyLimit: 2 * 1024 * 1024, // as for POST /v1/posts
    responses: { 200: PostResponse },
    errors: [400, 401, 404, 409, 500], errorCodes: ['post_not_editable'],
    handler: async ({ params, body, auth, em, deps }) => {
      const updated = await em.transactional(async (tx) => {
        const post = await lockedPostOr404(tx, params.id);
        if (post.status !== 'draft') throw conflict(`Only drafts can be edited; this post is ${post.status}`, 'post_not_editable');
        if (body.providerId !== undefined) await connectedProvider(tx, body.providerId, '/providerId');
        // Media rows are read on the pool: a plain read, as in the transaction (read committed).
        await checkMediaRefs(deps.pool, auth.workspaceId, body);
        return updateDraftPost(tx, post, {
          providerId: body.providerId?.toLowerCase(),
          content: body.content,
          media: body.media,
          articles: body.articles,
          threadItems: body.threadItems,
          // The repost configuration is kept; only `threadDelay` is client-editable here.
          automation: body.automation !== undefined ? { ...post.automation, threadDelay: body.automation.threadDelay } : undefined,
        });
      });
      return { data: postJson(updated) };
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/v1/posts/{id}',
    tag: 'Social publishing',
    summary: 'Delete a post',
    description:
      'A scheduled post is cancelled: its waiting publishes are cancelled (their workflows stop), it is kept with status `cancelled` ' +
      'and its unpublished repost children are cancelled. A post being published answers 409. Any other post is removed with its repost children.',
    params: IdParams,
    responses: { 200: PostDeleted },
    errors: [401, 404, 409, 500], errorCodes: ['post_publishing', 'conflict'],
    handler: async ({ params, auth, em, deps }) => {
      const post = await postOr404(em, params.id);
      if (post.status === 'publishing') throw conflict('The post is being published right now; try again in a moment', 'post_publishing');
      if (post.status === 'scheduled') {
        const cancelled = await em.transactional(async (tx) => {
          const locked = await lockedPostOr404(tx, post.id);
          if (locked.status === 'publishing' || (locked.status === 'scheduled' && (await livePublishRows(tx, [post.id])).length)) {
            throw conflict('The post started publishing meanwhile', 'post_publishing');
          }
          // No longer scheduled (a concurrent DELETE cancelled it, an unschedule made it a draft):
          // removed below like any post that is not scheduled, as a DELETE sent after that one would be.
          if (locked.status !== 'scheduled') return null;
          // The waiting rows are cancelled: a publish workflow that wakes up finds nothing to claim.
          const rows = await cancelSchedules(tx, post.id);
          await markPostCancelled(tx, post.id);
          await cancelRepostChildren(tx, post.id);
          return rows;
        });
        if (cancelled) {
          await unscheduleWaitingPublishes(deps, cancelled);
          return { data: { id: post.id, deleted: true as const, status: 'cancelled' as const } };
        }
      }
      if (!(await deleteUnscheduledPost(em, post.id))) {
        // Nothing removed: a concurrent DELETE removed it first (404, as for a DELETE sent after it), or it was scheduled meanwhile.
        if (!(await committedPostOrNull(em, post.id))) throw notFound('Post', params.id);
        throw conflict('The post changed state meanwhile; read it again');
      }
      return { data: { id: post.id, deleted: true as const, status: 'deleted' as const } };
    },
  }),
];
