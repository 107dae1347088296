/**
 * Segments: named views over a workspace's contacts. Membership (DESIGN §4): contacts from the
 * segment's sources that match its conditions; the default segment (one per workspace) holds
 * every contact. Table `segments` (Migration20261121010000_contacts).
 */
import { defineEntity, p } from '@mikro-orm/core';
import { workspaceOwned } from './tenancy.js';
import { v7 as uuidv7 } from 'uuid';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../domain/ids.js';
import type { Queryable } from './pool.js';

export const DEFAULT_SEGMENT_NAME = 'All contacts';

export const Segment = defineEntity({
  name: 'Segment',
  tableName: 'segments',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: p.uuid(),
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
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/**
 * The workspace's default segment, created on first use. Concurrent callers converge on one row
 * (partial unique index on (workspace_id) where is_default).
 */
export async function ensureDefaultSegment(em: EntityManager, workspaceId: string): Promise<string> {
  const conn = em.getConnection();
  const now = new Date();
  await conn.execute(
    `insert into segments (id, workspace_id, name, is_default, segment_sources, conditions, workflows, saved_view_templates, created_at, updated_at)
     values (?, ?, ?, true, '{}', '[]', '[]', '[]', ?, ?)
     on conflict (workspace_id) where is_default do nothing`,
    [uuidv7(), workspaceId, DEFAULT_SEGMENT_NAME, now, now],
  );
  const rows = await conn.execute<{ id: string }[]>(
    `select id from segments where workspace_id = ? and is_default`,
    [workspaceId],
  );
  return rows[0]!.id;
}

// ---- Segment rows as the segments routes read and write them (pg `Queryable`) ----

export interface SegmentRow extends Record<string, unknown> {
  id: string;
  name: string;
  is_default: boolean;
  cloned_from: string | null;
  segment_sources: string[];
  conditions: unknown[];
  grouped_condition: unknown | null;
  workflows: Record<string, unknown>[];
  saved_view_templates: Record<string, unknown>[];
  created_at: Date;
  updated_at: Date;
}

const SEGMENT_COLUMNS =
  'id, name, is_default, cloned_from, segment_sources, conditions, grouped_condition, workflows, saved_view_templates, created_at, updated_at';

/** The segment of the workspace, or undefined (also for an id that is not a uuid). */
export async function findSegment(q: Queryable, workspaceId: string, id: string): Promise<SegmentRow | undefined> {
  if (!isUuid(id)) return undefined;
  const r = await q.query<SegmentRow>(`select ${SEGMENT_COLUMNS} from segments where id = $1 and workspace_id = $2`, [id, workspaceId]);
  return r.rows[0];
}

/** Which of `ids` (lower-case uuids) are sources of the workspace. */
export async function existingSourceIds(q: Queryable, workspaceId: string, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const r = await q.query<{ id: string }>(`select id from sources where workspace_id = $1 and id = any($2::uuid[])`, [workspaceId, ids]);
  return new Set(r.rows.map((x) => x.id));
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

/** Inserts a (never default) segment and returns its row. */
export async function insertSegment(q: Queryable, workspaceId: string, s: NewSegment): Promise<SegmentRow> {
  const r = await q.query<SegmentRow>(
    `insert into segments (id, workspace_id, name, is_default, cloned_from, segment_sources, conditions, grouped_condition, workflows, saved_view_templates, created_at, updated_at)
     values ($1, $2, $3, false, $4, $5::uuid[], $6, $7, $8, $9, now(), now())
     returning ${SEGMENT_COLUMNS}`,
    [
      uuidv7(),
      workspaceId,
      s.name,
      s.clonedFrom,
      s.segmentSources,
      JSON.stringify(s.conditions),
      s.groupedCondition ? JSON.stringify(s.groupedCondition) : null,
      JSON.stringify(s.workflows),
      JSON.stringify(s.savedViewTemplates),
    ],
  );
  return r.rows[0]!;
}

/** Segments whose lower-case name is `like` `contains`, those `like` `prefix` first, then by name. */
export async function searchSegmentsByName(q: Queryable, workspaceId: string, contains: string, prefix: string, limit: number): Promise<SegmentRow[]> {
  const r = await q.query<SegmentRow>(
    `select ${SEGMENT_COLUMNS} from segments
      where workspace_id = $1 and lower(name) like $2
      order by (lower(name) like $3) desc, lower(name), id
      limit $4`,
    [workspaceId, contains, prefix, limit],
  );
  return r.rows;
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

/** Applies the patch; the updated row, or undefined when the segment is gone. */
export async function updateSegment(q: Queryable, workspaceId: string, id: string, patch: SegmentPatch): Promise<SegmentRow | undefined> {
  const r = await q.query<SegmentRow>(
    `update segments set
        name = coalesce($3, name),
        segment_sources = coalesce($4::uuid[], segment_sources),
        conditions = coalesce($5::jsonb, conditions),
        grouped_condition = case when $6::boolean then $7::jsonb else grouped_condition end,
        workflows = coalesce($8::jsonb, workflows),
        saved_view_templates = coalesce($9::jsonb, saved_view_templates),
        updated_at = now()
      where id = $1 and workspace_id = $2
      returning ${SEGMENT_COLUMNS}`,
    [
      id,
      workspaceId,
      patch.name ?? null,
      patch.segmentSources ?? null,
      patch.conditions !== undefined ? JSON.stringify(patch.conditions) : null,
      patch.groupedCondition !== undefined,
      patch.groupedCondition ? JSON.stringify(patch.groupedCondition) : null,
      patch.workflows !== undefined ? JSON.stringify(patch.workflows) : null,
      patch.savedViewTemplates !== undefined ? JSON.stringify(patch.savedViewTemplates) : null,
    ],
  );
  return r.rows[0];
}

export async function deleteSegment(q: Queryable, workspaceId: string, id: string): Promise<void> {
  await q.query(`delete from segments where id = $1 and workspace_id = $2`, [id, workspaceId]);
}
