import { Migration } from '@mikro-orm/migrations';

/**
 * Discovery plans on 1M people (bench/discovery.ts, EXPLAIN (ANALYZE, BUFFERS) of each slow
 * shape; docs/DISCOVERY.md "Query plans"):
 * - the anchors of a people search (title, seniority, company industry, country) get their most
 *   common partner as a second key column, so `title + country`, `seniority + country`,
 *   `industry + seniority` and `country + experience range` are index ranges instead of a
 *   BitmapAnd of two large bitmaps (a `United Kingdom` bitmap alone is 100k rows);
 * - every one of them carries `id`, so OR branches rewritten as a UNION of ids and the ids of a
 *   sparse page are read from the index alone (index-only scans, no heap visit per match);
 * - a company search filtered on people applies the company's copied attributes to the people
 *   too (db/discoverySearch.ts): the people's HQ country is indexed with their seniority;
 * - company filters on country + headcount and industry + size range are index ranges carrying
 *   `id`, so the semi-join with the matching people needs no company heap visit;
 * - an expression key (`years::numeric`) is not readable by an index-only scan: the plain column
 *   is included beside it.
 */
const TITLE_COVERS = 'id, company_id, member_seniority, member_years_experience, company_industry, company_size_range, company_employee_count, company_hq_country, verified';
const SENIORITY_COVERS = 'id, company_id, company_industry, company_size_range, company_employee_count, company_hq_country, verified';

export class Migration20261124140000_discovery_plans extends Migration {
  override name = 'Migration20261124140000_discovery_plans';

  override up(): void {
    this.addSql(`drop index if exists ds_people_title`);
    this.addSql(`create index ds_people_title on ds_people(member_job_title, member_location_country) include (${TITLE_COVERS})`);
    this.addSql(`drop index if exists ds_people_seniority`);
    this.addSql(`create index ds_people_seniority on ds_people(member_seniority, member_location_country) include (${SENIORITY_COVERS})`);
    this.addSql(`drop index if exists ds_people_company_industry`);
    this.addSql(`create index ds_people_company_industry on ds_people(company_industry, member_seniority) include (id, company_id, member_location_country)`);
    this.addSql(`drop index if exists ds_people_country_seniority_years`);
    this.addSql(`drop index if exists ds_people_country_years`);
    this.addSql(`create index ds_people_country_years on ds_people(member_location_country, ((member_years_experience)::numeric))
      include (id, company_id, member_seniority, member_years_experience, member_skills)`);
    this.addSql(`drop index if exists ds_people_company_hq_country`);
    this.addSql(`create index ds_people_company_hq_country on ds_people(company_hq_country, member_seniority) include (id, company_id)`);
    this.addSql(`drop index if exists ds_companies_hq_country`);
    this.addSql(`create index ds_companies_hq_country on ds_companies(hq_country, ((employee_count)::numeric)) include (id, employee_count)`);
    this.addSql(`drop index if exists ds_companies_industry`);
    this.addSql(`create index ds_companies_industry on ds_companies(industry, size_range) include (id)`);
  }
}
