/**
 * Post rows as the API shows them, and the repost-children rules shared by the API
 * (`/v1/posts/{id}/reposting`, bulk-schedule, unschedule) and the publishing activities.
 * Everything takes a pg `Queryable` so it runs inside the caller's transaction.
 */
import { v7 as uuidv7 } from 'uuid';
import { DUE_SLACK_MS } from '../domain/publishing.js';
import type { Article, Automation, MediaRef, PostError, PostStatus, Provider, ThreadItem } from '../domain/social.js';
import { withTransaction, type Pool, type Queryable } from './pool.js';

export interface PostRow {
  id: string;
  workspace_id: string;
  provider_id: string;
  status: PostStatus;
  content: string;
  media: MediaRef[];
  articles: Article[];
  thread_items: ThreadItem[];
  automation: Automation;
  external_post: boolean;
  external_post_url: string | null;
  parent_post_id: string | null;
  repost_delay_secs: number | null;
  scheduled_time: Date | null;
  published_at: Date | null;
  external_id: string | null;
  external_url: string | null;
  error: PostError | null;
  created_at: Date;
  updated_at: Date;
}

export const POST_COLUMNS =
  'id, workspace_id, provider_id, status, content, media, articles, thread_items, automation, external_post, external_post_url, parent_post_id, ' +
  'repost_delay_secs, scheduled_time, published_at, external_id, external_url, error, created_at, updated_at';

