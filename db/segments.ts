/**
 * Segments: named views over a workspace's contacts. Membership (DESIGN §4): contacts from the
 * segment's sources that match its conditions; the default segment (one per workspace) holds
 * every contact. Table `segments` (Migration20261121010000_contacts).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { assertWorkspaceScope, workspaceOwned } from './tenancy.js';
import { workspaceId } from './platform.js';
import { v7 as uuidv7 } from 'uuid';
import type { EntityManager, InferKyselyDB } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import type { WorkspaceScope } from './scope.js';
import { isUuid } from '../domain/ids.js';

export const DEFAULT_SEGMENT_NAME = 'All contacts';

export const Segment = defineEntity({
  name: 'Segment',
  tableName: 'segments',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('segments'),
    name: p.text(),
    isDefault: p.boolean().default(false),
    clonedFrom: p.uuid().nullable(),
    /** Source ids (uuid[]); removed from here when a source is deleted. */
    segmentSources: p.array().columnType('uuid[]').default([]),
    /** Root conditions (same shape as filter-contacts `conditions`). */
    conditions: p.json<unknown[]>().default([] as never),
    groupedCondition: p.json<Record<string, unknown>>().nullable(),
    /** Automation definitions; always copied on clone. */
    workflows: p.json<unknown[]>().default([] as never),
    savedViewTemplates: p.json<unknown[]>().default([] as never),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [
    { name: 'segments_ws_id', properties: ['workspaceId', 'id'] },
    { name: 'segments_name_trgm', expression: 'create index segments_name_trgm on segments using gin (name gin_trgm_ops)' },
    { name: 'segments_sources_gin', properties: ['segmentSources'], type: 'gin' },
  ],
  // One default segment per workspace: concurrent `ensureDefaultSegment` calls converge on it.
  uniques: [{ name: 'segments_one_default', expression: 'create unique index segments_one_default on segments(workspace_id) where is_default' }],
});

/**
 * The workspace's default segment, created on first use. Concurrent callers converge on one row
 * (partial unique index on (workspace_id) where is_default).
 */
export async function ensureDefaultSegment(em: EntityManager, workspaceId: string): Promise<string> {
  assertWorkspaceScope(workspaceId);
  const db = em.getKysely<InferKyselyDB<typeof Segment>>();
  await db
    .insertInto('segments')
    .values({ id: uuidv7(), name: DEFAULT_SEGMENT_NAME, is_default: true })
    .onConflict((oc) => oc.column('workspace_id').where((eb) => eb.ref('is_default')).doNothing())
    .execute();
  const row = await db.selectFrom('segments').select('id').where('is_default', '=', true).executeTakeFirstOrThrow();
  return row.id;
}

// ---- Segments through the entity manager (the request's context; the `workspace` filter scopes reads) ----

export type SegmentEntity = InferEntity<typeof Segment>;

/** The segment of the context's workspace (the `workspace` filter), or null (also for an id that is not a uuid). */
export async function findSegment(em: EntityManager, id: string): Promise<SegmentEntity | null> {
  if (!isUuid(id)) return null;
  return em.findOne(Segment, { id });
}

export interface NewSegment {
  name: string;
  clonedFrom: string | null;
  segmentSources: string[];
  conditions: unknown[];
  groupedCondition: unknown | null;
  workflows: unknown[];
  savedViewTemplates: unknown[];
}

/** Inserts a (never default) segment and returns it. */
export async function insertSegment(scope: WorkspaceScope, s: NewSegment): Promise<SegmentEntity> {
  const { em } = scope;
  const now = new Date();
  const seg = em.create(Segment, {
    id: uuidv7(),
    workspaceId: scope.workspaceId,
    isDefault: false,
    ...s,
    groupedCondition: s.groupedCondition as SegmentEntity['groupedCondition'],
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return seg;
}

/**
 * The workspace's segments whose lower-case name is `like` `contains`, those `like` `prefix` first,
 * then by name. Kysely, with the patterns bound: the entity manager wrote a `raw()` of the order
 * by into the SQL text with its parameter inlined, and a `?` in the user's text was then read as
 * a placeholder (q=">?¹" was a 500, found by the fuzzer).
 */
export async function searchSegmentsByName(scope: WorkspaceScope, contains: string, prefix: string, limit: number): Promise<SegmentEntity[]> {
  const { em } = scope;
  assertWorkspaceScope(scope.workspaceId);
  const rows = await em
    .getKysely<InferKyselyDB<typeof Segment>>()
    .selectFrom('segments')
    .selectAll()
    .where(sql`lower(name)`, 'like', contains)
    .orderBy(sql`lower(name) like ${prefix}`, 'desc')
    .orderBy(sql`lower(name)`)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((row) => em.map(Segment, row as never));
}

/** Only the properties present change (`groupedCondition: null` clears it). */
export interface SegmentPatch {
  name?: string;
  segmentSources?: string[];
  conditions?: unknown[];
  groupedCondition?: unknown | null;
  workflows?: unknown[];
  savedViewTemplates?: unknown[];
}

/** Applies the patch (each present property replaces the stored value) and stamps `updatedAt`. */
export async function updateSegment(em: EntityManager, seg: SegmentEntity, patch: SegmentPatch): Promise<SegmentEntity> {
  const present = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
  em.assign(seg, { ...present, updatedAt: new Date() });
  await em.flush();
  return seg;
}

export async function deleteSegment(em: EntityManager, seg: SegmentEntity): Promise<boolean> {
  // A delete by id that reports its row count: of concurrent DELETEs only the one that removed
  // the row is told so (`em.remove` + `flush` succeeds for a row already gone).
  const removed = await em.nativeDelete(Segment, { id: seg.id });
  return removed > 0;
}
