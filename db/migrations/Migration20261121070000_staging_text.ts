import { Migration } from '@mikro-orm/migrations';

/**
 * Staged bulk-upsert rows are kept as the JSON text the API wrote: the worker parses each row
 * once anyway, and `jsonb` made PostgreSQL parse every row on the way in and re-serialise it on
 * the way out (a third of the time before the 202 of a 100,000-row request).
 */
export class Migration20261121070000_staging_text extends Migration {
  override name = 'Migration20261121070000_staging_text';

  override up(): void {
    this.addSql(`alter table contact_ingest_staging alter column data type text using data::text`);
  }
}
