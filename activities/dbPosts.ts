/**
 * State changes of scheduled publishing, one short transaction each (db/schedules.ts,
 * db/posts.ts). The database is the source of truth for whether a row may still publish: a claim
 * flips it `scheduled → publishing` exactly once, so a cancelled, replaced or already-claimed row
 * never publishes (whatever signals a workflow did or did not receive).
 */
import type { ActivityDeps } from './deps.js';
import { dispatchEventDeliveries } from './eventDeliveries.js';
import { withoutTenancy } from '../db/tenancy.js';
import { claimRepostChild, dueRepostChildren, type RepostChild } from '../db/posts.js';
import { claimScheduleRow, finishRepostChildRow, finishScheduleRow, recordPostRetryAt, type ClaimResult, type RowOutcome } from '../db/schedules.js';

export type { ClaimResult, PublishPlan, RowOutcome } from '../db/schedules.js';
export type { RepostChild } from '../db/posts.js';

// The publish workflows address schedules and posts by the ids they hold; their recorded activity
// inputs carry no workspace, so these run across workspaces, keyed by those (globally unique) ids.
const BY_WORKFLOW_ID = 'publish workflow state by the ids the workflow holds (its inputs carry no workspace)';

export function createPostDbActivities(deps: ActivityDeps) {
  const { pool } = deps;
  return {
    async claimSchedule(input: { scheduleId: string; postId: string; n: number }): Promise<ClaimResult> {
      return withoutTenancy(BY_WORKFLOW_ID, () => claimScheduleRow(pool, input));
    },

    /** Records a row's outcome, derives the post's status and, if row 0 failed, cancels the repost children. */
    async finishSchedule(input: { scheduleId: string; postId: string; n: number; outcome: RowOutcome }): Promise<{ postStatus: string }> {
      const { postStatus, deliveries } = await withoutTenancy(BY_WORKFLOW_ID, () => finishScheduleRow(pool, input));
      // The post.published / post.failed event was recorded with the outcome; its deliveries start now.
      await dispatchEventDeliveries(deps, deliveries);
      return { postStatus };
    },

    /** A 429: the post shows `retryAt` while the workflow waits for the network's reset. */
    async recordRateLimitWait(input: { scheduleId: string; postId: string; retryAt: string }): Promise<void> {
      await withoutTenancy(BY_WORKFLOW_ID, () => recordPostRetryAt(pool, input));
    },

    /** Children still due to reshare the parent, earliest first. */
    async loadRepostChildren(input: { parentPostId: string }): Promise<RepostChild[]> {
      return withoutTenancy(BY_WORKFLOW_ID, () => dueRepostChildren(pool, input.parentPostId));
    },

    async claimRepostChild(input: { postId: string }): Promise<{ status: 'claimed' | 'cancelled' } | { status: 'not_due'; scheduledTime: string }> {
      return withoutTenancy(BY_WORKFLOW_ID, () => claimRepostChild(deps.orm.em, input.postId));
    },

    /** Records a child's outcome and its post.published / post.failed event, whose deliveries start now. */
    async finishRepostChild(input: { postId: string; outcome: RowOutcome }): Promise<void> {
      const { deliveries } = await withoutTenancy(BY_WORKFLOW_ID, () => finishRepostChildRow(pool, input));
      await dispatchEventDeliveries(deps, deliveries);
    },
  };
}
