/**
 * A scheduled comment on someone else's pronet post (`POST /v1/posts/external-linkedin-reply`):
 * the same schedule/unschedule handling as a post (id `publish-<postId>-<n>`), then one comment
 * on the thread resolved from `externalPostUrl`, recorded on the row and the post.
 */
import {
  ScheduleBox,
  db,
  initialState,
  providerActivities,
  publishError,
  resultOf,
  type PublishResult,
  type PublishWorkflowInput,
} from './scheduling.js';

export async function externalReplyWorkflow(input: PublishWorkflowInput): Promise<PublishResult> {
  const state = initialState();
  const box = new ScheduleBox(state);
  for (;;) {
    const due = await box.waitUntilDue();
    if (!due) {
      state.phase = 'cancelled';
      return resultOf(state);
    }
    const claim = await db.claimSchedule({ scheduleId: due.scheduleId, postId: input.postId, n: input.n });
    if (claim.status === 'not_due') {
      box.setTime(due.scheduleId, claim.scheduledTime);
      continue;
    }
    if (claim.status !== 'claimed') {
      if (box.replaced(due)) continue;
      state.phase = claim.status === 'superseded' ? 'superseded' : claim.status === 'done' ? state.phase : 'cancelled';
      return resultOf(state);
    }
    state.phase = 'publishing';
    const { provider } = claim.plan;
    try {
      const c = await providerActivities(input.taskQueue, provider).publishStep({
        workspaceId: input.workspaceId,
        postId: input.postId,
        step: { kind: 'main', scheduleId: due.scheduleId },
        notBefore: due.scheduledTime,
      });
      state.externalId = c.externalId;
      await db.finishSchedule({
        scheduleId: due.scheduleId,
        postId: input.postId,
        n: input.n,
        outcome: { status: 'published', externalId: c.externalId, externalUrl: c.externalUrl, threadExternalIds: [] },
      });
      state.phase = 'published';
    } catch (err) {
      state.phase = 'failed';
      state.error = publishError(err, provider);
      await db.finishSchedule({ scheduleId: due.scheduleId, postId: input.postId, n: input.n, outcome: { status: 'failed', error: state.error } });
    }
    return resultOf(state);
  }
}
