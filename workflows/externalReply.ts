/**
 * A scheduled comment on someone else's pronet post (`POST /v1/posts/external-linkedin-reply`):
 * the same schedule/unschedule handling as a post (id `publish-<postId>-<n>`), then one comment
 * on the thread resolved from `externalPostUrl`, recorded on the row and the post.
 */
import { claimWhenDue, db, initialState, providerActivities, publishError, resultOf } from './scheduling.js';
import type { PublishResult, PublishWorkflowInput } from './contract/publishing.js';

export async function externalReplyWorkflow(input: PublishWorkflowInput): Promise<PublishResult> {
  const state = initialState();
  const claimed = await claimWhenDue(input, state);
  if (!claimed) return resultOf(state);
  const { due, plan } = claimed;
  const { provider } = plan;
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
