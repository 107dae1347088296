import { Migration } from '@mikro-orm/migrations';

/**
 * When a post rate-limited by its network (429) will be retried (issue 29, item 5): set by the
 * publish workflow before it waits out the network's reset on a timer, cleared when the row's
 * outcome is recorded. Shown as `retryAt` on the post.
 */
export class Migration20261128610000_post_retry_at extends Migration {
  override name = 'Migration20261128610000_post_retry_at';

  override up(): void {
    this.addSql(`alter table posts add column retry_at timestamptz`);
  }

  override down(): void {
    this.addSql(`alter table posts drop column retry_at`);
  }
}
