/**
 * The link between sources and segments (`segments.segment_sources`): attaching a source to a
 * segment is how `segmentId` on source creation, bulk upsert and pulls attributes contacts to
 * that segment (DESIGN §4 membership: contacts from the segment's sources that match its
 * conditions). The default segment already holds every contact and is left unchanged.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { Queryable } from './pool.js';
import { Segment } from './segments.js';

/** Throws 404 unless `segmentId` is a segment of the context's workspace. */
export async function assertSegment(em: EntityManager, segmentId: string): Promise<{ isDefault: boolean }> {
  const seg = isUuid(segmentId) ? await em.findOne(Segment, { id: segmentId }) : null;
  if (!seg) throw new NotFoundError('Segment', segmentId);
  return { isDefault: seg.isDefault };
}

/**
 * Adds the source to the segment's `segmentSources` (idempotent). Returns false when the segment
 * does not exist (any more) in the workspace.
 */
export async function attachSourceToSegment(q: Queryable, workspaceId: string, segmentId: string, sourceId: string): Promise<boolean> {
  if (!isUuid(segmentId)) return false;
  // Raw SQL: one conditional array append, atomic against concurrent attaches, inside the caller's pg transaction.
  const r = await q.query(
    `update segments
        set segment_sources = case when is_default or $3::uuid = any(segment_sources) then segment_sources else array_append(segment_sources, $3::uuid) end,
            updated_at = case when is_default or $3::uuid = any(segment_sources) then updated_at else now() end
      where id = $1 and workspace_id = $2`,
    [segmentId, workspaceId, sourceId],
  );
  return (r.rowCount ?? 0) > 0;
}
