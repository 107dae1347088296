/**
 * Segment membership (DESIGN §4): the contacts that came from one of the segment's sources and
 * match its conditions; the default segment holds every contact of the workspace.
 *
 * `segmentMembershipWhere` returns a boolean SQL fragment over the contact row (its id is
 * `contactIdSql`) with its values bound, so it composes with the request's own `conditions`,
 * keyset pagination and projection:
 *
 *   const seg = segmentMembershipWhere(segment, catalog, { contactIdSql: 'c.id' });
 *   const req = compileWhere(catalog, body);
 *   compileSql(sql`select … from contacts c ${sql.raw(joinSql(new Set([...seg.joins, ...req.joins])))}
 *     where c.workspace_id = ${ws}::uuid and c.status = 'active' and (${seg.sql}) and (${req.sql}) …`)
 *
 * The segment's stored conditions are compiled with the JSON pointers `/segment/conditions` and
 * `/segment/groupedCondition`, so a stored condition that no longer fits the catalog (a deleted
 * custom field) is reported as such.
 */
import { sql } from 'kysely';
import { compileWhere, type CompiledWhere } from './conditionSql.js';
import type { FieldCatalog } from '../domain/conditions.js';

export interface SegmentForMembership {
  isDefault: boolean;
  /** Source ids. */
  segmentSources: string[];
  conditions?: unknown[] | null;
  groupedCondition?: unknown | null;
}

export interface MembershipOptions {
  /** SQL of the contact id column in the caller's query (e.g. `c.id`). */
  contactIdSql: string;
  /** Table holding (source_id, contact_id) links; `contact_sources` by default. */
  linkTable?: string;
}

export function segmentMembershipWhere(segment: SegmentForMembership, catalog: FieldCatalog, opts: MembershipOptions): CompiledWhere {
  if (segment.isDefault) return { sql: sql`true`, joins: new Set() };
  if (segment.segmentSources.length === 0) return { sql: sql`false`, joins: new Set() };
  // the link table and the id column are the caller's code, never client input
  const fromSources = sql`exists (select 1 from ${sql.raw(opts.linkTable ?? 'contact_sources')} seg_cs where seg_cs.contact_id = ${sql.raw(opts.contactIdSql)} and seg_cs.source_id = any(${segment.segmentSources}::uuid[]))`;
  const input = { conditions: segment.conditions ?? undefined, groupedCondition: segment.groupedCondition ?? undefined };
  const conds = compileWhere(catalog, input, { conditionsPointer: '/segment/conditions', groupedPointer: '/segment/groupedCondition' });
  const unconditioned = !input.conditions?.length && input.groupedCondition === undefined;
  return { sql: unconditioned ? fromSources : sql`${fromSources} and (${conds.sql})`, joins: conds.joins };
}

/** Validates a segment's conditions against the catalog (400 naming the field on failure). */
export function validateSegmentConditions(catalog: FieldCatalog, input: { conditions?: unknown; groupedCondition?: unknown }): void {
  compileWhere(catalog, input);
}
