import { Migration } from '@mikro-orm/migrations';

/**
 * Staged blocks are stored uncompressed (out of line, as before): pglz compression of a request's
 * blocks was most of the database's work for them and ran while the API held the request before
 * its 202 (100,000 generated rows: COPY 0.9–1.2 s, 390–400 ms of backend CPU compressed, against
 * 0.40–0.46 s and 160 ms uncompressed), and each chunk's read decompressed them again (380–450 ms
 * against 220–250 ms for the ten chunks). The price is the space of the staged rows while their
 * job runs (about 3–10 times more, uncompressed JSON) and the WAL that writes them.
 */
export class Migration20261125210000_staging_uncompressed extends Migration {
  override name = 'Migration20261125210000_staging_uncompressed';

  override up(): void {
    this.addSql(`alter table contact_ingest_staging alter column data set storage external`);
  }
}
