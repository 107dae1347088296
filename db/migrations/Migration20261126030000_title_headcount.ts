import { Migration } from '@mikro-orm/migrations';

/**
 * Title + company headcount as one key (bench/discovery.ts `company headcount + title LIKE`):
 * `title LIKE '%recruit%' AND dsCompany.employee_count >= 5000` read every holder of a matching
 * title (27k entries of ds_people_title) and filtered the copied headcount of each to 9,456; here
 * the headcount is the second key, so each title is a range (count 16 → 5 ms in the same session).
 * The raw column is carried too: an expression key alone does not make the scan index-only
 * (PostgreSQL checks the filter's column, not the expression). Partial (people of a company with
 * a headcount): any headcount comparison implies it, while searches on the title alone keep the
 * title's own indexes, whose entries lie in heap order (this one's, in headcount order, cost a
 * visibility-map look-up per entry: 3.4 vs 2.5 ms for `title LIKE '%vp of sales%'`).
 */
export class Migration20261126030000_title_headcount extends Migration {
  override name = 'Migration20261126030000_title_headcount';

  override up(): void {
    this.addSql(`create index ds_people_title_headcount on ds_people(member_job_title, ((company_employee_count)::numeric)) include (id, company_employee_count) where company_employee_count is not null`);
  }
}
