/**
 * Posts: draft CRUD through the entity manager (`Post` of db/social.ts is the row's one shape),
 * the repost-children rules shared by the API (`/v1/posts/{id}/reposting`, bulk-schedule,
 * unschedule, deletion) and the publish workflows' reads and state changes. The repost-children
 * statements take the entity manager of the caller's `em.transactional` (Kysely typed from the
 * entities for the set-based ones, so they run in that transaction); the workflows' reads are the
 * same typed Kysely, compiled once and run on pg (`preparedQuery`), off the entity manager.
 */
import { LockMode, sql as ormSql, type InferEntity } from '@mikro-orm/core';
import { sql, type Kysely, type SqlBool } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { DUE_SLACK_MS } from '../domain/publishing.js';
import type { Article, Automation, MediaRef, Provider, ThreadItem } from '../domain/social.js';
import type { Queryable } from './pool.js';
import { entityRows } from './entityRows.js';
import { compileSort, compileWhere, keysetPredicate, reverseOrder, type CompiledSort } from './conditionSql.js';
import { preparedQuery, runQuery, typedQueries, uuidArray, type RowOf } from './sqlFragments.js';
import { postColumns } from './postColumns.js';
import { Post, type SchedulingDB } from './social.js';
import { acrossWorkspaces, assertWorkspaceScope } from './tenancy.js';

export type PostEntity = InferEntity<typeof Post>;

/** A post of the workspace (the `workspace` filter), or null. */
export async function findPost(em: EntityManager, id: string): Promise<PostEntity | null> {
  return em.findOne(Post, { id });
}

