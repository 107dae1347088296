/**
 * SQL of the audit trail (docs/PRIVACY.md "Audit trail"): the event written before a write runs,
 * its outcome written after, and the workspace's filtered, keyset-paginated read. Both tables are
 * append-only (grants and a trigger, Migration20261128630000_audit_trail): nothing here updates
 * or deletes. Every statement runs on the caller's scoped connection: row-level security keeps
 * the read to the workspace and gives the rows written its workspace (the column's default);
 * `assertWorkspaceScope` checks that it is the one the caller names.
 */
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { preparedQuery, runQuery, typedQueries } from './sqlFragments.js';
import type { Queryable } from './pool.js';
import { assertWorkspaceScope } from './tenancy.js';
import type { AuditActorKind } from './auditEntities.js';
import { AuditEvent, AuditOutcome } from './auditEntities.js';

type AuditDB = InferKyselyDB<typeof AuditEvent | typeof AuditOutcome>;
const audit = () => typedQueries<AuditDB>();

export type AuditEventInput = {
  id: string;
  workspaceId: string;
  actorKeyId: string | null;
  actorKind: AuditActorKind;
  action: string;
  resourceType: string;
  resourceId: string | null;
  requestId: string | null;
};

/** An event's row (also given the prepared statement's stand-ins: it only reads properties); its workspace is the scope's. */
const eventRow = (e: Omit<AuditEventInput, 'workspaceId'>) => ({
  id: e.id,
  actor_key_id: e.actorKeyId,
  actor_kind: e.actorKind,
  action: e.action,
  resource_type: e.resourceType,
  resource_id: e.resourceId,
  request_id: e.requestId,
});

const INSERT_EVENT = preparedQuery((p: Omit<AuditEventInput, 'workspaceId'>) => audit().insertInto('audit_events').values(eventRow(p)), 'audit-event');

/** Appends one event (its own statement: it commits before the write it announces runs). */
export async function recordAuditEvent(db: Queryable, event: AuditEventInput): Promise<void> {
  assertWorkspaceScope(event.workspaceId);
  await INSERT_EVENT(db, event);
}

/** Appends several events in one statement (the retention purge's, in its own transaction). */
export async function recordAuditEvents(db: Queryable, events: AuditEventInput[]): Promise<void> {
  if (!events.length) return;
  for (const workspaceId of new Set(events.map((e) => e.workspaceId))) assertWorkspaceScope(workspaceId);
  await runQuery(db, audit().insertInto('audit_events').values(events.map(eventRow)));
}

const INSERT_OUTCOME = preparedQuery(
  (p: { id: string; eventId: string; status: number; resourceId: string | null }) =>
    audit().insertInto('audit_outcomes').values({ id: p.id, event_id: p.eventId, status: p.status, resource_id: p.resourceId }),
  'audit-outcome',
);

/** Appends the status an audited request ended with (and the id of what it created, if any). */
export async function recordAuditOutcome(db: Queryable, outcome: { eventId: string; workspaceId: string; status: number; resourceId: string | null }): Promise<void> {
  assertWorkspaceScope(outcome.workspaceId);
  await INSERT_OUTCOME(db, { id: uuidv7(), eventId: outcome.eventId, status: outcome.status, resourceId: outcome.resourceId });
}

export interface AuditFilters {
  actorKeyId?: string;
  action?: string;
  resourceType?: string;
  resourceId?: string;
  /** Inclusive lower bound of `occurredAt`. */
  since?: Date;
  /** Exclusive upper bound of `occurredAt`. */
  until?: Date;
}

export interface AuditRow {
  id: string;
  occurredAt: Date;
  actorKeyId: string | null;
  actorKind: AuditActorKind;
  action: string;
  resourceType: string;
  resourceId: string | null;
  requestId: string | null;
  /** Null while the request runs, or when its outcome could not be recorded (the process died). */
  status: number | null;
}

function filtered(workspaceId: string, f: AuditFilters) {
  assertWorkspaceScope(workspaceId);
  let q = audit()
    .selectFrom('audit_events as e')
    .leftJoin('audit_outcomes as o', 'o.event_id', 'e.id');
  if (f.actorKeyId) q = q.where('e.actor_key_id', '=', f.actorKeyId);
  if (f.action) q = q.where('e.action', '=', f.action);
  if (f.resourceType) q = q.where('e.resource_type', '=', f.resourceType);
  if (f.resourceId) {
    const id = f.resourceId;
    q = q.where((eb) => eb.or([eb('e.resource_id', '=', id), eb('o.resource_id', '=', id)]));
  }
  if (f.since) q = q.where('e.occurred_at', '>=', f.since);
  if (f.until) q = q.where('e.occurred_at', '<', f.until);
  return q;
}

/** A page of the trail, newest first (`next`) or going back towards newer (`prev`), from the boundary id. */
export async function auditEventsPage(db: Queryable, workspaceId: string, f: AuditFilters, limit: number, from?: { dir: 'next' | 'prev'; afterId: string }): Promise<AuditRow[]> {
  let q = filtered(workspaceId, f);
  if (from) q = q.where('e.id', from.dir === 'next' ? '<' : '>', from.afterId);
  const rows = await runQuery(
    db,
    q
      .select(['e.id', 'e.occurred_at', 'e.actor_key_id', 'e.actor_kind', 'e.action', 'e.resource_type', 'e.request_id', 'o.status'])
      .select((eb) => eb.fn.coalesce('e.resource_id', 'o.resource_id').as('resource_id'))
      .orderBy('e.id', from?.dir === 'prev' ? 'asc' : 'desc')
      .limit(limit),
  );
  return rows.map((r) => ({
    id: r.id,
    occurredAt: new Date(r.occurred_at as unknown as string),
    actorKeyId: r.actor_key_id,
    actorKind: r.actor_kind,
    action: r.action,
    resourceType: r.resource_type,
    resourceId: r.resource_id,
    requestId: r.request_id,
    status: r.status ?? null,
  }));
}

export async function countAuditEvents(db: Queryable, workspaceId: string, f: AuditFilters): Promise<number> {
  const [row] = await runQuery(db, filtered(workspaceId, f).select((eb) => eb.fn.countAll<number>().as('n')));
  return Number(row?.n ?? 0);
}
