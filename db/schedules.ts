/**
 * Schedule rows (`post_schedules`, one per bulk-schedule row). The API side (bulk-schedule,
 * unschedule, post deletion) is Kysely typed from the entities, on the entity manager of the
 * route's `em.transactional`: set-based (`unnest`, `= any(…)`) so 10,000 rows are one statement
 * each. The filter does not reach Kysely: row-level security keeps it to the request's workspace.
 * The publish workflows' side (claim, finish, dispatch) stays on `pg` and its own transactions
 * (no entity manager, no unit of work: moving it there raised publish lateness p99 from ~30 ms to
 * ~400 ms), as typed Kysely compiled once per statement (`preparedQuery`).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql as ormSql } from '@mikro-orm/core';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { aggregatePostStatus, DUE_SLACK_MS, publishWorkflowId, threadDelaySecs } from '../domain/publishing.js';
import type { Automation, PostError, PostStatus, Provider } from '../domain/social.js';
import { withTransaction, type Pool, type Queryable } from './pool.js';
import { cancelRepostChildrenQuery, syncRepostChildren } from './posts.js';
import { preparedQuery, typedQueries, uuidArray, type RowOf } from './sqlFragments.js';
import { Post, type SchedulingDB } from './social.js';
import { onClient, recordEvent, type DeliveryRef, type NewEvent } from './events.js';
import { assertWorkspaceScope } from './tenancy.js';
import { eventStateKey } from '../domain/events.js';

export interface NewScheduleRow {
  postId: string;
  providerId: string;
  scheduledTime: Date;
  automation: Automation;
}

export interface ReplacedRow {
  id: string;
  postId: string;
  n: number;
}

/** Rows of these posts that are publishing or published (they cannot be replaced). */
export async function livePublishRows(em: EntityManager, postIds: string[]) {
  return em
    .getKysely<SchedulingDB>()
    .selectFrom('post_schedules')
    .select(['post_id', 'status'])
    .where((eb) => eb('post_id', '=', eb.fn.any(uuidArray(postIds))))
    .where('status', 'in', ['publishing', 'published'])
    .execute();
}

/**
 * Replaces the schedule rows of the posts in `rows` (grouped by post, in order: row n of a post
 * is its n-th entry) with new rows of batch `batchId`, marks the posts `scheduled` at their
 * earliest time and aligns their repost children. Returns the replaced rows that had a
 * workflow (their workflows are told to stop waiting for them).
 */
