import { Migration } from '@mikro-orm/migrations';

/**
 * `ds_companies_by_technology`: one row per (technology, company) of `ds_companies`, kept by
 * statement-level triggers (every writer of ds_companies), and a people key
 * `(member_seniority, company_id) include (id)`. Together they answer `dsCompany.technologies IN
 * (…) AND dsContact.member_seniority == / IN …` (bench/discovery.ts `company technology +
 * seniority`) as a join of two index-only ranges (a merge join for one technology and one
 * seniority, both in company order), where the seniority's 30k index entries had the copied
 * `company_technologies` array filtered one by one (docs/DISCOVERY.md "Arrays"). Triggers as for
 * ds_people_by_skill (Migration20261125230000_people_by_skill): one per event, one function.
 */
export class Migration20261126020000_companies_by_technology extends Migration {
  override name = 'Migration20261126020000_companies_by_technology';

  override up(): void {
    this.addSql(`create table ds_companies_by_technology (technology text not null, company_id uuid not null)`);
    const keys = (rows: string) => `select k, r.id from ${rows} r, unnest(r.technologies) k where k is not null`;
    const remove = (rows: string) => `delete from ds_companies_by_technology t using (${rows}) x(k, id) where t.technology = x.k and t.company_id = x.id`;
    this.addSql(`create function ds_companies_by_technology_sync() returns trigger language plpgsql as $$
      begin
        if tg_op = 'TRUNCATE' then
          truncate ds_companies_by_technology;
        elsif tg_op = 'INSERT' then
          insert into ds_companies_by_technology (technology, company_id) ${keys('new_rows')} on conflict do nothing;
        elsif tg_op = 'DELETE' then
          ${remove(keys('old_rows'))};
        else
          -- only the keys the statement changed
          ${remove(`${keys('old_rows')} except ${keys('new_rows')}`)};
          insert into ds_companies_by_technology (technology, company_id) ${keys('new_rows')} except ${keys('old_rows')} on conflict do nothing;
        end if;
        return null;
      end $$`);
    this.addSql(`insert into ds_companies_by_technology (technology, company_id) select distinct k, c.id from ds_companies c, unnest(c.technologies) k where k is not null`);
    this.addSql(`alter table ds_companies_by_technology add constraint ds_companies_by_technology_pkey primary key (technology, company_id)`);
    this.addSql(
      `create trigger ds_companies_by_technology_insert after insert on ds_companies referencing new table as new_rows for each statement execute function ds_companies_by_technology_sync()`,
    );
    this.addSql(
      `create trigger ds_companies_by_technology_update after update on ds_companies referencing old table as old_rows new table as new_rows for each statement execute function ds_companies_by_technology_sync()`,
    );
    this.addSql(
      `create trigger ds_companies_by_technology_delete after delete on ds_companies referencing old table as old_rows for each statement execute function ds_companies_by_technology_sync()`,
    );
    this.addSql(`create trigger ds_companies_by_technology_truncate after truncate on ds_companies for each statement execute function ds_companies_by_technology_sync()`);
    this.addSql(`create index ds_people_seniority_company on ds_people(member_seniority, company_id) include (id)`);
  }
}
