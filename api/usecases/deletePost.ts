/**
 * `DELETE /v1/posts/{id}` as one use case: a scheduled post is cancelled (its waiting publish rows
 * cancelled in one transaction of the request's entity manager, then their workflows told), any
 * other post removed with its repost children; a post being published is a 409. The route only
 * adapts HTTP to it.
 */
import { cancelRepostChildren, deleteUnscheduledPost, markPostCancelled } from '../../db/posts.js';
import { cancelSchedules, livePublishRows } from '../../db/schedules.js';
import type { WorkspaceScope } from '../../db/scope.js';
import type { AppDeps } from '../deps.js';
import { conflict, notFound } from '../errors.js';
import { committedPostOrNull, lockedPostOr404, postOr404 } from '../postLoaders.js';
import { unscheduleWaitingPublishes } from '../publishWorkflows.js';

export async function deletePost(scope: WorkspaceScope, deps: AppDeps, id: string) {
  const { em } = scope;
  const post = await postOr404(em, id);
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
    if (!(await committedPostOrNull(em, post.id))) throw notFound('Post', id);
    throw conflict('The post changed state meanwhile; read it again');
  }
  return { data: { id: post.id, deleted: true as const, status: 'deleted' as const } };
}
