import { Migration } from '@mikro-orm/migrations';

/**
 * Contacts, companies, links to companies and sources, custom field definitions, sources,
 * segments and the staging table of bulk upserts. Every query is workspace-scoped, so the
 * indexes lead with workspace_id; text columns filtered with LIKE carry pg_trgm GIN indexes.
 */
export class Migration20261121010000_contacts extends Migration {
  override name = 'Migration20261121010000_contacts';

  override up(): void {
    this.addSql(`create extension if not exists pg_trgm`);

    this.addSql(`create table sources (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      source_type text not null check (source_type in ('pronetInbound','pronetOutbound','pronetPost','pronetKeywordSearch','pronetJobPosting','importFromWebhook')),
      source_identifier text,
      normalised_identifier text not null,
      source_meta jsonb not null default '{}',
      run_frequency jsonb,
      refresh_status text check (refresh_status in ('queued','running','succeeded','failed')),
      schedule_id text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (workspace_id, source_type, normalised_identifier))`);
    this.addSql(`create index sources_ws_type_id on sources(workspace_id, source_type, id)`);
    this.addSql(`create index sources_ws_id on sources(workspace_id, id)`);

    this.addSql(`create table segments (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      name text not null,
      is_default boolean not null default false,
      cloned_from uuid,
      segment_sources uuid[] not null default '{}',
      conditions jsonb not null default '[]',
      grouped_condition jsonb,
      workflows jsonb not null default '[]',
      saved_view_templates jsonb not null default '[]',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create unique index segments_one_default on segments(workspace_id) where is_default`);
    this.addSql(`create index segments_ws_id on segments(workspace_id, id)`);
    this.addSql(`create index segments_name_trgm on segments using gin (name gin_trgm_ops)`);
    this.addSql(`create index segments_sources_gin on segments using gin (segment_sources)`);

    this.addSql(`create table custom_field_definitions (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      label text not null,
      type text not null check (type in ('string','number','date','boolean','multi')),
      options jsonb,
      created_at timestamptz not null default now())`);
    this.addSql(`create unique index custom_field_definitions_ws_label on custom_field_definitions(workspace_id, lower(label))`);

    this.addSql(`create table companies (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      company_key text not null,
      company_name text,
      company_website text,
      company_domain text,
      company_industry text,
      company_headcount text,
      company_pronet text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (workspace_id, company_key))`);
    this.addSql(`create index companies_ws_lower_name on companies(workspace_id, lower(company_name))`);
    this.addSql(`create index companies_name_trgm on companies using gin (company_name gin_trgm_ops)`);

    // The primary company and every linked company live on the contact row: one write per
    // contact on the ingest path, one join for company filters. Companies and contacts are only
    // ever removed together with their workspace, so the link columns carry no FK checks (they
    // would cost a probe per row on the bulk path).
    this.addSql(`create table contacts (
      id uuid primary key,
      workspace_id uuid not null references workspaces(id) on delete cascade,
      status text not null default 'active' check (status in ('active','deleted')),
      first_name text,
      last_name text,
      full_name text,
      title text,
      pronet text,
      pronet_key text,
      emails text[] not null default '{}',
      work_email text,
      custom_fields jsonb not null default '{}',
      primary_company_id uuid,
      company_ids uuid[] not null default '{}',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      deleted_at timestamptz) with (fillfactor = 90)`);
    // Keyset pagination and workspace scans of active contacts (ids are UUIDv7: creation order).
    this.addSql(`create index contacts_ws_active_id on contacts(workspace_id, id) where status = 'active'`);
    this.addSql(`create unique index contacts_ws_pronet_key on contacts(workspace_id, pronet_key) where pronet_key is not null`);
    // Email identity match (emails && $batch) and multi-value filters on emails.
    this.addSql(`create index contacts_emails_gin on contacts using gin (emails) with (fastupdate = off)`);
    this.addSql(`create index contacts_full_name_trgm on contacts using gin (full_name gin_trgm_ops)`);
    this.addSql(`create index contacts_title_trgm on contacts using gin (title gin_trgm_ops)`);

    this.addSql(`create table contact_sources (
      source_id uuid not null references sources(id) on delete cascade,
      row_key text not null,
      contact_id uuid not null,
      origin text,
      first_seen timestamptz not null default now(),
      last_seen timestamptz not null default now(),
      primary key (source_id, row_key))`);
    this.addSql(`create index contact_sources_contact on contact_sources(contact_id, source_id)`);

    // Rows of a bulk upsert, staged by the API and read in chunks by the workflow's activities.
    this.addSql(`create unlogged table contact_ingest_staging (
      batch_id uuid not null,
      seq int not null,
      data jsonb not null,
      created_at timestamptz not null default now(),
      primary key (batch_id, seq))`);
  }
}
