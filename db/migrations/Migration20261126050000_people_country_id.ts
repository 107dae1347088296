import { Migration } from '@mikro-orm/migrations';

/**
 * Country + id as one key, for the page of a broad contact search (more matches than the
 * exact-count limit), which walks the matches in id order (db/discoverySearch.ts): with a country
 * condition the walk is a range of this key in id order, where it walked the primary key and
 * visited the heap of every person until a page of that country matched (bench `NOT group`:
 * Netherlands, 3,461 rows read → 92 index entries; the walk's statement 4.1 → 2.4 ms, median of
 * 25). `member_seniority` is carried so that the bench's NOT of a few seniorities is checked in
 * the index. 53 MB for 1M people.
 */
export class Migration20261126050000_people_country_id extends Migration {
  override name = 'Migration20261126050000_people_country_id';

  override up(): void {
    this.addSql(`create index ds_people_country_id on ds_people(member_location_country, id) include (member_seniority)`);
  }
}
