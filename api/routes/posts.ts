/**
 * Posts: drafts (create, read, partial update, delete), listing with conditions/sort/keyset
 * pagination, and the cross-account reposting configuration (enterprise plan). Scheduling and
 * publishing live in api/routes/publishing.ts and the publish workflows.
 */
import { conflict, featureNotAvailable, notFoundField } from '../errors.js';
import type { Article, MediaRef, ThreadItem } from '../../domain/social.js';
import { unknownMedia } from '../../db/media.js';
import type { WorkspaceScope } from '../../db/scope.js';
import { insertDraftPost, updateDraftPost } from '../../db/posts.js';
import { connectedProvider, lockedPostOr404, postOr404 } from '../postLoaders.js';
import { configureReposting } from '../usecases/configureReposting.js';
import { deletePost } from '../usecases/deletePost.js';
import { listPosts } from '../usecases/listPosts.js';
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
async function checkMediaRefs(scope: WorkspaceScope, p: { media?: MediaRef[]; articles?: Article[]; threadItems?: ThreadItem[] }): Promise<void> {
  const refs: [string, string][] = [];
  p.media?.forEach((m, i) => refs.push([`/media/${i}/fileName`, m.fileName]));
  p.articles?.forEach((a, i) => refs.push([`/articles/${i}/fileName`, a.fileName]));
  p.threadItems?.forEach((t, i) => t.media?.forEach((m, j) => refs.push([`/threadItems/${i}/media/${j}/fileName`, m.fileName])));
  if (!refs.length) return;
  const unknown = await unknownMedia(scope, refs.map(([, f]) => f));
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
    handler: async ({ body, scope }) => {
      await connectedProvider(scope.em, body.providerId, '/providerId');
      await checkMediaRefs(scope, body);
      const post = await insertDraftPost(scope, { ...body, providerId: body.providerId.toLowerCase() });
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
    handler: ({ body, scope, deps }) => listPosts(scope, deps.config.serverSecret, body),
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
    handler: ({ params, body, auth, scope }) => {
      if (auth.plan !== 'enterprise') throw featureNotAvailable('Cross-account reposting needs the Enterprise plan');
      return configureReposting(scope, params.postId, body);
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
    handler: async ({ params, scope }) => ({ data: postJson(await postOr404(scope.em, params.id)) }),
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
    handler: async ({ params, body, scope }) => {
      const updated = await scope.em.transactional(async (tx) => {
        const post = await lockedPostOr404(tx, params.id);
        if (post.status !== 'draft') throw conflict(`Only drafts can be edited; this post is ${post.status}`, 'post_not_editable');
        if (body.providerId !== undefined) await connectedProvider(tx, body.providerId, '/providerId');
        // Media rows are read on the scope's pool: a plain read, as in the transaction (read committed).
        await checkMediaRefs(scope, body);
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
    handler: ({ params, scope, deps }) => deletePost(scope, deps, params.id),
  }),
];
