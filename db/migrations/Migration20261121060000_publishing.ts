import { Migration } from '@mikro-orm/migrations';

/**
 * Scheduled publishing state: per schedule row the outcome (external id/URL, thread item ids,
 * error) and the bulk-schedule batch it came from; `publish_attempts` records every remote
 * create (post, thread item, comment, reshare) before it is sent, so a retried activity knows a
 * previous attempt's outcome is unknown and looks the object up instead of sending it again.
 */
export class Migration20261121060000_publishing extends Migration {
  override name = 'Migration20261121060000_publishing';

  override up(): void {
    this.addSql(`alter table post_schedules drop constraint if exists post_schedules_status_check`);
    this.addSql(`alter table post_schedules add constraint post_schedules_status_check
      check (status in ('scheduled','publishing','published','failed','cancelled'))`);
    this.addSql(`alter table post_schedules
      add column batch_id uuid,
      add column external_id text,
      add column external_url text,
      add column published_at timestamptz,
      add column thread_external_ids jsonb not null default '[]',
      add column error jsonb,
      add column updated_at timestamptz not null default now()`);
    this.addSql(`create index post_schedules_batch on post_schedules(batch_id, scheduled_time) where batch_id is not null`);
    this.addSql(`create index post_schedules_post on post_schedules(post_id, n)`);

    this.addSql(`create table publish_attempts (
      step_key text primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      post_id uuid not null references posts(id) on delete cascade,
      state text not null check (state in ('sending','done','failed')),
      attempts int not null default 0,
      external_id text,
      external_url text,
      started_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create index publish_attempts_post on publish_attempts(post_id)`);
  }
}
