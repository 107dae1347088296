/**
 * Entities and migrations cannot drift: on a freshly migrated database, the schema MikroORM would
 * build from the entities (db/entities.ts) is the one the migrations built, so
 * `getUpdateSchemaSQL()` has nothing to say. On failure the SQL it would run is the diff.
 *
 * Compared column by column: tables, types, nullability, defaults, primary keys, FKs (with their
 * delete rules), unique constraints, checks, and plain/partial/covering/GIN indexes. What the
 * entities declare as raw DDL, because MikroORM's structured options cannot say it (operator
 * classes such as `gin_trgm_ops`, expressions such as `lower(…)` or `::numeric`, `desc` keys,
 * storage parameters), is compared by name only: index `expression`s and the `auth_changed`
 * trigger `expression`s. Not seen at all, hence written in the migrations only (each noted at its
 * entity): the TRUNCATE triggers (PostgreSQL's `information_schema.triggers`, which the
 * introspection reads, does not list them), `unlogged` tables, column `storage external` and the
 * table `fillfactor`; nothing needed excluding.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openOrm, type MikroORM } from '../../db/orm.js';
import { cloneTestDatabase, dropTestDatabase } from '../harness.js';

let orm: MikroORM;
let dbName: string;

beforeAll(async () => {
  // The test template is the freshly migrated database (test/globalSetup.ts).
  const clone = await cloneTestDatabase('drift');
  dbName = clone.name;
  orm = await openOrm(clone.url);
}, 60_000);
afterAll(async () => {
  await orm?.close(true);
  if (dbName) await dropTestDatabase(dbName);
});

/**
 * The row-level security policies are written in the migrations only (`app_enable_workspace_rls`,
 * Migration20261128100000_row_level_security): the entities declare none, so the ORM would drop
 * them and switch RLS off. Those statements (the two policy names, `disable` / `no force`, and the function that creates them) are the
 * only ones set aside; rowLevelSecurity.test.ts proves every workspace-owned table has them.
 */
const RLS_STATEMENT = /^(drop policy "(workspace_isolation|all_workspaces)" on "\w+"|alter table "\w+" (no force|disable) row level security|drop function if exists "app_enable_workspace_rls"\(regclass\));$/;

it('finds nothing to change between the entities and the migrated schema', async () => {
  const sql = (await orm.schema.getUpdateSchemaSQL({ wrap: false }))
    .split('\n')
    .filter((line) => !RLS_STATEMENT.test(line.trim()))
    .join('\n');
  expect(sql.trim(), `entities and migrations differ; the ORM would run:\n${sql}`).toBe('');
});
