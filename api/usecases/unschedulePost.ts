/**
 * `POST /v1/posts/{postId}/unschedule` as one use case: in one transaction of the request's entity
 * manager, a scheduled post's waiting publish rows are cancelled (it becomes a draft again) or a
 * repost child is cancelled; then the cancelled rows' workflows are told. The route only adapts
 * HTTP to it.
 */
import { markRepostCancelled } from '../../db/posts.js';
import { cancelSchedules, livePublishRows, type ReplacedRow } from '../../db/schedules.js';
import type { WorkspaceScope } from '../../db/scope.js';
import type { AppDeps } from '../deps.js';
import { conflict } from '../errors.js';
import { committedPost, lockedPostOr404 } from '../postLoaders.js';
import { unscheduleWaitingPublishes } from '../publishWorkflows.js';
import { postJson } from '../schemas/posts.js';

export async function unschedulePost(scope: WorkspaceScope, deps: AppDeps, postId: string) {
  const { post, cancelled } = await scope.em.transactional(async (tx) => {
    const post = await lockedPostOr404(tx, postId);
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
  return { data: postJson(await committedPost(scope.em, post.id)) };
}
