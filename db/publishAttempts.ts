/**
 * `publish_attempts`: one record per remote create (post, thread item, comment, reshare), written
 * before the creating request is sent, so a retried publish step knows whether a previous attempt
 * may have created the object (`sending`), failed with an answer (`failed`) or succeeded (`done`).
 * `owner_attempt` is the Temporal attempt that took the step over; an older one does not send.
 * Typed Kysely compiled once (`preparedQuery`) and run on the publish step's pg pool: the publish
 * path stays off the entity manager (see db/schedules.ts).
 */
import { sql } from 'kysely';
import type { Queryable } from './pool.js';
import type { PublishAttemptDB } from './social.js';
import { assertWorkspaceScope } from './tenancy.js';
import { preparedQuery, typedQueries, type RowOf } from './sqlFragments.js';

const workerQueries = typedQueries<PublishAttemptDB>();

const selectAttempt = preparedQuery((p: { stepKey: string }) =>
  workerQueries.selectFrom('publish_attempts').select(['state', 'external_id', 'external_url']).where('step_key', '=', p.stepKey),
);

/** A step's record as the publish step reads it: its state and what the network answered (typed by the entity). */
export type PublishAttemptRow = RowOf<typeof selectAttempt>;

export async function findPublishAttempt(db: Queryable, stepKey: string): Promise<PublishAttemptRow | undefined> {
  const [row] = await selectAttempt(db, { stepKey });
  return row;
}

const takeOver = preparedQuery((p: { stepKey: string; postId: string; attempt: number }) =>
  workerQueries
    .insertInto('publish_attempts')
    .values({
      step_key: p.stepKey,
      post_id: p.postId,
      state: sql.lit('pending'),
      attempts: sql.lit(0),
      owner_attempt: p.attempt,
      started_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .onConflict((oc) =>
      oc
        .column('step_key')
        .doUpdateSet((eb) => ({ owner_attempt: eb.ref('excluded.owner_attempt'), updated_at: sql`now()` }))
        .where('publish_attempts.state', '<>', sql.lit('done')),
    )
    .returning(['state', 'external_id', 'external_url', 'started_at']),
);

/**
 * Attempt `attempt` takes the step over (creating its record `pending`); undefined when the step
 * is already `done` (read it with `findPublishAttempt`).
 */
export async function takeOverPublishAttempt(
  db: Queryable,
  s: { stepKey: string; workspaceId: string; postId: string; attempt: number },
): Promise<RowOf<typeof takeOver> | undefined> {
  assertWorkspaceScope(s.workspaceId); // the record's workspace is the scope's (the column's default)
  const [row] = await takeOver(db, s);
  return row;
}

// `returning step_key`: a query answers rows, and a row is the mark.
const markSending = preparedQuery((p: { stepKey: string; attempt: number }) =>
  workerQueries
    .updateTable('publish_attempts')
    .set((eb) => ({ state: sql.lit('sending'), attempts: eb('attempts', '+', sql.lit(1)), started_at: sql`now()`, updated_at: sql`now()` }))
    .where('step_key', '=', p.stepKey)
    .where('owner_attempt', '=', p.attempt)
    .where('state', 'in', [sql.lit('pending' as const), sql.lit('failed' as const)])
    .returning('step_key'),
);

/** Marks the step `sending` if `attempt` still owns it and nothing is in flight; false otherwise (do not send). */
export async function markPublishAttemptSending(db: Queryable, stepKey: string, attempt: number): Promise<boolean> {
  return (await markSending(db, { stepKey, attempt })).length > 0;
}

const markDone = preparedQuery((p: { stepKey: string; externalId: string; externalUrl: string }) =>
  workerQueries
    .updateTable('publish_attempts')
    .set({ state: sql.lit('done'), external_id: p.externalId, external_url: p.externalUrl, updated_at: sql`now()` })
    .where('step_key', '=', p.stepKey),
);

export async function markPublishAttemptDone(db: Queryable, stepKey: string, externalId: string, externalUrl: string): Promise<void> {
  await markDone(db, { stepKey, externalId, externalUrl });
}

const markFailed = preparedQuery((p: { stepKey: string; attempt: number }) =>
  workerQueries.updateTable('publish_attempts').set({ state: sql.lit('failed'), updated_at: sql`now()` }).where('step_key', '=', p.stepKey).where('owner_attempt', '=', p.attempt),
);

/** The network answered (nothing was created): a retry may send again. */
export async function markPublishAttemptFailed(db: Queryable, stepKey: string, attempt: number): Promise<void> {
  await markFailed(db, { stepKey, attempt });
}
