import { Migration } from '@mikro-orm/migrations';

/**
 * Search tuning of the discovery dataset, measured on 1M people / 100k companies
 * (bench/discovery.ts):
 * - number filters compare `col::numeric` (the condition compiler's operand type), so their
 *   b-tree indexes are on that expression;
 * - verified contacts are ranked by seniority, then experience: a partial index in rank order;
 * - verified company names are matched case-insensitively;
 * - person filters of company searches (seniority, country) are covered with company_id
 *   (country by the country/seniority/experience index);
 * - `LIKE` on job titles goes through the distinct titles (`ds_people_titles`, kept by the importer);
 * - the company attributes contact searches filter on most (industry, size range, headcount,
 *   HQ country) are copied onto ds_people, so those filters need no join.
 */
/**
 * Title and seniority are the usual anchors of a people search: their indexes carry the other
 * common filter columns, so counting a combination (title + country, seniority + industry, …)
 * is an index-only scan instead of one heap visit per candidate row.
 */
const SENIORITY_COVERS = 'company_id, member_location_country, company_industry, company_size_range, company_employee_count, company_hq_country, verified';
const TITLE_COVERS = `company_id, member_location_country, member_seniority, member_years_experience, company_industry, company_size_range, company_employee_count, company_hq_country, verified`;

export class Migration20261121020100_dataset_search extends Migration {
  override name = 'Migration20261121020100_dataset_search';

  override up(): void {
    // copies of the company's attributes on each person (kept in sync by the dataset importer)
    this.addSql(`alter table ds_people add column company_industry text, add column company_size_range text,
      add column company_employee_count int, add column company_hq_country text`);
    this.addSql(`create index ds_people_company_industry on ds_people(company_industry) include (company_id, member_seniority, member_location_country)`);
    this.addSql(`create index ds_people_company_size_range on ds_people(company_size_range)`);
    this.addSql(`create index ds_people_company_employee_count_num on ds_people(((company_employee_count)::numeric))`);
    this.addSql(`create index ds_people_company_hq_country on ds_people(company_hq_country)`);
    this.addSql(`drop index if exists ds_people_years`);
    this.addSql(`create index ds_people_years_num on ds_people(((member_years_experience)::numeric))`);
    this.addSql(`drop index if exists ds_companies_employee_count`);
    this.addSql(`create index ds_companies_employee_count_num on ds_companies(((employee_count)::numeric))`);
    this.addSql(`drop index if exists ds_companies_revenue`);
    this.addSql(`create index ds_companies_revenue_min_num on ds_companies(((revenue_min)::numeric))`);
    this.addSql(`create index ds_companies_revenue_max_num on ds_companies(((revenue_max)::numeric))`);
    this.addSql(`drop index if exists ds_companies_founded_year`);
    this.addSql(`create index ds_companies_founded_year_num on ds_companies(((founded_year)::numeric))`);
    // person filters of company searches read company_id from the index alone
    this.addSql(`drop index if exists ds_people_seniority`);
    this.addSql(`create index ds_people_seniority on ds_people(member_seniority) include (${SENIORITY_COVERS})`);
    this.addSql(`drop index if exists ds_people_country`);
    // LIKE on job titles runs against the distinct titles (few, compared with people) and then
    // looks the matching titles up in a b-tree: far cheaper than a trigram scan of 1M rows
    this.addSql(`create table ds_people_titles (title text primary key)`);
    this.addSql(`create index ds_people_titles_trgm on ds_people_titles using gin (title gin_trgm_ops)`);
    this.addSql(`drop index if exists ds_people_title_trgm`);
    this.addSql(`create index ds_people_title on ds_people(member_job_title) include (${TITLE_COVERS})`);
    // most people searches filter on the country; with seniority and experience next to it
    // (and the skills carried along), the common combinations are answered from this index
    this.addSql(`create index ds_people_country_seniority_years on ds_people(member_location_country, member_seniority, ((member_years_experience)::numeric)) include (company_id, member_skills)`);
    this.addSql(`create index ds_companies_lower_name on ds_companies(lower(company_name)) where verified`);
    this.addSql(`drop index if exists ds_people_verified`);
    this.addSql(`create index ds_people_verified_rank on ds_people(
      (case member_seniority when 'Owner' then 0 when 'CXO' then 1 when 'VP' then 2 when 'Director' then 3 when 'Manager' then 4
        when 'Senior' then 5 when 'Entry' then 6 when 'Intern' then 7 else 8 end), member_years_experience desc nulls last, id) where verified`);
  }
}