/** The post of the workspace, locked (`for update`) in the caller's transaction (`em.transactional`), or null. */
export async function lockPost(tx: EntityManager, id: string): Promise<PostEntity | null> {
  // refresh: the request's identity map may hold the post as read before the lock.
  return tx.findOne(Post, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}

/** Children that can still publish (draft or scheduled), oldest first. */
async function activeRepostChildren(tx: EntityManager, parentId: string): Promise<Array<{ id: string; provider_id: string }>> {
  return tx
    .getKysely<SchedulingDB>()
    .selectFrom('posts')
    .select(['id', 'provider_id'])
    .where('parent_post_id', '=', parentId)
    .where('status', 'in', ['draft', 'scheduled'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/**
 * Aligns the active children with their parent after it was (re)scheduled or unscheduled:
 * a scheduled parent makes them `scheduled` at parent time + delay, otherwise they are drafts
 * without a time. Returns the children updated.
 */
export async function syncRepostChildren(tx: EntityManager, parentId: string): Promise<number> {
  // One set-based update of the children from their parent's row.
  const r = await tx
    .getKysely<SchedulingDB>()
    .updateTable('posts as c')
    .from('posts as p')
    .set((eb) => ({
      status: eb
        .case()
        .when(eb.and([eb('p.status', '=', 'scheduled'), eb('p.scheduled_time', 'is not', null)]))
        .then(sql.lit('scheduled' as const))
        .else(sql.lit('draft' as const))
        .end(),
      scheduled_time: eb
        .case()
        .when('p.status', '=', 'scheduled')
        .then(sql<Date>`${eb.ref('p.scheduled_time')} + make_interval(secs => ${eb.ref('c.repost_delay_secs')})`)
        .else(null)
        .end(),
      updated_at: sql`now()`,
    }))
    .where('p.id', '=', parentId)
    .whereRef('c.parent_post_id', '=', 'p.id')
    .where('c.status', 'in', ['draft', 'scheduled'])
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * The children of `parentId` that have not published yet become `cancelled` (or only those of
 * `providerIds`). One statement for both sides: the API runs it on its transaction's Kysely
 * ({@link cancelRepostChildren}); the worker's `finishScheduleRow` (db/schedules.ts) on its pg
 * transaction (`preparedQuery` over `typedQueries`), since the publish path stays off the entity manager.
 */
export const cancelRepostChildrenQuery = (db: Kysely<SchedulingDB>, parentId: string, providerIds?: readonly string[]) =>
  db
    .updateTable('posts')
    .set({ status: sql.lit('cancelled'), updated_at: sql`now()` })
    .where('parent_post_id', '=', parentId)
    .where('status', 'in', [sql.lit('draft' as const), sql.lit('scheduled' as const)])
    .$if(providerIds !== undefined, (qb) => qb.where((eb) => eb('provider_id', '=', eb.fn.any(uuidArray(providerIds!)))));

/** Cancels the children that have not published yet (parent cancelled or reposting disabled), or only those of `providerIds`. */
export async function cancelRepostChildren(tx: EntityManager, parentId: string, providerIds?: string[]): Promise<void> {
  await cancelRepostChildrenQuery(tx.getKysely<SchedulingDB>(), parentId, providerIds).execute();
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
export async function replaceRepostChildren(tx: EntityManager, parent: { id: string; workspaceId: string }, targets: RepostTargetRow[]): Promise<void> {
  const active = await activeRepostChildren(tx, parent.id);
  const byProvider = new Map(active.map((c) => [c.provider_id, c]));
  const wanted = new Set(targets.map((t) => t.providerId));
  const gone = active.filter((c) => !wanted.has(c.provider_id)).map((c) => c.provider_id);
  if (gone.length) await cancelRepostChildren(tx, parent.id, gone);
  for (const t of targets) {
    const existing = byProvider.get(t.providerId);
    if (existing) {
      await tx.nativeUpdate(Post, { id: existing.id }, { repostDelaySecs: t.scheduleInSecs, updatedAt: ormSql.now() });
    } else {
      await tx.insert(Post, {
        id: uuidv7(),
        workspaceId: parent.workspaceId,
        providerId: t.providerId,
        status: 'draft',
        content: '',
        parentPostId: parent.id,
        repostDelaySecs: t.scheduleInSecs,
      });
    }
  }
  await syncRepostChildren(tx, parent.id);
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

export async function insertDraftPost(em: EntityManager, workspaceId: string, p: NewDraftPost): Promise<PostEntity> {
  const post = em.create(Post, {
    id: uuidv7(),
    workspaceId,
    providerId: p.providerId,
    status: 'draft',
    content: p.content,
    media: p.media ?? [],
    articles: p.articles ?? [],
    threadItems: p.threadItems ?? [],
    automation: p.automation ?? {},
    externalPost: false,
    threadExternalIds: [],
  });
  await em.flush();
  return readBack(em, post);
}

/** The post as stored: jsonb orders object keys its own way, and the API answers what PostgreSQL holds. */
async function readBack(em: EntityManager, post: PostEntity): Promise<PostEntity> {
  return (await em.refresh(post))!;
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

/** Applies the changes to the post (loaded by the caller, in its transaction) and writes them. */
export async function updateDraftPost(em: EntityManager, post: PostEntity, c: DraftPostChanges): Promise<PostEntity> {
  const changes = Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined));
  em.assign(post, { ...changes, updatedAt: ormSql.now() }, { mergeObjectProperties: false });
  await em.flush();
  return readBack(em, post);
}

export async function setPostAutomation(tx: EntityManager, postId: string, automation: Automation): Promise<void> {
  await tx.nativeUpdate(Post, { id: postId }, { automation, updatedAt: ormSql.now() });
}

export async function markPostCancelled(tx: EntityManager, postId: string): Promise<void> {
  await tx.nativeUpdate(Post, { id: postId }, { status: 'cancelled', scheduledTime: null, updatedAt: ormSql.now() });
}

/** Deletes the post unless it is scheduled or publishing; returns the rows deleted. */
export async function deleteUnscheduledPost(em: EntityManager, postId: string): Promise<number> {
  // One conditional delete: a post scheduled meanwhile is kept (the caller answers 409).
  return em.nativeDelete(Post, { id: postId, status: { $nin: ['scheduled', 'publishing'] } });
}

/** Typed Kysely over the posts tables: the filter page below and the publish workflows' reads. */
const postQueries = typedQueries<SchedulingDB>();

/**
 * One page of posts of the workspace (POST /v1/posts/filter-posts): `filter` (conditions and
 * grouped condition) and `sort` compiled over alias `p` by the condition compiler, after the keyset
 * of the page token `from` (a `prev` page reads in reverse), at most `limit + 1` rows; each row is
 * the post and its sort columns (`keyOf` turns them into the next token's keyset), and the total.
 */
export async function filterPostsPage(
  em: EntityManager,
  db: Queryable,
  q: { workspaceId: string; filter: { conditions?: unknown; groupedCondition?: unknown }; sort: unknown; from: { after: unknown[]; dir: 'next' | 'prev' } | undefined; limit: number },
): Promise<{ rows: Array<{ post: PostEntity; sortRow: Record<string, unknown> }>; total: number; keyOf: CompiledSort['keyOf'] }> {
  const where = compileWhere(postColumns, q.filter);
  const sort = compileSort(postColumns, q.sort);
  assertWorkspaceScope(q.workspaceId);
  const filtered = postQueries.selectFrom('posts as p').where(sql<SqlBool>`(${where.sql})`);
  const keyset = q.from ? keysetPredicate(sort, q.from.after, q.from.dir) : sql`true`;
  const orderBy = q.from?.dir === 'prev' ? reverseOrder(sort) : sort.orderBy;
  const [rows, [count]] = await Promise.all([
    runQuery(
      db,
      filtered
        .where(sql<SqlBool>`(${keyset})`)
        .selectAll('p')
        .select(sort.selections)
        .orderBy(sql`${orderBy}`)
        .limit(sql.lit(q.limit + 1)),
    ),
    runQuery(db, filtered.select(sql<number>`count(*)::int`.as('n'))),
  ]);
  const posts = entityRows<PostEntity>(em, Post, rows);
  return { rows: rows.map((row, i) => ({ post: posts[i]!, sortRow: row as Record<string, unknown> })), total: count!.n, keyOf: sort.keyOf };
}

// ---- Writes of the publishing routes (api/routes/publishing.ts) ----

/** A draft comment on an external pronet post (`externalPost: true`). */
export async function insertExternalReplyDraft(tx: EntityManager, workspaceId: string, id: string, providerId: string, content: string, externalPostUrl: string): Promise<void> {
  await tx.insert(Post, { id, workspaceId, providerId, status: 'draft', content, externalPost: true, externalPostUrl });
}

/** A repost child's cancel (unschedule); its scheduled_time stays. */
export async function markRepostCancelled(tx: EntityManager, id: string): Promise<void> {
  await tx.nativeUpdate(Post, { id }, { status: 'cancelled', updatedAt: ormSql.now() });
}

// ---- Reads and state changes of the publish workflows (activities/dbPosts.ts, activities/publishing.ts) ----

// The publish workflows' reads: `postQueries` compiled once (`preparedQuery`), run on the activity's pg pool, off the entity manager.

export interface RepostChild {
  postId: string;
  scheduledTime: string;
  provider: Provider;
}

const selectDueRepostChildren = preparedQuery((p: { parentPostId: string }) =>
  postQueries
    .selectFrom('posts as p')
    .innerJoin('integrations as i', 'i.id', 'p.provider_id')
    .select(['p.id', 'p.scheduled_time', 'i.provider'])
    .where('p.parent_post_id', '=', p.parentPostId)
    .where('p.status', '=', sql.lit('scheduled'))
    .where('p.scheduled_time', 'is not', null)
    .orderBy('p.scheduled_time')
    .orderBy('p.id')
    .$narrowType<{ scheduled_time: Date }>(),
);

/** Children still due to reshare the parent, earliest first. */
export async function dueRepostChildren(db: Queryable, parentPostId: string): Promise<RepostChild[]> {
  const rows = await selectDueRepostChildren(db, { parentPostId });
  return rows.map((c) => ({ postId: c.id, scheduledTime: c.scheduled_time.toISOString(), provider: c.provider }));
}

/** The workflows address posts by the id they hold; the activity input carries no workspace. */
const byWorkflowId = acrossWorkspaces;

/** Flips a due repost child `scheduled → publishing` once (a child already publishing is this chain's own earlier claim). */
export async function claimRepostChild(em: EntityManager, postId: string): Promise<{ status: 'claimed' | 'cancelled' } | { status: 'not_due'; scheduledTime: string }> {
  return em.transactional(async (tx) => {
    const c = await tx.findOne(Post, { id: postId }, { ...byWorkflowId, fields: ['status', 'scheduledTime'], lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!c) return { status: 'cancelled' };
    if (c.status === 'publishing') return { status: 'claimed' };
    if (c.status !== 'scheduled' || !c.scheduledTime) return { status: 'cancelled' };
    if (c.scheduledTime.getTime() > Date.now() + DUE_SLACK_MS) return { status: 'not_due', scheduledTime: c.scheduledTime.toISOString() };
    tx.assign(c, { status: 'publishing', updatedAt: ormSql.now() });
    return { status: 'claimed' };
  });
}

const selectPostToPublish = preparedQuery((p: { postId: string }) =>
  postQueries
    .selectFrom('posts')
    .select(['provider_id', 'content', 'media', 'thread_items', 'external_post', 'external_post_url', 'parent_post_id'])
    .where('id', '=', p.postId),
);

/** What a publish step sends of a post of the workspace. */
export type PostToPublish = RowOf<typeof selectPostToPublish>;

export async function postToPublish(db: Queryable, workspaceId: string, postId: string): Promise<PostToPublish | undefined> {
  assertWorkspaceScope(workspaceId);
  const [row] = await selectPostToPublish(db, { postId });
  return row;
}

const selectRepostParent = preparedQuery((p: { parentPostId: string | null }) =>
  postQueries.selectFrom('posts as p').innerJoin('integrations as i', 'i.id', 'p.provider_id').select(['p.external_id', 'i.provider']).where('p.id', '=', p.parentPostId),
);

/** The parent a repost child reshares: its external id (null until published) and its account's provider. */
export async function repostParent(db: Queryable, parentPostId: string | null): Promise<RowOf<typeof selectRepostParent> | undefined> {
  const [row] = await selectRepostParent(db, { parentPostId });
  return row;
}
