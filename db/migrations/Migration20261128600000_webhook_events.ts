import { Migration } from '@mikro-orm/migrations';

/**
 * Workspace events (issue 29, item 4; docs/PUBLISHING.md "Events"): webhook subscriptions, the
 * events themselves (one row per state change: `state_key` is unique, so a retried activity or a
 * second caller cannot record it twice) and one delivery row per (event, subscription) or
 * redelivery, with its outcome.
 */
export class Migration20261128600000_webhook_events extends Migration {
  override name = 'Migration20261128600000_webhook_events';

  override up(): void {
    this.addSql(`create table webhook_subscriptions (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      url text not null,
      event_types text[] not null,
      description text,
      secret_encrypted text not null,
      previous_secret_encrypted text,
      previous_secret_expires_at timestamptz,
      status text not null default 'active' constraint webhook_subscriptions_status_check check (status in ('active','disabled')),
      disabled_reason text,
      disabled_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create index webhook_subscriptions_workspace on webhook_subscriptions(workspace_id, created_at)`);
    this.addSql(`create table workspace_events (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      type text not null,
      state_key text not null constraint workspace_events_state_key_unique unique,
      payload jsonb not null,
      created_at timestamptz not null default now())`);
    this.addSql(`create index workspace_events_workspace on workspace_events(workspace_id, created_at)`);
    this.addSql(`create table webhook_event_deliveries (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      subscription_id uuid not null references webhook_subscriptions(id) on delete cascade,
      event_id uuid not null references workspace_events(id) on delete cascade,
      redelivery_of uuid,
      status text not null default 'pending' constraint webhook_event_deliveries_status_check check (status in ('pending','delivered','failed')),
      attempts integer not null default 0,
      response_code integer,
      last_error text,
      created_at timestamptz not null default now(),
      dispatched_at timestamptz,
      last_attempt_at timestamptz,
      finished_at timestamptz)`);
    this.addSql(`create index webhook_event_deliveries_subscription on webhook_event_deliveries(subscription_id, created_at)`);
    this.addSql(`create index webhook_event_deliveries_event on webhook_event_deliveries(event_id)`);
    this.addSql(`create index webhook_event_deliveries_undispatched on webhook_event_deliveries(created_at) where status = 'pending' and dispatched_at is null`);
    // Tenancy enforced by PostgreSQL (Migration20261128100000_row_level_security).
    this.addSql(`select app_enable_workspace_rls('webhook_subscriptions')`);
    this.addSql(`select app_enable_workspace_rls('workspace_events')`);
    this.addSql(`select app_enable_workspace_rls('webhook_event_deliveries')`);
  }
}
