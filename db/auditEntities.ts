/** Entities of the audit trail (Migration20261128630000_audit_trail, docs/PRIVACY.md "Audit trail"). */
import { defineEntity, p } from '@mikro-orm/core';
import { SCOPED_WORKSPACE_ID, workspaceOwned } from './tenancy.js';
import type { KeyKind } from './platform.js';

/** Who acted: an API key's kind, or `system` (the retention purge, no key). */
export type AuditActorKind = KeyKind | 'system';

/**
 * The row-level trigger refusing UPDATE and DELETE (its TRUNCATE twin is in the migration only:
 * the ORM's introspection does not see TRUNCATE triggers).
 */
const appendOnly = (table: string) => ({
  name: `${table}_append_only`,
  timing: 'before' as const,
  events: ['update' as const, 'delete' as const],
  expression: `create trigger ${table}_append_only before update or delete on ${table} for each row execute function audit_append_only()`,
});

export const AuditEvent = defineEntity({
  name: 'AuditEvent',
  tableName: 'audit_events',
  filters: workspaceOwned,
  properties: {
    /** UUIDv7: the trail's order. */
    id: p.uuid().primary(),
    /** No foreign key: the trail outlives a deleted workspace. */
    workspaceId: p.uuid().defaultRaw(SCOPED_WORKSPACE_ID),
    occurredAt: p.datetime().defaultRaw('now()'),
    /** The API key that acted; null for `system`. */
    actorKeyId: p.uuid().nullable(),
    actorKind: p.text().$type<AuditActorKind>(),
    /** `<resourceType>.<verb>`, e.g. `contact.update`, `erasure.request`. */
    action: p.text(),
    resourceType: p.text(),
    /** Only ever a UUID (a contact, a job, an erasure request …): never an email or URL. */
    resourceId: p.uuid().nullable(),
    requestId: p.text().nullable(),
  },
  checks: [{ name: 'audit_events_actor_kind_check', expression: `actor_kind in ('workspace','user','session','system')` }],
  indexes: [
    { name: 'audit_events_ws_id', expression: 'create index audit_events_ws_id on audit_events(workspace_id, id desc)' },
    { name: 'audit_events_ws_resource', properties: ['workspaceId', 'resourceType', 'resourceId'] },
  ],
  triggers: [appendOnly('audit_events')],
});

export const AuditOutcome = defineEntity({
  name: 'AuditOutcome',
  tableName: 'audit_outcomes',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    /** The `audit_events` row it completes. */
    eventId: p.uuid().index('audit_outcomes_event'),
    workspaceId: p.uuid().defaultRaw(SCOPED_WORKSPACE_ID),
    /** The HTTP status the request was answered with. */
    status: p.integer(),
    /** The resource a create made (its id from the response), when the request named none. */
    resourceId: p.uuid().nullable(),
    recordedAt: p.datetime().defaultRaw('now()'),
  },
  triggers: [appendOnly('audit_outcomes')],
});
