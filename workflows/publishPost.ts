/**
 * One scheduled publish of a post (one workflow per schedule row, id `publish-<postId>-<n>`).
 * Waits durably until `scheduledTime` (a `schedule` signal with a newer row reschedules it, an
 * `unschedule` signal ends it), claims the row in the database (exactly once), publishes the
 * post, then its thread items spaced by `automation.threadDelay` (microblog: a reply chain;
 * pronet: comments on the post), records the outcome on the row and the post, and for row 0
 * of a post with reposting enabled starts the repost chain. A 429 on a step is waited out on a
 * timer (`withRateLimitWaits`, patch `rate-limit-timer`), the post showing `retryAt`.
 */
import { ParentClosePolicy, patched, sleep, startChild } from '@temporalio/workflow';
import {
  RATE_LIMIT_TIMER_PATCH,
  claimWhenDue,
  db,
  initialState,
  providerActivities,
  publishError,
  resultOf,
  withRateLimitWaits,
} from './scheduling.js';
import type { PublishResult, PublishWorkflowInput } from './contract/publishing.js';
import { repostChainWorkflow } from './repostChain.js';

export async function publishPostWorkflow(input: PublishWorkflowInput): Promise<PublishResult> {
  const state = initialState();
  const claimed = await claimWhenDue(input, state);
  if (!claimed) return resultOf(state);
  const { due, plan } = claimed;
  const provider = providerActivities(input.taskQueue, plan.provider);
  const rateLimitTimer = patched(RATE_LIMIT_TIMER_PATCH);
  const showRetryAt = (retryAt: string) => db.recordRateLimitWait({ scheduleId: due.scheduleId, postId: input.postId, retryAt });
  /** A step; from the patch on, a 429 waits on a timer instead of spending activity attempts. */
  const publishStep = (step: Parameters<typeof provider.publishStep>[0]) =>
    rateLimitTimer ? withRateLimitWaits(() => provider.publishStep({ ...step, rateLimitTimer: true }), showRetryAt) : provider.publishStep(step);
  let main;
  try {
    main = await publishStep({ workspaceId: input.workspaceId, postId: input.postId, step: { kind: 'main', scheduleId: due.scheduleId }, notBefore: due.scheduledTime });
  } catch (err) {
    state.phase = 'failed';
    state.error = publishError(err, plan.provider);
    await db.finishSchedule({ scheduleId: due.scheduleId, postId: input.postId, n: input.n, outcome: { status: 'failed', error: state.error } });
    return resultOf(state);
  }
  state.externalId = main.externalId;

  const threadCount = plan.externalPost ? 0 : plan.threadCount;
  let parent = main.externalId;
  for (let i = 0; i < threadCount; i++) {
    if (plan.threadDelaySecs > 0) await sleep(plan.threadDelaySecs * 1000);
    try {
      const item = await publishStep({
        workspaceId: input.workspaceId,
        postId: input.postId,
        step: { kind: 'thread', scheduleId: due.scheduleId, index: i, parentExternalId: parent },
      });
      state.threadExternalIds.push(item.externalId);
      // microblog threads are a reply chain; pronet thread items are all comments on the post.
      if (plan.provider === 'microblog') parent = item.externalId;
    } catch (err) {
      const e = publishError(err, plan.provider);
      state.error = { ...e, message: `thread item ${i}: ${e.message}` };
      break;
    }
  }

  await db.finishSchedule({
    scheduleId: due.scheduleId,
    postId: input.postId,
    n: input.n,
    outcome: { status: 'published', externalId: main.externalId, externalUrl: main.externalUrl, threadExternalIds: state.threadExternalIds, error: state.error },
  });
  state.phase = 'published';

  if (plan.repostChain) {
    await startChild(repostChainWorkflow, {
      workflowId: `repost-${input.postId}`,
      args: [{ workspaceId: input.workspaceId, postId: input.postId, taskQueue: input.taskQueue }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      searchAttributes: { WorkspaceId: [input.workspaceId], PostId: [input.postId], JobType: ['repost-chain'] },
    });
  }
  return resultOf(state);
}
