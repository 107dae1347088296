import { Migration } from '@mikro-orm/migrations';

/**
 * Two more partner keys for people searches (bench/discovery.ts, shared buffers per search,
 * count and page; docs/DISCOVERY.md "Query plans"):
 * - title + company size range (`LIKE '%engineering manager%'` at companies of 1001-5000 people):
 *   the title index's second key is the country, so the size range was a filter over every person
 *   holding a matching title (37k entries for 10k matches); here it is a range (909 → 308);
 * - country + seniority, narrow: `country = X AND NOT seniority IN (…)` was read from a wide index
 *   (or a skip scan of the title index, whichever the planner's statistics favoured that day);
 *   this one holds just what the count and the page's ids need (2,122 → 626).
 */
export class Migration20261124152500_discovery_partner_keys extends Migration {
  override name = 'Migration20261124152500_discovery_partner_keys';

  override up(): void {
    this.addSql(`create index ds_people_title_size_range on ds_people(member_job_title, company_size_range) include (id, company_id, member_location_country, member_seniority)`);
    this.addSql(`create index ds_people_country_seniority on ds_people(member_location_country, member_seniority) include (id)`);
  }
}
