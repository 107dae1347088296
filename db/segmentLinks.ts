/**
 * The link between sources and segments (`segments.segment_sources`): attaching a source to a
 * segment is how `segmentId` on source creation, bulk upsert and pulls attributes contacts to
 * that segment (DESIGN §4 membership: contacts from the segment's sources that match its
 * conditions). The default segment already holds every contact and is left unchanged.
 */
import type { EntityManager, InferKyselyDB } from '@mikro-orm/postgresql';
import { NotFoundError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { Queryable } from './pool.js';
import { Segment } from './segments.js';
import { runQuery, typedQueries } from './sqlFragments.js';

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
export async function attachSourceToSegment(q: Queryable, segmentId: string, sourceId: string): Promise<boolean> {
  if (!isUuid(segmentId)) return false;
  // One conditional array append in one statement (atomic against concurrent attaches), on the caller's pg client.
  const updated = await runQuery(
    q,
    typedQueries<InferKyselyDB<typeof Segment>>()
      .updateTable('segments')
      .set((eb) => {
        const source = eb.cast<string>(eb.val(sourceId), 'uuid');
        const unchanged = eb.or([eb.ref('is_default'), eb(source, '=', eb.fn.any('segment_sources'))]);
        return {
          segment_sources: eb.case().when(unchanged).then(eb.ref('segment_sources')).else(eb.fn<string[]>('array_append', ['segment_sources', source])).end(),
          updated_at: eb.case().when(unchanged).then(eb.ref('updated_at')).else(eb.fn<Date>('now')).end(),
        };
      })
      .where('id', '=', segmentId)
      .returning('id'),
  );
  return updated.length > 0;
}