export async function replaceSchedules(tx: EntityManager, workspaceId: string, batchId: string, rows: NewScheduleRow[]): Promise<{ stale: ReplacedRow[]; inserted: number }> {
  assertWorkspaceScope(workspaceId);
  const db = tx.getKysely<SchedulingDB>();
  const postIds = uuidArray([...new Set(rows.map((r) => r.postId))]);
  const counts = new Map<string, number>();
  const ids: string[] = [];
  const ns: number[] = [];
  for (const r of rows) {
    const n = counts.get(r.postId) ?? 0;
    counts.set(r.postId, n + 1);
    ids.push(uuidv7());
    ns.push(n);
  }
  const old = await db
    .deleteFrom('post_schedules')
    .where((eb) => eb('post_id', '=', eb.fn.any(postIds)))
    .returning((eb) => ['id', 'post_id', 'n', eb('dispatched_at', 'is not', null).as('dispatched')])
    .execute();
  // Replaced rows that already have a workflow: it is told to stop waiting for the old row (a
  // workflow that already got the new row ignores that; one that stops is started again for it).
  const stale = old.filter((o) => o.dispatched).map((o) => ({ id: o.id, postId: o.post_id, n: o.n }));
  // One row per array element: the arrays are parameters, the insert is one statement whatever the count.
  const batch = sql<{ id: string; post_id: string; provider_id: string; scheduled_time: Date; automation: Automation; workflow_id: string; n: number }>`unnest(
    ${ids}::uuid[], ${rows.map((r) => r.postId)}::uuid[], ${rows.map((r) => r.providerId)}::uuid[],
    ${rows.map((r) => r.scheduledTime.toISOString())}::timestamptz[], ${rows.map((r) => JSON.stringify(r.automation))}::jsonb[],
    ${rows.map((r, i) => publishWorkflowId(r.postId, ns[i]!))}::text[], ${ns}::int[])`;
  await db
    .insertInto('post_schedules')
    .columns(['id', 'post_id', 'provider_id', 'scheduled_time', 'automation', 'workflow_id', 'status', 'n', 'batch_id', 'created_at', 'updated_at'])
    .expression(
      db
        .selectFrom(batch.as<'u'>(sql`u(id, post_id, provider_id, scheduled_time, automation, workflow_id, n)`))
        .select([
          'u.id',
          'u.post_id',
          'u.provider_id',
          'u.scheduled_time',
          'u.automation',
          'u.workflow_id',
          sql.lit('scheduled' as const).as('status'),
          'u.n',
          sql<string>`${batchId}::uuid`.as('batch_id'),
          sql<Date>`now()`.as('created_at'),
          sql<Date>`now()`.as('updated_at'),
        ]),
    )
    .execute();
  await db
    .updateTable('posts as p')
    .from(
      db
        .selectFrom('post_schedules')
        .select((eb) => ['post_id', eb.fn.min('scheduled_time').as('first')])
        .where((eb) => eb('post_id', '=', eb.fn.any(postIds)))
        .groupBy('post_id')
        .as('s'),
    )
    .set((eb) => ({ status: sql.lit('scheduled' as const), scheduled_time: eb.ref('s.first'), error: null, updated_at: sql`now()` }))
    .whereRef('p.id', '=', 's.post_id')
    .execute();
  const parents = await db
    .selectFrom('posts')
    .select('parent_post_id')
    .distinct()
    .where((eb) => eb('parent_post_id', '=', eb.fn.any(postIds)))
    .execute();
  for (const p of parents) await syncRepostChildren(tx, p.parent_post_id!);
  return { stale, inserted: rows.length };
}

/**
 * Unschedules a post: its waiting rows become `cancelled`, the post a draft without a time,
 * its repost children drafts. Returns the rows cancelled (their workflows are told to stop).
 */
export async function cancelSchedules(tx: EntityManager, postId: string): Promise<ReplacedRow[]> {
  const rows = await tx
    .getKysely<SchedulingDB>()
    .updateTable('post_schedules')
    .set({ status: 'cancelled', updated_at: sql`now()` })
    .where('post_id', '=', postId)
    .where('status', '=', 'scheduled')
    .returning(['id', 'post_id', 'n'])
    .execute();
  await tx.nativeUpdate(Post, { id: postId }, { status: 'draft', scheduledTime: null, updatedAt: ormSql.now() });
  await syncRepostChildren(tx, postId);
  return rows.map((o) => ({ id: o.id, postId: o.post_id, n: o.n }));
}

// ---- Reads and locks of bulk-schedule and external-reply (api/routes/publishing.ts) ----

/** What bulk-schedule validates of a post; `kind` is the provider of its integration (the columns `postsForSchedule` selects). */
export type PostForSchedule = RowOf<typeof postsForSchedule>;

export async function postsForSchedule(em: EntityManager, workspaceId: string, postIds: string[]) {
  assertWorkspaceScope(workspaceId);
  return em
    .getKysely<SchedulingDB>()
    .selectFrom('posts as p')
    .innerJoin('integrations as i', 'i.id', 'p.provider_id')
    .select(['p.id', 'p.status', 'p.error', 'i.provider as kind', 'p.content', 'p.media', 'p.thread_items', 'p.external_post', 'p.parent_post_id'])
    .where((eb) => eb('p.id', '=', eb.fn.any(uuidArray(postIds))))
    .execute();
}

/** Locks the posts, in id order (so concurrent schedulers cannot deadlock), for the rest of the transaction. */
export async function lockPostsForScheduling(tx: EntityManager, postIds: string[]): Promise<void> {
  await tx
    .getKysely<SchedulingDB>()
    .selectFrom('posts')
    .select('id')
    .where((eb) => eb('id', '=', eb.fn.any(uuidArray(postIds))))
    .orderBy('id')
    .forUpdate()
    .execute();
}

