/**
 * State changes of scheduled publishing, one short transaction each (db/schedules.ts,
 * db/posts.ts). The database is the source of truth for whether a row may still publish: a claim
 * flips it `scheduled → publishing` exactly once, so a cancelled, replaced or already-claimed row
 * never publishes (whatever signals a workflow did or did not receive).
 */
import type { ActivityDeps } from './deps.js';
import { claimRepostChild, dueRepostChildren, finishRepostChild, type RepostChild } from '../db/posts.js';
import { claimScheduleRow, finishScheduleRow, type ClaimResult, type RowOutcome } from '../db/schedules.js';

export type { ClaimResult, PublishPlan, RowOutcome } from '../db/schedules.js';
export type { RepostChild } from '../db/posts.js';

export function createPostDbActivities(deps: ActivityDeps) {
  const { pool } = deps;
  return {
    async claimSchedule(input: { scheduleId: string; postId: string; n: number }): Promise<ClaimResult> {
      return claimScheduleRow(pool, input);
    },

    /** Records a row's outcome, derives the post's status and, if row 0 failed, cancels the repost children. */
    async finishSchedule(input: { scheduleId: string; postId: string; n: number; outcome: RowOutcome }): Promise<{ postStatus: string }> {
      return finishScheduleRow(pool, input);
    },

    /** Children still due to reshare the parent, earliest first. */
    async loadRepostChildren(input: { parentPostId: string }): Promise<RepostChild[]> {
      return dueRepostChildren(pool, input.parentPostId);
    },

    async claimRepostChild(input: { postId: string }): Promise<{ status: 'claimed' | 'cancelled' } | { status: 'not_due'; scheduledTime: string }> {
      return claimRepostChild(deps.orm.em, input.postId);
    },

    async finishRepostChild(input: { postId: string; outcome: RowOutcome }): Promise<void> {
      await finishRepostChild(deps.orm.em, input.postId, input.outcome);
    },
  };
}
