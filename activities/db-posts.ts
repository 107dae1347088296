/**
 * State changes of scheduled publishing, one short transaction each. The database is the
 * source of truth for whether a row may still publish: a claim flips it `scheduled → publishing`
 * exactly once, so a cancelled, replaced or already-claimed row never publishes (whatever
 * signals a workflow did or did not receive).
 */
import type { ActivityDeps } from './deps.js';
import { withTransaction, type PoolClient } from '../db/pool.js';
import { cancelRepostChildren } from '../db/posts.js';
import { aggregatePostStatus, threadDelaySecs, type ScheduleRowStatus } from '../domain/publishing.js';
import type { Automation, PostError, Provider } from '../domain/social.js';

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

export interface RepostChild {
  postId: string;
  scheduledTime: string;
  provider: Provider;
}

/**
 * How early a claim may come: the workflow wakes a few seconds before `scheduledTime` (its
 * provider step holds the request until then), plus clock skew.
 */
const DUE_SLACK_MS = 15_000;

async function refreshPostStatus(tx: PoolClient, postId: string): Promise<string> {
  const rows = await tx.query<{ status: ScheduleRowStatus }>(`select status from post_schedules where post_id = $1`, [postId]);
  const status = aggregatePostStatus(rows.rows.map((r) => r.status));
  await tx.query(`update posts set status = $2, updated_at = now() where id = $1`, [postId, status]);
  return status;
}

export function createPostDbActivities(deps: ActivityDeps) {
  const { pool } = deps;
  return {
    async claimSchedule(input: { scheduleId: string; postId: string; n: number }): Promise<ClaimResult> {
      return withTransaction(pool, async (tx) => {
        // Lock order everywhere: post, then its schedule rows.
        const post = await tx.query<{ automation: Automation; thread_items: unknown[]; external_post: boolean }>(
          `select automation, thread_items, external_post from posts where id = $1 for update`,
          [input.postId],
        );
        if (!post.rows[0]) return { status: 'gone' };
        const r = await tx.query<{ status: ScheduleRowStatus; scheduled_time: Date; automation: Automation; provider: Provider }>(
          `select s.status, s.scheduled_time, s.automation, i.provider
             from post_schedules s join integrations i on i.id = s.provider_id
            where s.id = $1 for update of s`,
          [input.scheduleId],
        );
        const row = r.rows[0];
        if (!row) {
          const other = await tx.query(`select 1 from post_schedules where post_id = $1 and n = $2`, [input.postId, input.n]);
          return { status: other.rowCount ? 'superseded' : 'gone' };
        }
        if (row.status === 'cancelled') return { status: 'cancelled' };
        if (row.status === 'published' || row.status === 'failed') return { status: 'done' };
        if (row.status === 'scheduled') {
          if (row.scheduled_time.getTime() > Date.now() + DUE_SLACK_MS) return { status: 'not_due', scheduledTime: row.scheduled_time.toISOString() };
          await tx.query(`update post_schedules set status = 'publishing', updated_at = now() where id = $1`, [input.scheduleId]);
          await refreshPostStatus(tx, input.postId);
        }
        // 'publishing' here is this workflow's own earlier claim whose answer was lost: claimed again.
        const p = post.rows[0];
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
    },

    /** Records a row's outcome, derives the post's status and, if row 0 failed, cancels the repost children. */
    async finishSchedule(input: { scheduleId: string; postId: string; n: number; outcome: RowOutcome }): Promise<{ postStatus: string }> {
      const o = input.outcome;
      return withTransaction(pool, async (tx) => {
        await tx.query(`select 1 from posts where id = $1 for update`, [input.postId]);
        const upd = await tx.query(
          `update post_schedules
              set status = $2, external_id = $3, external_url = $4, thread_external_ids = $5, error = $6,
                  published_at = case when $2 = 'published' then now() else null end, updated_at = now()
            where id = $1 and status = 'publishing'`,
          [input.scheduleId, o.status, o.externalId ?? null, o.externalUrl ?? null, JSON.stringify(o.threadExternalIds ?? []), o.error ? JSON.stringify(o.error) : null],
        );
        if (!upd.rowCount) {
          const cur = await tx.query<{ status: string }>(`select status from posts where id = $1`, [input.postId]);
          return { postStatus: cur.rows[0]?.status ?? 'gone' };
        }
        const status = await refreshPostStatus(tx, input.postId);
        if (o.status === 'published') {
          // The post shows the first row that published (row order) and the latest error.
          await tx.query(
            `update posts p set published_at = coalesce(p.published_at, now()),
                    external_id = coalesce(p.external_id, $2), external_url = coalesce(p.external_url, $3),
                    thread_external_ids = case when p.external_id is null then $4::jsonb else p.thread_external_ids end,
                    error = $5
              where p.id = $1`,
            [input.postId, o.externalId, o.externalUrl, JSON.stringify(o.threadExternalIds), o.error ? JSON.stringify(o.error) : null],
          );
        } else {
          await tx.query(`update posts set error = $2 where id = $1`, [input.postId, JSON.stringify(o.error)]);
          if (input.n === 0) await cancelRepostChildren(tx, input.postId);
        }
        return { postStatus: status };
      });
    },

    /** Children still due to reshare the parent, earliest first. */
    async loadRepostChildren(input: { parentPostId: string }): Promise<RepostChild[]> {
      const r = await pool.query<{ id: string; scheduled_time: Date; provider: Provider }>(
        `select p.id, p.scheduled_time, i.provider from posts p join integrations i on i.id = p.provider_id
          where p.parent_post_id = $1 and p.status = 'scheduled' and p.scheduled_time is not null
          order by p.scheduled_time, p.id`,
        [input.parentPostId],
      );
      return r.rows.map((c) => ({ postId: c.id, scheduledTime: c.scheduled_time.toISOString(), provider: c.provider }));
    },

    async claimRepostChild(input: { postId: string }): Promise<{ status: 'claimed' | 'cancelled' } | { status: 'not_due'; scheduledTime: string }> {
      return withTransaction(pool, async (tx) => {
        const r = await tx.query<{ status: string; scheduled_time: Date | null }>(`select status, scheduled_time from posts where id = $1 for update`, [input.postId]);
        const c = r.rows[0];
        if (!c) return { status: 'cancelled' };
        if (c.status === 'publishing') return { status: 'claimed' };
        if (c.status !== 'scheduled' || !c.scheduled_time) return { status: 'cancelled' };
        if (c.scheduled_time.getTime() > Date.now() + DUE_SLACK_MS) return { status: 'not_due', scheduledTime: c.scheduled_time.toISOString() };
        await tx.query(`update posts set status = 'publishing', updated_at = now() where id = $1`, [input.postId]);
        return { status: 'claimed' };
      });
    },

    async finishRepostChild(input: { postId: string; outcome: RowOutcome }): Promise<void> {
      const o = input.outcome;
      await pool.query(
        `update posts set status = $2, external_id = $3, external_url = $4, error = $5,
                published_at = case when $2 = 'published' then now() else null end, updated_at = now()
          where id = $1 and status = 'publishing'`,
        [input.postId, o.status, o.externalId ?? null, o.externalUrl ?? null, o.error ? JSON.stringify(o.error) : null],
      );
    },
  };
}
