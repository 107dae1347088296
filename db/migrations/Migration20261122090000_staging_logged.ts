import { Migration } from '@mikro-orm/migrations';

/**
 * Staged bulk-upsert rows survive a database crash. As an unlogged table the stage was emptied
 * by crash recovery, so a bulk upsert running across a PostgreSQL restart read no rows for its
 * remaining chunks and completed with them silently missing (found by test/chaos). The WAL of a
 * logged stage is the price: one write of the request's blocks.
 */
export class Migration20261122090000_staging_logged extends Migration {
  override name = 'Migration20261122090000_staging_logged';

  override up(): void {
    this.addSql(`alter table contact_ingest_staging set logged`);
  }
}
