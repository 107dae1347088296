/**
 * Segment membership (DESIGN §4): the contacts that came from one of the segment's sources and
 * match its conditions; the default segment holds every contact of the workspace.
 *
 * `segmentMembershipWhere` returns a boolean SQL expression over the contact row (its id is
 * `contactIdSql`), with parameters added to the caller's `Params` collector, so it composes with
 * the request's own `conditions`, keyset pagination and projection:
 *
 *   const params = new Params();
 *   const seg = segmentMembershipWhere(segment, catalog, { params, contactIdSql: 'c.id' });
 *   const req = compileWhere(catalog, body, { params });
 *   sql = `select … from contacts c ${joinsFor([...seg.joins, ...req.joins])}
 *          where c.workspace_id = ${params.add(ws)} and c.status = 'active' and (${seg.sql}) and (${req.sql}) …`
 *
 * The segment's stored conditions are compiled with the JSON pointers `/segment/conditions` and
 * `/segment/groupedCondition`, so a stored condition that no longer fits the catalog (a deleted
 * custom field) is reported as such.
 */
import { compileWhere, Params, type CompiledWhere, type FieldCatalog } from './conditions.js';

export interface SegmentForMembership {
  isDefault: boolean;
  /** Source ids. */
  segmentSources: string[];
  conditions?: unknown[] | null;
  groupedCondition?: unknown | null;
}

export interface MembershipOptions {
  params: Params;
  /** SQL of the contact id column in the caller's query (e.g. `c.id`). */
  contactIdSql: string;
  /** Table holding (source_id, contact_id) links; `contact_sources` by default. */
  linkTable?: string;
}

export function segmentMembershipWhere(segment: SegmentForMembership, catalog: FieldCatalog, opts: MembershipOptions): CompiledWhere {
  if (segment.isDefault) return { sql: 'true', params: opts.params.values, joins: new Set() };
  if (segment.segmentSources.length === 0) return { sql: 'false', params: opts.params.values, joins: new Set() };
  const sources = opts.params.add(segment.segmentSources, 'uuid[]');
  const fromSources = `exists (select 1 from ${opts.linkTable ?? 'contact_sources'} seg_cs where seg_cs.contact_id = ${opts.contactIdSql} and seg_cs.source_id = any(${sources}))`;
  const conds = compileWhere(
    catalog,
    { conditions: segment.conditions ?? undefined, groupedCondition: segment.groupedCondition ?? undefined },
    { params: opts.params, conditionsPointer: '/segment/conditions', groupedPointer: '/segment/groupedCondition' },
  );
  return {
    sql: conds.sql === 'true' ? fromSources : `${fromSources} and (${conds.sql})`,
    params: opts.params.values,
    joins: conds.joins,
  };
}

/** Validates a segment's conditions against the catalog (400 naming the field on failure). */
export function validateSegmentConditions(catalog: FieldCatalog, input: { conditions?: unknown; groupedCondition?: unknown }): void {
  compileWhere(catalog, input, { params: new Params() });
}
