import { Migration } from '@mikro-orm/migrations';

/**
 * Bulk enrichment (issue 32, db/bulkEnrichment.ts): a job's settings and its control state
 * (`bulk_enrichment_jobs`, locked by every settlement so pause/cancel/budget stop exactly), its
 * rows with their per-row trace (`bulk_enrichment_rows`: the claim check of the workflow, which
 * carries ids and counts only), what each contact's enrichment found per slice with its
 * provenance (`contact_enrichments`, erased with the contact), and the workspace's default
 * freshness window (`workspace_enrichment_settings`).
 */
export class Migration20261128500000_bulk_enrichment extends Migration {
  override name = 'Migration20261128500000_bulk_enrichment';

  override up(): void {
    this.addSql(`create table bulk_enrichment_jobs (
      job_id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      state text not null default 'running' check (state in ('running','paused','cancelled','finished')),
      generation int not null default 0,
      slices text[] not null,
      plan jsonb not null,
      max_credits int,
      credits_spent int not null default 0,
      freshness_days int not null,
      force boolean not null default false,
      billable boolean not null default true,
      total int not null,
      stopped_by text,
      created_at timestamptz not null default now())`);
    this.addSql(`create index bulk_enrichment_jobs_workspace_id_index on bulk_enrichment_jobs(workspace_id)`);
    this.addSql(`create table bulk_enrichment_rows (
      job_id uuid not null references bulk_enrichment_jobs(job_id) on delete cascade,
      seq int not null,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      contact_id uuid not null,
      status text not null default 'pending' check (status in ('pending','done','not_reached','cancelled')),
      credits int not null default 0,
      trace jsonb,
      settled_at timestamptz,
      primary key (job_id, seq))`);
    this.addSql(`create index bulk_enrichment_rows_workspace_id_index on bulk_enrichment_rows(workspace_id)`);
    this.addSql(`create table contact_enrichments (
      contact_id uuid not null references contacts(id) on delete cascade,
      slice text not null,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      provider text not null,
      job_id uuid,
      enriched_at timestamptz not null,
      fields text[] not null default '{}',
      data jsonb not null,
      primary key (contact_id, slice))`);
    this.addSql(`create index contact_enrichments_workspace_id_index on contact_enrichments(workspace_id)`);
    this.addSql(`create table workspace_enrichment_settings (
      workspace_id uuid primary key references workspaces(id) on update cascade on delete cascade,
      freshness_days int not null,
      updated_at timestamptz not null default now())`);
    // Tenancy enforced by PostgreSQL (Migration20261128100000_row_level_security).
    this.addSql(`select app_enable_workspace_rls('bulk_enrichment_jobs')`);
    this.addSql(`select app_enable_workspace_rls('bulk_enrichment_rows')`);
    this.addSql(`select app_enable_workspace_rls('contact_enrichments')`);
    this.addSql(`select app_enable_workspace_rls('workspace_enrichment_settings')`);
  }

  override down(): void {
    this.addSql(`drop table workspace_enrichment_settings`);
    this.addSql(`drop table contact_enrichments`);
    this.addSql(`drop table bulk_enrichment_rows`);
    this.addSql(`drop table bulk_enrichment_jobs`);
  }
}
