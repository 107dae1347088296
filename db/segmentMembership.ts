/**
 * Segment membership (DESIGN §4): the contacts that came from one of the segment's sources and
 * match its conditions; the default segment holds every contact of the workspace.
 *
 * `segmentMembershipWhere` returns a boolean SQL fragment over the contact row `contacts c` with
 * its values bound, so it composes with the request's own `conditions`, keyset pagination and
 * projection:
 *
 *   const seg = segmentMembershipWhere(segment, catalog);
 *   const req = contactWhere(catalog, body);
 *   compileSql(sql`select … from contacts c ${sql.raw(joinSql(new Set([...seg.joins, ...req.joins])))}
 *     where c.status = 'active' and (${seg.sql}) and (${req.sql}) …`)
 *
 * The segment's stored conditions are compiled with the JSON pointers `/segment/conditions` and
 * `/segment/groupedCondition`, so a stored condition that no longer fits the catalog (a deleted
 * custom field) is reported as such.
 */
import { sql } from 'kysely';
import type { CompiledWhere } from './conditionSql.js';
import { contactWhere } from './contactColumns.js';
import { parseWhere } from '../domain/conditions.js';
import type { ContactCatalog } from '../domain/contactCatalog.js';

export interface SegmentForMembership {
  isDefault: boolean;
  /** Source ids. */
  segmentSources: string[];
  conditions?: unknown[] | null;
  groupedCondition?: unknown | null;
}

export function segmentMembershipWhere(segment: SegmentForMembership, catalog: ContactCatalog): CompiledWhere {
  if (segment.isDefault) return { sql: sql`true`, joins: new Set() };
  if (segment.segmentSources.length === 0) return { sql: sql`false`, joins: new Set() };
  const fromSources = sql`exists (select 1 from contact_sources seg_cs where seg_cs.contact_id = c.id and seg_cs.source_id = any(${segment.segmentSources}::uuid[]))`;
  const input = { conditions: segment.conditions ?? undefined, groupedCondition: segment.groupedCondition ?? undefined };
  const conds = contactWhere(catalog, input, { conditionsPointer: '/segment/conditions', groupedPointer: '/segment/groupedCondition' });
  const unconditioned = !input.conditions?.length && input.groupedCondition === undefined;
  return { sql: unconditioned ? fromSources : sql`${fromSources} and (${conds.sql})`, joins: conds.joins };
}

/** Validates a segment's conditions against the catalog (400 naming the field on failure). */
export function validateSegmentConditions(catalog: ContactCatalog, input: { conditions?: unknown; groupedCondition?: unknown }): void {
  parseWhere(catalog, input);
}
