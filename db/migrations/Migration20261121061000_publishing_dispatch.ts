import { Migration } from '@mikro-orm/migrations';

/**
 * Batch dispatch marks: a schedule row gets its publish workflow once it is due within the
 * dispatch horizon; `dispatched_at` says it has one, so the batch workflow never starts it twice.
 */
export class Migration20261121061000_publishing_dispatch extends Migration {
  override name = 'Migration20261121061000_publishing_dispatch';

  override up(): void {
    this.addSql(`alter table post_schedules add column dispatched_at timestamptz`);
    this.addSql(`drop index if exists post_schedules_batch`);
    this.addSql(`create index post_schedules_batch_pending on post_schedules(batch_id, scheduled_time)
      where batch_id is not null and status = 'scheduled' and dispatched_at is null`);
  }
}