// ---- State changes of the publish workflows (activities/dbPosts.ts, activities/publishing.ts) ----

export interface PublishPlan {
  provider: Provider;
  externalPost: boolean;
  threadCount: number;
  threadDelaySecs: number;
  /** Row 0 of a post with an enabled repost configuration starts the repost chain once published. */
  repostChain: boolean;
}

export type ClaimResult =
  | { status: 'claimed'; plan: PublishPlan }
  /** The row says a later time than the workflow's timer (a reschedule whose signal is still on its way). */
  | { status: 'not_due'; scheduledTime: string }
  /** Another row (a newer bulk-schedule) replaced this one. */
  | { status: 'superseded' }
  | { status: 'cancelled' | 'gone' | 'done' };

export type RowOutcome =
  | { status: 'published'; externalId: string; externalUrl: string; threadExternalIds: string[]; error?: PostError | null }
  | { status: 'failed'; error: PostError; externalId?: string | null; externalUrl?: string | null; threadExternalIds?: string[] };

/** The publish workflows' statements: typed Kysely compiled once each (`preparedQuery`), run on the activity's pg pool or transaction. */
const workerQueries = typedQueries<SchedulingDB>();

const lockPostToClaim = preparedQuery((p: { postId: string }) =>
  workerQueries.selectFrom('posts').select(['automation', 'thread_items', 'external_post']).where('id', '=', p.postId).forUpdate(),
);
const lockRowToClaim = preparedQuery((p: { scheduleId: string }) =>
  workerQueries
    .selectFrom('post_schedules as s')
    .innerJoin('integrations as i', 'i.id', 's.provider_id')
    .select(['s.status', 's.scheduled_time', 's.automation', 'i.provider'])
    .where('s.id', '=', p.scheduleId)
    .forUpdate('s'),
);
const rowOfPost = preparedQuery((p: { postId: string; n: number }) =>
  workerQueries.selectFrom('post_schedules').select((eb) => eb.lit(1).as('one')).where('post_id', '=', p.postId).where('n', '=', p.n),
);
const markRowPublishing = preparedQuery((p: { scheduleId: string }) =>
  workerQueries.updateTable('post_schedules').set({ status: sql.lit('publishing'), updated_at: sql`now()` }).where('id', '=', p.scheduleId),
);

/**
 * Flips schedule row `scheduleId` (row `n` of the post) `scheduled → publishing` once, when it is
 * due, and derives the post's status; answers what the workflow may do. Runs in one transaction.
 */
export async function claimScheduleRow(pool: Pool, input: { scheduleId: string; postId: string; n: number }): Promise<ClaimResult> {
  return withTransaction(pool, async (tx) => {
    // Lock order everywhere: post, then its schedule rows.
    const [p] = await lockPostToClaim(tx, input);
    if (!p) return { status: 'gone' };
    const [row] = await lockRowToClaim(tx, input);
    if (!row) {
      const other = await rowOfPost(tx, input);
      return { status: other.length ? 'superseded' : 'gone' };
    }
    if (row.status === 'cancelled') return { status: 'cancelled' };
    if (row.status === 'published' || row.status === 'failed') return { status: 'done' };
    if (row.status === 'scheduled') {
      if (row.scheduled_time.getTime() > Date.now() + DUE_SLACK_MS) return { status: 'not_due', scheduledTime: row.scheduled_time.toISOString() };
      await markRowPublishing(tx, input);
      await refreshPostStatus(tx, input.postId);
    }
    // 'publishing' here is this workflow's own earlier claim whose answer was lost: claimed again.
    return {
      status: 'claimed',
      plan: {
        provider: row.provider,
        externalPost: p.external_post,
        threadCount: p.thread_items.length,
        threadDelaySecs: threadDelaySecs(row.automation, p.automation),
        repostChain: input.n === 0 && !p.external_post && p.automation.crossAccountRepostConfig?.enabled === true,
      },
    };
  });
}

