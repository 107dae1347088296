import { Migration } from '@mikro-orm/migrations';

/**
 * Personal-data lifecycle (docs/PRIVACY.md): erasure requests (the claim check of an erasure
 * job: the identifiers, sealed, until the job ends; then only the per-store report) and the
 * suppression list (HMAC-SHA256 of normalised identifiers under a server key: no clear text).
 */
export class Migration20261128300000_privacy extends Migration {
  override name = 'Migration20261128300000_privacy';

  override up(): void {
    this.addSql(`create table erasure_requests (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      identifiers text,
      plan jsonb,
      report jsonb,
      created_at timestamptz not null default now(),
      completed_at timestamptz)`);
    this.addSql(`create index erasure_requests_workspace on erasure_requests(workspace_id)`);
    this.addSql(`create table suppression_entries (
      workspace_id uuid not null references workspaces(id) on delete cascade,
      identifier_hash text not null,
      kind text not null constraint suppression_entries_kind_check check (kind in ('email','profileUrl')),
      reason text not null constraint suppression_entries_reason_check check (reason in ('erasure','doNotContact')),
      created_at timestamptz not null default now(),
      primary key (workspace_id, identifier_hash))`);
    // Tenancy enforced by PostgreSQL (Migration20261128100000_row_level_security).
    this.addSql(`select app_enable_workspace_rls('erasure_requests')`);
    this.addSql(`select app_enable_workspace_rls('suppression_entries')`);
  }
}
