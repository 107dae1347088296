import { Migration } from '@mikro-orm/migrations';

/** Integrations (connected social accounts), posts, schedule rows, media objects. */
export class Migration20261121030000_social extends Migration {
  override name = 'Migration20261121030000_social';

  override up(): void {
    this.addSql(`create table integrations (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      provider text not null check (provider in ('microblog','pronet','pronetPage')),
      name text not null,
      external_account_id text not null,
      credentials_encrypted text not null,
      api_base_url text,
      status text not null default 'connected' check (status in ('connected','disconnected')),
      created_at timestamptz not null default now())`);
    this.addSql(`create index integrations_ws_provider on integrations(workspace_id, provider, created_at, id)`);
    this.addSql(`create index integrations_ws_created on integrations(workspace_id, created_at, id)`);

    this.addSql(`create table posts (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      provider_id uuid not null references integrations(id),
      status text not null check (status in ('draft','scheduled','publishing','published','failed','cancelled')),
      content text not null,
      media jsonb not null default '[]',
      articles jsonb not null default '[]',
      thread_items jsonb not null default '[]',
      automation jsonb not null default '{}',
      external_post boolean not null default false,
      external_post_url text,
      parent_post_id uuid references posts(id) on delete cascade,
      repost_delay_secs int,
      scheduled_time timestamptz,
      published_at timestamptz,
      external_id text,
      external_url text,
      thread_external_ids jsonb not null default '[]',
      error jsonb,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create index posts_ws_created on posts(workspace_id, created_at, id)`);
    this.addSql(`create index posts_ws_status on posts(workspace_id, status, created_at, id)`);
    this.addSql(`create index posts_ws_provider on posts(workspace_id, provider_id, created_at, id)`);
    // Serves the scheduledTime sort (asc nulls last / backward: desc nulls first) and ranges.
    this.addSql(`create index posts_ws_scheduled on posts(workspace_id, scheduled_time, id)`);
    this.addSql(`create index posts_parent on posts(parent_post_id) where parent_post_id is not null`);

    this.addSql(`create table post_schedules (
      id uuid primary key,
      post_id uuid not null references posts(id) on delete cascade,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      provider_id uuid not null references integrations(id),
      scheduled_time timestamptz not null,
      automation jsonb not null default '{}',
      workflow_id text not null unique,
      status text not null check (status in ('scheduled','publishing','published','failed','cancelled')),
      n int not null,
      created_at timestamptz not null default now(),
      unique (post_id, n))`);
    this.addSql(`create index post_schedules_ws_status on post_schedules(workspace_id, status, scheduled_time)`);

    this.addSql(`create table media_objects (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      file_name text not null unique,
      content_type text not null,
      size_bytes bigint not null,
      is_chunk boolean not null default false,
      created_at timestamptz not null default now())`);
    this.addSql(`create index media_objects_ws_created on media_objects(workspace_id, created_at)`);
  }
}