const lockPostToFinish = preparedQuery((p: { postId: string }) => workerQueries.selectFrom('posts').select((eb) => eb.lit(1).as('one')).where('id', '=', p.postId).forUpdate());
/** jsonb values are JSON text parameters (pg would send a JS array as a PostgreSQL array). */
type OutcomeParams = {
  status: RowOutcome['status'];
  externalId: string | null;
  externalUrl: string | null;
  threadExternalIdsJson: string;
  errorJson: string | null;
};
// `returning id`: a query answers rows, and a row says the row was still publishing.
const recordRowOutcome = preparedQuery((p: OutcomeParams & { scheduleId: string }) =>
  workerQueries
    .updateTable('post_schedules')
    .set((eb) => ({
      status: p.status,
      external_id: p.externalId,
      external_url: p.externalUrl,
      thread_external_ids: sql<string[]>`${p.threadExternalIdsJson}`,
      error: sql<PostError | null>`${p.errorJson}`,
      published_at: eb.case().when(eb.val(p.status), '=', sql.lit('published' as const)).then(sql<Date>`now()`).else(sql.lit(null)).end(),
      updated_at: sql`now()`,
    }))
    .where('id', '=', p.scheduleId)
    .where('status', '=', sql.lit('publishing'))
    .returning(['id', 'workspace_id', 'provider_id', 'published_at']),
);
const selectPostStatus = preparedQuery((p: { postId: string }) => workerQueries.selectFrom('posts').select('status').where('id', '=', p.postId));
// The post shows the first row that published (row order) and the latest error.
const recordPostPublished = preparedQuery((p: OutcomeParams & { postId: string }) =>
  workerQueries
    .updateTable('posts as p')
    .set((eb) => ({
      published_at: eb.fn.coalesce('p.published_at', sql<Date>`now()`),
      external_id: eb.fn.coalesce('p.external_id', eb.val(p.externalId)),
      external_url: eb.fn.coalesce('p.external_url', eb.val(p.externalUrl)),
      thread_external_ids: eb.case().when('p.external_id', 'is', null).then(sql<string[]>`${p.threadExternalIdsJson}::jsonb`).else(eb.ref('p.thread_external_ids')).end(),
      error: sql<PostError | null>`${p.errorJson}`,
    }))
    .where('p.id', '=', p.postId),
);
const recordPostError = preparedQuery((p: { postId: string; errorJson: string }) =>
  workerQueries.updateTable('posts').set({ error: sql<PostError>`${p.errorJson}` }).where('id', '=', p.postId),
);
const cancelChildren = preparedQuery((p: { parentId: string }) => cancelRepostChildrenQuery(workerQueries, p.parentId));

/** Records a row's outcome, derives the post's status and, if row 0 failed, cancels the repost children. */
export async function finishScheduleRow(
  pool: Pool,
  input: { scheduleId: string; postId: string; n: number; outcome: RowOutcome },
): Promise<{ postStatus: string; deliveries: DeliveryRef[] }> {
  const o = input.outcome;
  const outcome: OutcomeParams = {
    status: o.status,
    externalId: o.externalId ?? null,
    externalUrl: o.externalUrl ?? null,
    threadExternalIdsJson: JSON.stringify(o.threadExternalIds ?? []),
    errorJson: o.error ? JSON.stringify(o.error) : null,
  };
  return withTransaction(pool, async (tx) => {
    await lockPostToFinish(tx, input);
    const updated = await recordRowOutcome(tx, { ...outcome, scheduleId: input.scheduleId });
    const [row] = updated;
    if (!row) {
      const [cur] = await selectPostStatus(tx, input);
      return { postStatus: cur?.status ?? 'gone', deliveries: [] };
    }
    const status = await refreshPostStatus(tx, input.postId);
    await clearPostRetryAt(tx, input);
    // The row's end is the event (post.published / post.failed), recorded once with it.
    const event = await recordEvent(onClient(tx), postOutcomeEvent(row, input));
    if (o.status === 'published') {
      await recordPostPublished(tx, { ...outcome, postId: input.postId });
    } else {
      await recordPostError(tx, { postId: input.postId, errorJson: outcome.errorJson! }); // a failed outcome carries its error
      if (input.n === 0) await cancelChildren(tx, { parentId: input.postId });
    }
    return { postStatus: status, deliveries: event?.deliveries ?? [] };
  });
}

