import { Migration } from '@mikro-orm/migrations';

/**
 * Staged bulk-upsert rows are kept in blocks (db/contactStaging.ts): one row holds the JSON array
 * of up to 1,000 request rows, read once per chunk. Stored uncompressed: it lives for the length
 * of one job, and compressing ~250 KB per block would cost more than it saves. Rows staged in
 * the former one-row-per-request-row form are dropped: no job can read them any more.
 */
export class Migration20261121071000_staging_blocks extends Migration {
  override name = 'Migration20261121071000_staging_blocks';

  override up(): void {
    this.addSql(`delete from contact_ingest_staging`);
    this.addSql(`alter table contact_ingest_staging alter column data set storage external`);
  }
}
