import { Migration } from '@mikro-orm/migrations';

/**
 * The global discovery dataset (DESIGN §6): people, companies and posts. Not per workspace.
 *
 * Index plan (what the discovery searches use):
 * - `pg_trgm` GIN indexes on the text columns searched with `LIKE '%…%'` (names, titles,
 *   industry, website, city); `LIKE` compiles to `ILIKE`, which these indexes serve;
 * - b-tree indexes for equality / `IN` / range filters (seniority, countries, size range,
 *   employee count, revenue, founded year) and for the keyset order (`id`);
 * - GIN indexes on the multi-value arrays (`technologies`, `member_skills`);
 * - `ds_people(company_id)` for the person ↔ company joins, both ways;
 * - partial indexes on `verified` for the ranked verified searches.
 */
export class Migration20261121020000_dataset extends Migration {
  override name = 'Migration20261121020000_dataset';

  override up(): void {
    this.addSql(`create extension if not exists pg_trgm`);
    this.addSql(`create table ds_companies (
      id uuid primary key,
      company_pronet_url text not null unique,
      company_name text,
      company_website text,
      company_domain text,
      industry text,
      size_range text,
      employee_count int,
      revenue_min bigint,
      revenue_max bigint,
      founded_year int,
      hq_city text,
      hq_state text,
      hq_country text,
      technologies text[] not null default '{}',
      verified boolean not null default false,
      updated_at timestamptz not null default now())`);
    this.addSql(`create index ds_companies_domain on ds_companies(company_domain)`);
    this.addSql(`create index ds_companies_industry on ds_companies(industry)`);
    this.addSql(`create index ds_companies_size_range on ds_companies(size_range)`);
    this.addSql(`create index ds_companies_employee_count on ds_companies(employee_count)`);
    this.addSql(`create index ds_companies_revenue on ds_companies(revenue_min, revenue_max)`);
    this.addSql(`create index ds_companies_founded_year on ds_companies(founded_year)`);
    this.addSql(`create index ds_companies_hq_country on ds_companies(hq_country)`);
    this.addSql(`create index ds_companies_technologies on ds_companies using gin(technologies)`);
    this.addSql(`create index ds_companies_name_trgm on ds_companies using gin(company_name gin_trgm_ops)`);
    this.addSql(`create index ds_companies_website_trgm on ds_companies using gin(company_website gin_trgm_ops)`);
    this.addSql(`create index ds_companies_industry_trgm on ds_companies using gin(industry gin_trgm_ops)`);
    this.addSql(`create index ds_companies_hq_city_trgm on ds_companies using gin(hq_city gin_trgm_ops)`);
    this.addSql(`create index ds_companies_verified_rank on ds_companies(employee_count desc nulls last, id) where verified`);

    this.addSql(`create table ds_people (
      id uuid primary key,
      member_pronet_url text not null unique,
      member_full_name text,
      member_first_name text,
      member_last_name text,
      member_job_title text,
      member_seniority text,
      member_headline text,
      member_location_city text,
      member_location_country text,
      member_skills text[] not null default '{}',
      member_years_experience int,
      member_emails jsonb not null default '[]',
      member_phones jsonb not null default '[]',
      company_pronet_url text,
      company_id uuid null references ds_companies(id) on delete set null,
      verified boolean not null default false,
      updated_at timestamptz not null default now())`);
    this.addSql(`create index ds_people_company_id on ds_people(company_id)`);
    this.addSql(`create index ds_people_company_pronet_url on ds_people(company_pronet_url)`);
    this.addSql(`create index ds_people_seniority on ds_people(member_seniority)`);
    this.addSql(`create index ds_people_country on ds_people(member_location_country)`);
    this.addSql(`create index ds_people_years on ds_people(member_years_experience)`);
    this.addSql(`create index ds_people_skills on ds_people using gin(member_skills)`);
    this.addSql(`create index ds_people_title_trgm on ds_people using gin(member_job_title gin_trgm_ops)`);
    this.addSql(`create index ds_people_full_name_trgm on ds_people using gin(member_full_name gin_trgm_ops)`);
    this.addSql(`create index ds_people_verified on ds_people(id) where verified`);

    this.addSql(`create table ds_posts (
      id uuid primary key,
      member_pronet_url text not null,
      post_url text unique,
      text text,
      posted_at timestamptz,
      likes int,
      comments int,
      interaction_type text null,
      author_pronet_url text null)`);
    this.addSql(`create index ds_posts_member on ds_posts(member_pronet_url, posted_at desc)`);
    this.addSql(`create index ds_posts_author on ds_posts(author_pronet_url)`);
  }
}
