import { Migration } from '@mikro-orm/migrations';

/**
 * The identity log of contact ingests (db/contactIngest.ts): one row per committed ingest batch
 * with the emails and row keys it wrote, appended in commit order (`seq`, under the workspace's
 * ingest lock), kept for minutes. An optimistic ingest checks what was appended since its
 * look-ups instead of probing every email again. Unlogged: after a crash no batch that looked
 * anything up is still in flight, so an empty log is a correct one. The arrays are stored
 * uncompressed (written once, read at most a few times).
 */
export class Migration20261121081000_identity_log extends Migration {
  override name = 'Migration20261121081000_identity_log';

  override up(): void {
    this.addSql(`create unlogged table contact_identity_log (
      seq bigserial primary key,
      workspace_id uuid not null,
      source_id uuid,
      emails text[] not null,
      row_keys text[] not null,
      logged_at timestamptz not null default clock_timestamp())`);
    this.addSql(`alter table contact_identity_log alter column emails set storage external, alter column row_keys set storage external`);
    this.addSql(`create index contact_identity_log_ws_seq on contact_identity_log(workspace_id, seq)`);
  }
}
