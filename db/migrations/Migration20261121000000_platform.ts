import { Migration } from '@mikro-orm/migrations';

/** Workspaces, keys, credits, jobs, idempotency, rate limits, webhook deliveries. */
export class Migration20261121000000_platform extends Migration {
  override name = 'Migration20261121000000_platform';

  override up(): void {
    this.addSql(`create extension if not exists pg_trgm`);
    this.addSql(`create table workspaces (
      id uuid primary key,
      name text not null,
      plan text not null check (plan in ('free','pro','enterprise')),
      webhook_secret text not null,
      created_at timestamptz not null default now())`);
    this.addSql(`create table api_keys (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      kind text not null check (kind in ('workspace','user','session')),
      key_hash text not null unique,
      prefix text not null,
      created_at timestamptz not null default now(),
      revoked_at timestamptz)`);
    this.addSql(`create index api_keys_workspace_id_index on api_keys(workspace_id)`);
    this.addSql(`create table credit_accounts (
      workspace_id uuid primary key references workspaces(id) on delete cascade,
      balance bigint not null default 0 check (balance >= 0),
      updated_at timestamptz not null default now())`);
    this.addSql(`create table credit_transactions (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      amount bigint not null,
      balance_after bigint not null,
      reason text not null,
      idempotency_key text not null,
      job_id uuid,
      metadata jsonb,
      created_at timestamptz not null default now(),
      unique (workspace_id, idempotency_key))`);
    this.addSql(`create index credit_transactions_ws_created on credit_transactions(workspace_id, created_at desc, id desc)`);
    this.addSql(`create table jobs (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      type text not null,
      workflow_id text not null unique,
      created_at timestamptz not null default now())`);
    this.addSql(`create index jobs_ws_created on jobs(workspace_id, created_at desc)`);
    this.addSql(`create table idempotency_records (
      workspace_id uuid not null references workspaces(id) on delete cascade,
      idempotency_key text not null,
      method text not null,
      path text not null,
      request_hash text not null,
      status int,
      response_body jsonb,
      response_headers jsonb,
      created_at timestamptz not null default now(),
      completed_at timestamptz,
      primary key (workspace_id, idempotency_key))`);
    this.addSql(`create index idempotency_records_created on idempotency_records(created_at)`);
    this.addSql(`create unlogged table rate_limit_windows (
      key_id uuid not null,
      window_start timestamptz not null,
      count int not null,
      primary key (key_id, window_start))`);
    this.addSql(`create table webhook_deliveries (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      job_id uuid not null,
      message_id text not null,
      attempt int not null,
      url text not null,
      status_code int,
      error text,
      duration_ms int not null,
      created_at timestamptz not null default now())`);
    this.addSql(`create index webhook_deliveries_job on webhook_deliveries(job_id, created_at)`);
  }
}
