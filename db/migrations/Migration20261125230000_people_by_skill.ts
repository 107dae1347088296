import { Migration } from '@mikro-orm/migrations';

/**
 * `ds_people_by_skill`: one row per (skill, location country, person) of `ds_people`, kept by
 * statement-level triggers (every writer of ds_people: importer, demo dataset, tests), so that
 * `skills IN (…) AND country = X` is an index-only range of its primary key instead of a filter
 * on the skills array of every person of the country (bench/discovery.ts `skills + country`:
 * 61,775 index entries filtered to 5,369 matches, 1,609 → 45 buffers; docs/DISCOVERY.md "Arrays").
 * People without a country have no rows (the table answers skill + country searches only).
 * Transition tables cannot be declared for several events at once: one trigger per event, one
 * function for all. TRUNCATE empties it too (a trigger the ORM's introspection does not see:
 * migration only, noted at the entity).
 */
export class Migration20261125230000_people_by_skill extends Migration {
  override name = 'Migration20261125230000_people_by_skill';

  override up(): void {
    this.addSql(`create table ds_people_by_skill (skill text not null, country text not null, person_id uuid not null)`);
    // a trigger of one event has only that event's transition tables: one branch per event
    const keys = (rows: string) =>
      `select k, r.member_location_country, r.id from ${rows} r, unnest(r.member_skills) k where r.member_location_country is not null and k is not null`;
    const remove = (rows: string) => `delete from ds_people_by_skill s using (${rows}) x(k, country, id) where s.skill = x.k and s.country = x.country and s.person_id = x.id`;
    this.addSql(`create function ds_people_by_skill_sync() returns trigger language plpgsql as $$
      begin
        if tg_op = 'TRUNCATE' then
          truncate ds_people_by_skill;
        elsif tg_op = 'INSERT' then
          insert into ds_people_by_skill (skill, country, person_id) ${keys('new_rows')} on conflict do nothing;
        elsif tg_op = 'DELETE' then
          ${remove(keys('old_rows'))};
        else
          -- only the keys the statement changed
          ${remove(`${keys('old_rows')} except ${keys('new_rows')}`)};
          insert into ds_people_by_skill (skill, country, person_id) ${keys('new_rows')} except ${keys('old_rows')} on conflict do nothing;
        end if;
        return null;
      end $$`);
    this.addSql(`insert into ds_people_by_skill (skill, country, person_id)
      select distinct k, p.member_location_country, p.id from ds_people p, unnest(p.member_skills) k where p.member_location_country is not null and k is not null`);
    this.addSql(`alter table ds_people_by_skill add constraint ds_people_by_skill_pkey primary key (skill, country, person_id)`);
    this.addSql(`create trigger ds_people_by_skill_insert after insert on ds_people referencing new table as new_rows for each statement execute function ds_people_by_skill_sync()`);
    this.addSql(
      `create trigger ds_people_by_skill_update after update on ds_people referencing old table as old_rows new table as new_rows for each statement execute function ds_people_by_skill_sync()`,
    );
    this.addSql(`create trigger ds_people_by_skill_delete after delete on ds_people referencing old table as old_rows for each statement execute function ds_people_by_skill_sync()`);
    this.addSql(`create trigger ds_people_by_skill_truncate after truncate on ds_people for each statement execute function ds_people_by_skill_sync()`);
  }
}
