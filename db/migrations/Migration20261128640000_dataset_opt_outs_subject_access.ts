import { Migration } from '@mikro-orm/migrations';

/**
 * Dataset opt-outs and subject access (issue 30 items 3 and 4, docs/PRIVACY.md).
 *
 * `dataset_opt_outs`: the operator's opt-out list for the global discovery dataset, as keyed
 * hashes (HMAC-SHA256 under a key derived from SERVER_SECRET: no clear text), read by every
 * dataset import so an opted-out person never comes back. Global, like the ds_* tables.
 *
 * `access_requests`: the claim check of a subject-access job: the identifiers, sealed, while the
 * job runs; the resolved contact ids (plan) and the job's result (object key, counts, link).
 */
export class Migration20261128640000_dataset_opt_outs_subject_access extends Migration {
  override name = 'Migration20261128640000_dataset_opt_outs_subject_access';

  override up(): void {
    this.addSql(`create table dataset_opt_outs (
      identifier_hash text primary key,
      kind text not null constraint dataset_opt_outs_kind_check check (kind in ('email','profileUrl')),
      created_at timestamptz not null default now())`);
    this.addSql(`create table access_requests (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      identifiers text,
      plan jsonb,
      result jsonb,
      created_at timestamptz not null default now(),
      completed_at timestamptz)`);
    this.addSql(`create index access_requests_workspace on access_requests(workspace_id)`);
    // Tenancy enforced by PostgreSQL (Migration20261128100000_row_level_security).
    this.addSql(`select app_enable_workspace_rls('access_requests')`);
  }

  override down(): void {
    this.addSql(`drop table access_requests`);
    this.addSql(`drop table dataset_opt_outs`);
  }
}