/** The API shape of a post (`Post` in api/schemas/posts.ts). */
export function postJson(r: PostRow) {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    id: r.id,
    providerId: r.provider_id,
    status: r.status,
    content: r.content,
    media: r.media,
    articles: r.articles,
    threadItems: r.thread_items,
    automation: r.automation,
    externalPost: r.external_post,
    externalPostUrl: r.external_post_url,
    parentPostId: r.parent_post_id,
    repostDelaySecs: r.repost_delay_secs,
    scheduledTime: iso(r.scheduled_time),
    publishedAt: iso(r.published_at),
    externalId: r.external_id,
    externalUrl: r.external_url,
    error: r.error,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

export async function findPost(db: Queryable, workspaceId: string, id: string, forUpdate = false): Promise<PostRow | undefined> {
  const r = await db.query<PostRow>(`select ${POST_COLUMNS} from posts where id = $1 and workspace_id = $2${forUpdate ? ' for update' : ''}`, [id, workspaceId]);
  return r.rows[0];
}

/** Children that can still publish (draft or scheduled), oldest first. */
export async function activeRepostChildren(db: Queryable, parentId: string): Promise<PostRow[]> {
  const r = await db.query<PostRow>(
    `select ${POST_COLUMNS} from posts where parent_post_id = $1 and status in ('draft','scheduled') order by created_at, id`,
    [parentId],
  );
  return r.rows;
}

/**
 * Aligns the active children with their parent after it was (re)scheduled or unscheduled:
 * a scheduled parent makes them `scheduled` at parent time + delay, otherwise they are drafts
 * without a time. Returns the children updated.
 */
export async function syncRepostChildren(db: Queryable, parentId: string): Promise<PostRow[]> {
  const r = await db.query<PostRow>(
    `update posts c
        set status = case when p.status = 'scheduled' and p.scheduled_time is not null then 'scheduled' else 'draft' end,
            scheduled_time = case when p.status = 'scheduled' then p.scheduled_time + make_interval(secs => c.repost_delay_secs) else null end,
            updated_at = now()
       from posts p
      where p.id = $1 and c.parent_post_id = p.id and c.status in ('draft','scheduled')
      returning ${POST_COLUMNS.split(', ').map((c) => `c.${c}`).join(', ')}`,
    [parentId],
  );
  return r.rows;
}

/** Cancels the children that have not published yet (parent failed, cancelled or reposting disabled). */
export async function cancelRepostChildren(db: Queryable, parentId: string, providerIds?: string[]): Promise<number> {
  const r = await db.query(
    `update posts set status = 'cancelled', updated_at = now()
      where parent_post_id = $1 and status in ('draft','scheduled')${providerIds ? ' and provider_id = any($2::uuid[])' : ''}`,
    providerIds ? [parentId, providerIds] : [parentId],
  );
  return r.rowCount ?? 0;
}

export interface RepostTargetRow {
  providerId: string;
  scheduleInSecs: number;
}

/**
 * Makes the active children match `targets`: a target with an active child gets the new delay,
 * a new target gets a new child, active children of targets no longer listed are cancelled.
 * Children already published (or publishing) are left alone.
 */
export async function replaceRepostChildren(db: Queryable, parent: PostRow, targets: RepostTargetRow[]): Promise<void> {
  const active = await activeRepostChildren(db, parent.id);
  const byProvider = new Map(active.map((c) => [c.provider_id, c]));
  const wanted = new Set(targets.map((t) => t.providerId));
  const gone = active.filter((c) => !wanted.has(c.provider_id)).map((c) => c.provider_id);
  if (gone.length) await cancelRepostChildren(db, parent.id, gone);
  for (const t of targets) {
    const existing = byProvider.get(t.providerId);
    if (existing) {
      await db.query(`update posts set repost_delay_secs = $2, updated_at = now() where id = $1`, [existing.id, t.scheduleInSecs]);
    } else {
      await db.query(
        `insert into posts (id, workspace_id, provider_id, status, content, media, articles, thread_items, automation, external_post,
                            parent_post_id, repost_delay_secs, thread_external_ids, created_at, updated_at)
         values ($1, $2, $3, 'draft', '', '[]', '[]', '[]', '{}', false, $4, $5, '[]', now(), now())`,
        [uuidv7(), parent.workspace_id, t.providerId, parent.id, t.scheduleInSecs],
      );
    }
  }
  await syncRepostChildren(db, parent.id);
}

// --- Statements of the posts API (api/routes/posts.ts) ---

export interface NewDraftPost {
  providerId: string;
  content: string;
  media?: MediaRef[];
  articles?: Article[];
  threadItems?: ThreadItem[];
  automation?: Automation;
}

export async function insertDraftPost(db: Queryable, workspaceId: string, p: NewDraftPost): Promise<PostRow> {
  const r = await db.query<PostRow>(
    `insert into posts (id, workspace_id, provider_id, status, content, media, articles, thread_items, automation, external_post, thread_external_ids, created_at, updated_at)
     values ($1, $2, $3, 'draft', $4, $5, $6, $7, $8, false, '[]', now(), now()) returning ${POST_COLUMNS}`,
    [
      uuidv7(),
      workspaceId,
      p.providerId,
      p.content,
      JSON.stringify(p.media ?? []),
      JSON.stringify(p.articles ?? []),
      JSON.stringify(p.threadItems ?? []),
      JSON.stringify(p.automation ?? {}),
    ],
  );
  return r.rows[0]!;
}

/** The changes of a draft edit; absent properties are left as they are. */
export interface DraftPostChanges {
  providerId?: string;
  content?: string;
  media?: MediaRef[];
  articles?: Article[];
  threadItems?: ThreadItem[];
  automation?: Automation;
}

export async function updateDraftPost(db: Queryable, postId: string, c: DraftPostChanges): Promise<PostRow> {
  const sets: string[] = [];
  const values: unknown[] = [postId];
  const set = (col: string, v: unknown) => {
    values.push(v);
    sets.push(`${col} = $${values.length}`);
  };
  if (c.providerId !== undefined) set('provider_id', c.providerId);
  if (c.content !== undefined) set('content', c.content);
  if (c.media !== undefined) set('media', JSON.stringify(c.media));
  if (c.articles !== undefined) set('articles', JSON.stringify(c.articles));
  if (c.threadItems !== undefined) set('thread_items', JSON.stringify(c.threadItems));
  if (c.automation !== undefined) set('automation', JSON.stringify(c.automation));
  const r = await db.query<PostRow>(`update posts set ${sets.join(', ')}, updated_at = now() where id = $1 returning ${POST_COLUMNS}`, values);
  return r.rows[0]!;
}

export async function setPostAutomation(db: Queryable, postId: string, automation: Automation): Promise<void> {
  await db.query(`update posts set automation = $2, updated_at = now() where id = $1`, [postId, JSON.stringify(automation)]);
}

export async function markPostCancelled(db: Queryable, postId: string): Promise<void> {
  await db.query(`update posts set status = 'cancelled', scheduled_time = null, updated_at = now() where id = $1`, [postId]);
}

/** Deletes the post unless it is scheduled or publishing; returns the rows deleted. */
export async function deleteUnscheduledPost(db: Queryable, workspaceId: string, postId: string): Promise<number> {
  const r = await db.query(`delete from posts where id = $1 and workspace_id = $2 and status not in ('scheduled','publishing')`, [postId, workspaceId]);
  return r.rowCount ?? 0;
}

/** One page of posts: `filter`, `keyset`, `sortSelect` and `orderBy` are compiled SQL over alias `p` whose parameters are in `values` (`countValues`: those of `filter` only). */
export async function selectPostPage<K extends Record<string, unknown>>(
  db: Queryable,
  q: { filter: string; keyset: string; sortSelect: string; orderBy: string; limit: number; values: unknown[]; countValues: unknown[] },
): Promise<{ rows: Array<PostRow & K>; total: number }> {
  const columns = POST_COLUMNS.split(', ').map((c) => `p.${c}`).join(', ');
  const [rows, count] = await Promise.all([
    db.query<PostRow & K>(`select ${columns}, ${q.sortSelect} from posts p where ${q.filter} and (${q.keyset})
            order by ${q.orderBy} limit ${q.limit + 1}`, q.values),
    db.query<{ n: number }>(`select count(*)::int as n from posts p where ${q.filter}`, q.countValues),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}

// ---- Writes of the publishing routes (api/routes/publishing.ts) ----

/** A draft comment on an external pronet post (`externalPost: true`). */
export async function insertExternalReplyDraft(db: Queryable, workspaceId: string, id: string, providerId: string, content: string, externalPostUrl: string): Promise<void> {
  await db.query(
    `insert into posts (id, workspace_id, provider_id, status, content, media, articles, thread_items, automation, external_post,
                        external_post_url, thread_external_ids, created_at, updated_at)
     values ($1, $2, $3, 'draft', $4, '[]', '[]', '[]', '{}', true, $5, '[]', now(), now())`,
    [id, workspaceId, providerId, content, externalPostUrl],
  );
}

/** A repost child's cancel (unschedule); its scheduled_time stays. */
export async function markRepostCancelled(db: Queryable, id: string): Promise<void> {
  await db.query(`update posts set status = 'cancelled', updated_at = now() where id = $1`, [id]);
}

// ---- Reads and state changes of the publish workflows (activities/db-posts.ts, activities/publishing.ts) ----

export interface RepostChild {
  postId: string;
  scheduledTime: string;
  provider: Provider;
}

/** Children still due to reshare the parent, earliest first. */
export async function dueRepostChildren(db: Queryable, parentPostId: string): Promise<RepostChild[]> {
  const r = await db.query<{ id: string; scheduled_time: Date; provider: Provider }>(
    `select p.id, p.scheduled_time, i.provider from posts p join integrations i on i.id = p.provider_id
      where p.parent_post_id = $1 and p.status = 'scheduled' and p.scheduled_time is not null
      order by p.scheduled_time, p.id`,
    [parentPostId],
  );
  return r.rows.map((c) => ({ postId: c.id, scheduledTime: c.scheduled_time.toISOString(), provider: c.provider }));
}

/** Flips a due repost child `scheduled → publishing` once (a child already publishing is this chain's own earlier claim). */
export async function claimRepostChild(pool: Pool, postId: string): Promise<{ status: 'claimed' | 'cancelled' } | { status: 'not_due'; scheduledTime: string }> {
  return withTransaction(pool, async (tx) => {
    const r = await tx.query<{ status: string; scheduled_time: Date | null }>(`select status, scheduled_time from posts where id = $1 for update`, [postId]);
    const c = r.rows[0];
    if (!c) return { status: 'cancelled' };
    if (c.status === 'publishing') return { status: 'claimed' };
    if (c.status !== 'scheduled' || !c.scheduled_time) return { status: 'cancelled' };
    if (c.scheduled_time.getTime() > Date.now() + DUE_SLACK_MS) return { status: 'not_due', scheduledTime: c.scheduled_time.toISOString() };
    await tx.query(`update posts set status = 'publishing', updated_at = now() where id = $1`, [postId]);
    return { status: 'claimed' };
  });
}

/** Records a claimed repost child's outcome. */
export async function finishRepostChild(
  db: Queryable,
  postId: string,
  o: { status: 'published' | 'failed'; externalId?: string | null; externalUrl?: string | null; error?: PostError | null },
): Promise<void> {
  await db.query(
    `update posts set status = $2, external_id = $3, external_url = $4, error = $5,
            published_at = case when $2 = 'published' then now() else null end, updated_at = now()
      where id = $1 and status = 'publishing'`,
    [postId, o.status, o.externalId ?? null, o.externalUrl ?? null, o.error ? JSON.stringify(o.error) : null],
  );
}

/** What a publish step sends of a post of the workspace. */
export interface PostToPublish {
  provider_id: string;
  content: string;
  media: MediaRef[];
  thread_items: ThreadItem[];
  external_post: boolean;
  external_post_url: string | null;
  parent_post_id: string | null;
}

export async function postToPublish(db: Queryable, workspaceId: string, postId: string): Promise<PostToPublish | undefined> {
  const r = await db.query<PostToPublish>(
    `select provider_id, content, media, thread_items, external_post, external_post_url, parent_post_id from posts where id = $1 and workspace_id = $2`,
    [postId, workspaceId],
  );
  return r.rows[0];
}

/** The parent a repost child reshares: its external id (null until published) and its account's provider. */
export async function repostParent(db: Queryable, parentPostId: string | null): Promise<{ external_id: string | null; provider: Provider } | undefined> {
  const r = await db.query<{ external_id: string | null; provider: Provider }>(
    `select p.external_id, i.provider from posts p join integrations i on i.id = p.provider_id where p.id = $1`,
    [parentPostId],
  );
  return r.rows[0];
}
