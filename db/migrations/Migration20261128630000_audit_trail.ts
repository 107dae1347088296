import { Migration } from '@mikro-orm/migrations';

/**
 * The audit trail (docs/PRIVACY.md "Audit trail"), and the indexes of the retention purge.
 *
 * The audit trail: who (API key id and kind) did what (action)
 * to which resource (type + UUID) and when. Two append-only tables: `audit_events`, written
 * before a write runs (so no committed write is missing from it), and `audit_outcomes`, the
 * status the request ended with. Neither holds a request body or personal data.
 *
 * Append-only twice over: the application roles are granted INSERT and SELECT only (the default
 * privileges of the row-level security migration gave them UPDATE and DELETE), and a trigger
 * refuses UPDATE, DELETE and TRUNCATE to everyone, the table owner included (an operator who
 * must prune the trail disables the trigger, a visible act). No foreign key to `workspaces`: the
 * trail outlives a deleted workspace, and a cascade would be a DELETE the trigger refuses.
 */
export class Migration20261128630000_audit_trail extends Migration {
  override name = 'Migration20261128630000_audit_trail';

  override up(): void {
    this.addSql(`create table audit_events (
      id uuid primary key,
      workspace_id uuid not null,
      occurred_at timestamptz not null default now(),
      actor_key_id uuid,
      actor_kind text not null constraint audit_events_actor_kind_check check (actor_kind in ('workspace','user','session','system')),
      action text not null,
      resource_type text not null,
      resource_id uuid,
      request_id text)`);
    // Newest first per workspace (ids are UUIDv7: time order), and the filters' look-ups.
    this.addSql(`create index audit_events_ws_id on audit_events(workspace_id, id desc)`);
    this.addSql(`create index audit_events_ws_resource on audit_events(workspace_id, resource_type, resource_id)`);
    // No foreign key to the event either: an outcome is looked up by its event, never the reverse.
    this.addSql(`create table audit_outcomes (
      id uuid primary key,
      event_id uuid not null,
      workspace_id uuid not null,
      status int not null,
      resource_id uuid,
      recorded_at timestamptz not null default now())`);
    this.addSql(`create index audit_outcomes_event on audit_outcomes(event_id)`);
    this.addSql(`create function audit_append_only() returns trigger language plpgsql as $fn$
      begin
        raise exception 'the audit trail is append-only: % on % refused', tg_op, tg_table_name using errcode = 'insufficient_privilege';
      end
    $fn$`);
    for (const table of ['audit_events', 'audit_outcomes']) {
      this.addSql(`create trigger ${table}_append_only before update or delete on ${table} for each row execute function audit_append_only()`);
      this.addSql(`create trigger ${table}_no_truncate before truncate on ${table} for each statement execute function audit_append_only()`);
      this.addSql(`revoke update, delete, truncate on ${table} from app_tenant, app_all_workspaces`);
      this.addSql(`grant select, insert on ${table} to app_tenant, app_all_workspaces`);
      // Tenancy enforced by PostgreSQL (Migration20261128100000_row_level_security).
      this.addSql(`select app_enable_workspace_rls('${table}')`);
    }
    // The retention purge (workflows/retention.ts) finds what has expired by these, oldest first.
    this.addSql(`create index contacts_deleted_at on contacts(deleted_at) where status = 'deleted'`);
    this.addSql(`create index webhook_deliveries_created on webhook_deliveries(created_at)`);
  }
}
