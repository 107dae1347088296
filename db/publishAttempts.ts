/**
 * `publish_attempts`: one record per remote create (post, thread item, comment, reshare), written
 * before the creating request is sent, so a retried publish step knows whether a previous attempt
 * may have created the object (`sending`), failed with an answer (`failed`) or succeeded (`done`).
 * `owner_attempt` is the Temporal attempt that took the step over; an older one does not send.
 */
import type { Queryable } from './pool.js';

export interface PublishAttemptRow {
  state: string;
  external_id: string | null;
  external_url: string | null;
}

export async function findPublishAttempt(db: Queryable, stepKey: string): Promise<PublishAttemptRow | undefined> {
  const r = await db.query<PublishAttemptRow>(`select state, external_id, external_url from publish_attempts where step_key = $1`, [stepKey]);
  return r.rows[0];
}

/**
 * Attempt `attempt` takes the step over (creating its record `pending`); undefined when the step
 * is already `done` (read it with `findPublishAttempt`).
 */
export async function takeOverPublishAttempt(
  db: Queryable,
  s: { stepKey: string; workspaceId: string; postId: string; attempt: number },
): Promise<(PublishAttemptRow & { started_at: Date }) | undefined> {
  const r = await db.query<PublishAttemptRow & { started_at: Date }>(
    `insert into publish_attempts (step_key, workspace_id, post_id, state, attempts, owner_attempt, started_at, updated_at)
     values ($1, $2, $3, 'pending', 0, $4, now(), now())
     on conflict (step_key) do update set owner_attempt = $4, updated_at = now() where publish_attempts.state <> 'done'
     returning state, external_id, external_url, started_at`,
    [s.stepKey, s.workspaceId, s.postId, s.attempt],
  );
  return r.rows[0];
}

/** Marks the step `sending` if `attempt` still owns it and nothing is in flight; false otherwise (do not send). */
export async function markPublishAttemptSending(db: Queryable, stepKey: string, attempt: number): Promise<boolean> {
  const r = await db.query(
    `update publish_attempts set state = 'sending', attempts = attempts + 1, started_at = now(), updated_at = now()
      where step_key = $1 and owner_attempt = $2 and state in ('pending','failed')`,
    [stepKey, attempt],
  );
  return !!r.rowCount;
}

export async function markPublishAttemptDone(db: Queryable, stepKey: string, externalId: string, externalUrl: string): Promise<void> {
  await db.query(`update publish_attempts set state = 'done', external_id = $2, external_url = $3, updated_at = now() where step_key = $1`, [
    stepKey,
    externalId,
    externalUrl,
  ]);
}

/** The network answered (nothing was created): a retry may send again. */
export async function markPublishAttemptFailed(db: Queryable, stepKey: string, attempt: number): Promise<void> {
  await db.query(`update publish_attempts set state = 'failed', updated_at = now() where step_key = $1 and owner_attempt = $2`, [stepKey, attempt]);
}
