import { Migration } from '@mikro-orm/migrations';

/**
 * API processes announce themselves (issue 31 item 3): each upserts its row every heartbeat and
 * counts the rows seen recently, so the per-key rate limit is shared by the replicas that run now
 * (api/replicas.ts), not by a static `API_REPLICAS`. A global table: no workspace, no RLS.
 */
export class Migration20261129000000_api_replicas extends Migration {
  override name = 'Migration20261129000000_api_replicas';

  override up(): void {
    this.addSql(`create table api_replicas (
      id uuid primary key,
      started_at timestamptz not null default now(),
      seen_at timestamptz not null default now())`);
  }

  override down(): void {
    this.addSql(`drop table api_replicas`);
  }
}