const finishChild = preparedQuery((p: OutcomeParams & { postId: string }) =>
  workerQueries
    .updateTable('posts')
    .set({
      status: p.status as PostStatus,
      external_id: p.externalId,
      external_url: p.externalUrl,
      error: sql<PostError | null>`${p.errorJson}::jsonb`,
      // A prepared statement: the status is a parameter, so the choice is SQL's.
      published_at: sql<Date | null>`case when ${p.status}::text = 'published' then now() end`,
      updated_at: sql`now()`,
    })
    .where('id', '=', p.postId)
    // Only the claim's end: a retried activity finds the child finished and records nothing twice.
    .where('status', '=', sql.lit('publishing'))
    .returning(['workspace_id', 'provider_id', 'parent_post_id', 'published_at']),
);

/**
 * Records a repost child's outcome (it has no schedule row: the post is its own) and its
 * post.published / post.failed event, once, in one transaction.
 */
export async function finishRepostChildRow(pool: Pool, input: { postId: string; outcome: RowOutcome }): Promise<{ deliveries: DeliveryRef[] }> {
  const o = input.outcome;
  return withTransaction(pool, async (tx) => {
    const [row] = await finishChild(tx, {
      postId: input.postId,
      status: o.status,
      externalId: o.externalId ?? null,
      externalUrl: o.externalUrl ?? null,
      threadExternalIdsJson: '[]',
      errorJson: o.error ? JSON.stringify(o.error) : null,
    });
    if (!row) return { deliveries: [] };
    const ids = { postId: input.postId, scheduleId: null, parentPostId: row.parent_post_id, integrationId: row.provider_id };
    const event: NewEvent =
      o.status === 'published'
        ? {
            workspaceId: row.workspace_id,
            type: 'post.published',
            stateKey: eventStateKey.postOutcome('published', input.postId),
            data: { ...ids, externalId: o.externalId ?? null, externalUrl: o.externalUrl ?? null, publishedAt: row.published_at ? new Date(row.published_at).toISOString() : null },
          }
        : { workspaceId: row.workspace_id, type: 'post.failed', stateKey: eventStateKey.postOutcome('failed', input.postId), data: { ...ids, error: { code: o.error?.code ?? 'publish_failed' } } };
    return { deliveries: (await recordEvent(onClient(tx), event))?.deliveries ?? [] };
  });
}

const setPostRetryAt = preparedQuery((p: { postId: string; scheduleId: string; retryAt: string }) =>
  workerQueries
    .updateTable('posts')
    .set({ retry_at: sql<Date>`${p.retryAt}::timestamptz`, updated_at: sql`now()` })
    .where('id', '=', p.postId)
    // Only while the rate-limited row is still the one publishing.
    .where((eb) => eb.exists(eb.selectFrom('post_schedules').select(eb.lit(1).as('one')).where('id', '=', p.scheduleId).where('status', '=', sql.lit('publishing')))),
);

/** A 429: the post shows when its publish workflow's timer retries it (cleared with the row's outcome). */
export async function recordPostRetryAt(db: Queryable, input: { postId: string; scheduleId: string; retryAt: string }): Promise<void> {
  await setPostRetryAt(db, input);
}

const clearPostRetryAt = preparedQuery((p: { postId: string }) => workerQueries.updateTable('posts').set({ retry_at: null }).where('id', '=', p.postId).where('retry_at', 'is not', null));

