import { Migration } from '@mikro-orm/migrations';

/**
 * Every keyed request removes its workspace's expired idempotency records (db/idempotency.ts):
 * `(workspace_id, created_at)` finds them among that workspace's rows only. The index on
 * `created_at` alone would walk every workspace's expired rows, and those of workspaces that no
 * longer send keys stay.
 */
export class Migration20261126120000_idempotency_expiry_index extends Migration {
  override name = 'Migration20261126120000_idempotency_expiry_index';

  override up(): void {
    this.addSql(`create index idempotency_records_ws_created on idempotency_records(workspace_id, created_at)`);
    this.addSql(`drop index idempotency_records_created`);
  }

  override down(): void {
    this.addSql(`create index idempotency_records_created on idempotency_records(created_at)`);
    this.addSql(`drop index idempotency_records_ws_created`);
  }
}
