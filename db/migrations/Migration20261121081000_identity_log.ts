import { Migration } from '@mikro-orm/migrations';

/**
 * The identity log of contact ingests (db/contactIngest.ts): one row per committed ingest batch
 * with 53-bit hashes of the emails and row keys it wrote (8 bytes each, so reading it back costs
 * no parsing), appended in commit order (`seq`, under the workspace's ingest lock), kept for
 * minutes. An optimistic ingest checks what was appended since its look-ups instead of probing
 * every email again. Unlogged: after a crash no batch that looked anything up is still in
 * flight, so an empty log is a correct one. Stored uncompressed (hashes do not compress).
 */
export class Migration20261121081000_identity_log extends Migration {
  override name = 'Migration20261121081000_identity_log';

  override up(): void {
    this.addSql(`create unlogged table contact_identity_log (
      seq bigserial primary key,
      workspace_id uuid not null,
      source_id uuid,
      email_hashes bytea not null,
      row_key_hashes bytea not null,
      logged_at timestamptz not null default clock_timestamp())`);
    this.addSql(`alter table contact_identity_log alter column email_hashes set storage external, alter column row_key_hashes set storage external`);
    this.addSql(`create index contact_identity_log_ws_seq on contact_identity_log(workspace_id, seq)`);
  }
}