/** The event of a schedule row's end: ids and the failure's code only (the post's text and the provider's message stay on the post). */
function postOutcomeEvent(
  row: RowOf<typeof recordRowOutcome>,
  input: { scheduleId: string; postId: string; outcome: RowOutcome },
): NewEvent {
  const o = input.outcome;
  const ids = { postId: input.postId, scheduleId: input.scheduleId, integrationId: row.provider_id };
  return o.status === 'published'
    ? {
        workspaceId: row.workspace_id,
        type: 'post.published',
        stateKey: eventStateKey.postOutcome('published', input.scheduleId),
        data: { ...ids, externalId: o.externalId ?? null, externalUrl: o.externalUrl ?? null, publishedAt: row.published_at ? new Date(row.published_at).toISOString() : null },
      }
    : {
        workspaceId: row.workspace_id,
        type: 'post.failed',
        stateKey: eventStateKey.postOutcome('failed', input.scheduleId),
        data: { ...ids, error: { code: o.error?.code ?? 'publish_failed' } },
      };
}

const rowStatuses = preparedQuery((p: { postId: string }) => workerQueries.selectFrom('post_schedules').select('status').where('post_id', '=', p.postId));
const setPostStatus = preparedQuery((p: { postId: string; status: PostStatus }) =>
  workerQueries.updateTable('posts').set({ status: p.status, updated_at: sql`now()` }).where('id', '=', p.postId),
);

/** A post's status from its schedule rows (`aggregatePostStatus`), written to the post. */
async function refreshPostStatus(tx: Queryable, postId: string): Promise<string> {
  const status = aggregatePostStatus((await rowStatuses(tx, { postId })).map((r) => r.status));
  await setPostStatus(tx, { postId, status });
  return status;
}

const rowProviderId = preparedQuery((p: { scheduleId: string }) => workerQueries.selectFrom('post_schedules').select('provider_id').where('id', '=', p.scheduleId));

/** The integration a schedule row publishes with, or null when the row no longer exists. */
export async function scheduleRowProviderId(db: Queryable, scheduleId: string): Promise<string | null> {
  const [row] = await rowProviderId(db, { scheduleId });
  return row?.provider_id ?? null;
}

const selectDispatchable = preparedQuery((p: { batchId: string; horizonSecs: number; limit: number }) =>
  workerQueries
    .selectFrom('post_schedules as s')
    .innerJoin('posts as p', 'p.id', 's.post_id')
    .select(['s.id', 's.post_id', 's.n', 's.scheduled_time', 'p.external_post'])
    .where('s.batch_id', '=', p.batchId)
    .where('s.status', '=', sql.lit('scheduled'))
    .where('s.dispatched_at', 'is', null)
    .where('s.scheduled_time', '<=', sql<Date>`now() + make_interval(secs => ${p.horizonSecs})`)
    .orderBy('s.scheduled_time')
    .orderBy('s.id')
    .limit(p.limit),
);

/** A schedule row waiting for its workflow, and whether its post comments on an external post. */
export type DispatchableRow = RowOf<typeof selectDispatchable>;

/** Up to `limit` rows of the batch still waiting for their workflow and due within `horizonMs`, earliest first. */
export async function dispatchableRows(db: Queryable, batchId: string, horizonMs: number, limit: number): Promise<DispatchableRow[]> {
  return selectDispatchable(db, { batchId, horizonSecs: horizonMs / 1000, limit });
}

const markDispatched = preparedQuery((p: { scheduleIds: string[] }) =>
  workerQueries.updateTable('post_schedules').set({ dispatched_at: sql`now()` }).where((eb) => eb('id', '=', eb.fn.any(uuidArray(p.scheduleIds)))),
);

export async function markRowsDispatched(db: Queryable, scheduleIds: string[]): Promise<void> {
  await markDispatched(db, { scheduleIds });
}

const firstUndispatched = preparedQuery((p: { batchId: string }) =>
  workerQueries
    .selectFrom('post_schedules')
    .select((eb) => eb.fn.min('scheduled_time').as('first'))
    .where('batch_id', '=', p.batchId)
    .where('status', '=', sql.lit('scheduled'))
    .where('dispatched_at', 'is', null),
);

/** The earliest time of a batch row still waiting for its workflow, or null. */
export async function firstUndispatchedTime(db: Queryable, batchId: string): Promise<Date | null> {
  const [row] = await firstUndispatched(db, { batchId });
  return row?.first ?? null;
}
