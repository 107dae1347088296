import { Migration } from '@mikro-orm/migrations';

/** Session keys expire (`expires_at`, set at creation; null: never). Revocation stays `revoked_at`. */
export class Migration20261124130000_api_key_expiry extends Migration {
  override name = 'Migration20261124130000_api_key_expiry';

  override up(): void {
    this.addSql(`alter table api_keys add column expires_at timestamptz`);
  }
}
