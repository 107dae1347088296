import { Migration } from '@mikro-orm/migrations';

/**
 * Discovery plans, second round (bench/discovery.ts, EXPLAIN (ANALYZE, BUFFERS); docs/DISCOVERY.md
 * "Query plans"):
 * - `ds_people.company_technologies`: the company's technologies copied onto each person (null
 *   without a company, like the other copies; kept by the dataset importer), so `dsCompany.technologies`
 *   in a contact search needs no join. Carried by the seniority index, `technology + seniority` is
 *   an index-only range of the seniority instead of a GIN bitmap that visits most company pages;
 * - the companies' country index carries the technologies: `technologies + country`, also as a
 *   branch of an OR read as a UNION, is an index-only range instead of a heap visit per candidate;
 * - `lower(member_full_name)` (pattern ops: any collation), then the country: a name prefix
 *   (`LIKE 'priya pat%'`, also compared as `lower(name) LIKE lower(pattern)`) is a b-tree range,
 *   with the country checked in the index, instead of a trigram bitmap rechecked on the heap.
 */
const SENIORITY_COVERS = 'id, company_id, company_industry, company_size_range, company_employee_count, company_hq_country, verified, company_technologies';

export class Migration20261124150500_discovery_arrays extends Migration {
  override name = 'Migration20261124150500_discovery_arrays';

  override up(): void {
    this.addSql(`alter table ds_people add column company_technologies text[]`);
    this.addSql(`update ds_people p set company_technologies = c.technologies from ds_companies c where c.id = p.company_id`);
    this.addSql(`drop index if exists ds_people_seniority`);
    this.addSql(`create index ds_people_seniority on ds_people(member_seniority, member_location_country) include (${SENIORITY_COVERS})`);
    this.addSql(`drop index if exists ds_companies_hq_country`);
    this.addSql(`create index ds_companies_hq_country on ds_companies(hq_country, ((employee_count)::numeric)) include (id, employee_count, technologies)`);
    this.addSql(`create index ds_people_full_name_lower on ds_people(lower(member_full_name) text_pattern_ops, member_location_country)`);
  }
}
