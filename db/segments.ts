/**
 * Segments: named views over a workspace's contacts. Membership (DESIGN §4): contacts from the
 * segment's sources that match its conditions; the default segment (one per workspace) holds
 * every contact. Table `segments` (Migration20261121010000_contacts).
 */
import { defineEntity, p } from '@mikro-orm/core';
import { v7 as uuidv7 } from 'uuid';
import type { EntityManager } from '@mikro-orm/postgresql';

export const DEFAULT_SEGMENT_NAME = 'All contacts';

export const Segment = defineEntity({
  name: 'Segment',
  tableName: 'segments',
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
