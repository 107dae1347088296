/**
 * Schedule rows (`post_schedules`, one per bulk-schedule row) as the API writes them: set-based
 * SQL so 10,000 rows are one statement each, all inside the caller's transaction.
 */
import { v7 as uuidv7 } from 'uuid';
import { publishWorkflowId } from '../domain/publishing.js';
import type { Automation, MediaRef, PostStatus, Provider, ThreadItem } from '../domain/social.js';
import type { Queryable } from './pool.js';
import { syncRepostChildren } from './posts.js';

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
export async function livePublishRows(db: Queryable, postIds: string[]): Promise<Array<{ post_id: string; status: string }>> {
  const r = await db.query<{ post_id: string; status: string }>(
    `select post_id, status from post_schedules where post_id = any($1::uuid[]) and status in ('publishing','published')`,
    [postIds],
  );
  return r.rows;
}

/**
 * Replaces the schedule rows of the posts in `rows` (grouped by post, in order: row n of a post
 * is its n-th entry) with new rows of batch `batchId`, marks the posts `scheduled` at their
 * earliest time and aligns their repost children. Returns the replaced rows that had a
 * workflow (their workflows are told to stop waiting for them).
 */
export async function replaceSchedules(db: Queryable, workspaceId: string, batchId: string, rows: NewScheduleRow[]): Promise<{ stale: ReplacedRow[]; inserted: number }> {
  const postIds = [...new Set(rows.map((r) => r.postId))];
  const counts = new Map<string, number>();
  const ids: string[] = [];
  const ns: number[] = [];
  for (const r of rows) {
    const n = counts.get(r.postId) ?? 0;
    counts.set(r.postId, n + 1);
    ids.push(uuidv7());
    ns.push(n);
  }
  const old = await db.query<{ id: string; post_id: string; n: number; dispatched: boolean }>(
    `delete from post_schedules where post_id = any($1::uuid[]) returning id, post_id, n, dispatched_at is not null as dispatched`,
    [postIds],
  );
  // Replaced rows that already have a workflow: it is told to stop waiting for the old row (a
  // workflow that already got the new row ignores that; one that stops is started again for it).
  const stale = old.rows.filter((o) => o.dispatched).map((o) => ({ id: o.id, postId: o.post_id, n: o.n }));
  await db.query(
    `insert into post_schedules (id, post_id, workspace_id, provider_id, scheduled_time, automation, workflow_id, status, n, batch_id, created_at, updated_at)
     select u.id, u.post_id, $1, u.provider_id, u.scheduled_time, u.automation, u.workflow_id, 'scheduled', u.n, $2, now(), now()
       from unnest($3::uuid[], $4::uuid[], $5::uuid[], $6::timestamptz[], $7::jsonb[], $8::text[], $9::int[])
         as u(id, post_id, provider_id, scheduled_time, automation, workflow_id, n)`,
    [
      workspaceId,
      batchId,
      ids,
      rows.map((r) => r.postId),
      rows.map((r) => r.providerId),
      rows.map((r) => r.scheduledTime.toISOString()),
      rows.map((r) => JSON.stringify(r.automation)),
      rows.map((r, i) => publishWorkflowId(r.postId, ns[i]!)),
      ns,
    ],
  );
  await db.query(
    `update posts p set status = 'scheduled', scheduled_time = s.first, error = null, updated_at = now()
       from (select post_id, min(scheduled_time) as first from post_schedules where post_id = any($1::uuid[]) group by post_id) s
      where p.id = s.post_id`,
    [postIds],
  );
  const parents = await db.query<{ parent_post_id: string }>(`select distinct parent_post_id from posts where parent_post_id = any($1::uuid[])`, [postIds]);
  for (const p of parents.rows) await syncRepostChildren(db, p.parent_post_id);
  return { stale, inserted: rows.length };
}

/**
 * Unschedules a post: its waiting rows become `cancelled`, the post a draft without a time,
 * its repost children drafts. Returns the rows cancelled (their workflows are told to stop).
 */
export async function cancelSchedules(db: Queryable, postId: string): Promise<ReplacedRow[]> {
  const r = await db.query<{ id: string; post_id: string; n: number }>(
    `update post_schedules set status = 'cancelled', updated_at = now() where post_id = $1 and status = 'scheduled' returning id, post_id, n`,
    [postId],
  );
  await db.query(`update posts set status = 'draft', scheduled_time = null, updated_at = now() where id = $1`, [postId]);
  await syncRepostChildren(db, postId);
  return r.rows.map((o) => ({ id: o.id, postId: o.post_id, n: o.n }));
}

// ---- Reads and locks of bulk-schedule and external-reply (api/routes/publishing.ts) ----

/** What bulk-schedule validates of a post; `kind` is the provider of its integration. */
export interface PostForSchedule {
  id: string;
  status: PostStatus;
  kind: Provider;
  content: string;
  media: MediaRef[];
  thread_items: ThreadItem[];
  external_post: boolean;
  parent_post_id: string | null;
}

export async function postsForSchedule(db: Queryable, workspaceId: string, postIds: string[]): Promise<PostForSchedule[]> {
  const r = await db.query<PostForSchedule>(
    `select p.id, p.status, i.provider as kind, p.content, p.media, p.thread_items, p.external_post, p.parent_post_id
       from posts p join integrations i on i.id = p.provider_id
      where p.workspace_id = $1 and p.id = any($2::uuid[])`,
    [workspaceId, postIds],
  );
  return r.rows;
}

/** Locks the posts, in id order (so concurrent schedulers cannot deadlock), for the rest of the transaction. */
export async function lockPostsForScheduling(tx: Queryable, postIds: string[]): Promise<void> {
  await tx.query(`select id from posts where id = any($1::uuid[]) order by id for update`, [postIds]);
}
