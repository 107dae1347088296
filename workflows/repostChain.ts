/**
 * Cross-account reposts of a published post (id `repost-<parentPostId>`, started by the
 * parent's publish). Each child post waits until its own `scheduledTime` (parent
 * `scheduledTime` + `scheduleInSecs`), is claimed in the database (a cancelled child is
 * skipped) and reshares the parent through its account; children run independently.
 */
import { sleep } from '@temporalio/workflow';
import type { PostError } from '../domain/social.js';
import { PUBLISH_LEAD_MS, db, providerActivities, publishError } from './scheduling.js';

export interface RepostChainInput {
  workspaceId: string;
  /** The parent post. */
  postId: string;
  taskQueue: string;
}

export interface RepostChildResult {
  postId: string;
  status: 'published' | 'failed' | 'cancelled';
  externalId?: string;
  error?: PostError;
}

export async function repostChainWorkflow(input: RepostChainInput): Promise<RepostChildResult[]> {
  const children = await db.loadRepostChildren({ parentPostId: input.postId });
  return Promise.all(
    children.map(async (child): Promise<RepostChildResult> => {
      let at = child.scheduledTime;
      for (;;) {
        const ms = Date.parse(at) - PUBLISH_LEAD_MS - Date.now();
        if (ms > 0) await sleep(ms);
        const claim = await db.claimRepostChild({ postId: child.postId });
        if (claim.status === 'not_due') {
          at = claim.scheduledTime;
          continue;
        }
        if (claim.status !== 'claimed') return { postId: child.postId, status: 'cancelled' };
        break;
      }
      try {
        const r = await providerActivities(input.taskQueue, child.provider).publishStep({
          workspaceId: input.workspaceId,
          postId: child.postId,
          step: { kind: 'reshare' },
          notBefore: at,
        });
        await db.finishRepostChild({ postId: child.postId, outcome: { status: 'published', externalId: r.externalId, externalUrl: r.externalUrl, threadExternalIds: [] } });
        return { postId: child.postId, status: 'published', externalId: r.externalId };
      } catch (err) {
        const error = publishError(err, child.provider);
        await db.finishRepostChild({ postId: child.postId, outcome: { status: 'failed', error } });
        return { postId: child.postId, status: 'failed', error };
      }
    }),
  );
}
