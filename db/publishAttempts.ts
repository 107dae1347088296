/**
 * `publish_attempts` (`PublishAttempt`): one record per remote create (post, thread item, comment,
 * reshare), written before the creating request is sent, so a retried publish step knows whether
 * a previous attempt may have created the object (`sending`), failed with an answer (`failed`) or
 * succeeded (`done`). `ownerAttempt` is the Temporal attempt that took the step over; an older one
 * does not send. Every statement is one conditional write; the `workspace` filter scopes them to
 * the activity's workspace.
 */
import { raw, sql, type InferEntity } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { PublishAttempt } from './social.js';

export type PublishAttemptEntity = InferEntity<typeof PublishAttempt>;

export async function findPublishAttempt(em: EntityManager, stepKey: string): Promise<PublishAttemptEntity | null> {
  return em.findOne(PublishAttempt, { stepKey }, { refresh: true });
}

/**
 * Attempt `attempt` takes the step over (creating its record `pending`); null when the step is
 * already `done` (read it with `findPublishAttempt`).
 */
export async function takeOverPublishAttempt(
  em: EntityManager,
  s: { stepKey: string; workspaceId: string; postId: string; attempt: number },
): Promise<{ state: string; startedAt: Date } | null> {
  const rows = await em
    .createQueryBuilder(PublishAttempt)
    .insert({ stepKey: s.stepKey, workspaceId: s.workspaceId, postId: s.postId, state: 'pending', attempts: 0, ownerAttempt: s.attempt })
    .onConflict('stepKey')
    .merge({ ownerAttempt: s.attempt, updatedAt: sql.now() })
    .where({ state: { $ne: 'done' } })
    .returning(['state', 'startedAt'])
    .execute('all', { mapResults: true });
  const row = (rows as unknown as Array<{ state: string; startedAt: Date | string }>)[0];
  return row ? { state: row.state, startedAt: new Date(row.startedAt) } : null;
}

/** Marks the step `sending` if `attempt` still owns it and nothing is in flight; false otherwise (do not send). */
export async function markPublishAttemptSending(em: EntityManager, stepKey: string, attempt: number): Promise<boolean> {
  const n = await em.nativeUpdate(
    PublishAttempt,
    { stepKey, ownerAttempt: attempt, state: { $in: ['pending', 'failed'] } },
    { state: 'sending', attempts: raw('attempts + 1'), startedAt: sql.now(), updatedAt: sql.now() },
  );
  return n > 0;
}

export async function markPublishAttemptDone(em: EntityManager, stepKey: string, externalId: string, externalUrl: string): Promise<void> {
  await em.nativeUpdate(PublishAttempt, { stepKey }, { state: 'done', externalId, externalUrl, updatedAt: sql.now() });
}

/** The network answered (nothing was created): a retry may send again. */
export async function markPublishAttemptFailed(em: EntityManager, stepKey: string, attempt: number): Promise<void> {
  await em.nativeUpdate(PublishAttempt, { stepKey, ownerAttempt: attempt }, { state: 'failed', updatedAt: sql.now() });
}
