/** The distinct values of a dataset column: the options and suggestions of the discovery schema endpoints. */
import { sql } from 'kysely';
import type { Fragment } from './conditionSql.js';
import { likeContains } from '../domain/like.js';
import type { Pool } from './pool.js';
import { compileSql } from './sqlFragments.js';

// ---------------------------------------------------------------------------------------------
// options and suggestions

/** Distinct values of a ds column, most frequent first, optionally containing `q`. Raw SQL: the column is a catalog entry's (`sql.raw` of code), unnested when `multi`. */
export async function distinctValues(
  pool: Pool,
  table: 'ds_people' | 'ds_companies',
  column: string,
  opts: { q?: string; multi?: boolean; limit?: number },
): Promise<{ value: string; count: number }[]> {
  const limit = sql.lit(opts.limit ?? 100);
  // the table and the column are the catalog's, never client input
  const col = sql.raw(column);
  const expr = opts.multi ? sql`unnest(${col})` : col;
  let statement: Fragment;
  if (opts.q) {
    const pattern = likeContains(opts.q);
    // sample the matching rows through the trigram/GIN index instead of grouping the whole table
    statement = opts.multi
      ? sql`select v as value, count(*)::int as count from (select ${expr} as v from ${sql.raw(table)}) s where v ilike ${pattern} group by v order by count desc, v limit ${limit}`
      : sql`select value, count(*)::int as count from (select ${col} as value from ${sql.raw(table)} where ${col} ilike ${pattern} limit 20000) s group by value order by count desc, value limit ${limit}`;
  } else {
    statement = sql`select v as value, count(*)::int as count from (select ${expr} as v from ${sql.raw(table)}) s where v is not null and v <> '' group by v order by count desc, v limit ${limit}`;
  }
  // raw SQL: the grouped values of a catalog column named by its SQL (compileSql).
  const r = await pool.query<{ value: string; count: number }>(compileSql(statement));
  return r.rows;
}
