import { Migration } from '@mikro-orm/migrations';

/**
 * `workspace_id` defaults to the session's workspace (`app.workspace_id`, set by db/tenancy.ts for
 * the scope of a request or an activity), so an insert in scope need not name it: row-level
 * security already decides which workspace a statement touches, and the hand-typed
 * `workspace_id` values and predicates of db/ go (docs/ARCHITECTURE.md, "Tenancy").
 * The column stays NOT NULL: outside a workspace's scope (unset, or '' under `withoutTenancy`) the
 * default is null and an insert that names no workspace fails instead of landing nowhere.
 *
 * `app_enable_workspace_rls` sets the default too, so a table a later migration adds is born
 * with it. The expression is written as PostgreSQL prints it back, which is what the entities
 * declare (`SCOPED_WORKSPACE_ID` in db/tenancy.ts), so the schema-drift test compares equal.
 */
const DEFAULT = `(nullif(current_setting('app.workspace_id'::text, true), ''::text))::uuid`;

const ENABLE_RLS = (withDefault: boolean) => `create or replace function app_enable_workspace_rls(tbl regclass) returns void language plpgsql as $fn$
      begin
        execute format('alter table %s enable row level security', tbl);
        execute format('alter table %s force row level security', tbl);
        execute format('drop policy if exists workspace_isolation on %s', tbl);
        execute format('create policy workspace_isolation on %s to app_tenant'
          ' using (workspace_id = nullif(current_setting(''app.workspace_id'', true), '''')::uuid)'
          ' with check (workspace_id = nullif(current_setting(''app.workspace_id'', true), '''')::uuid)', tbl);
        execute format('drop policy if exists all_workspaces on %s', tbl);
        execute format('create policy all_workspaces on %s to app_all_workspaces using (true) with check (true)', tbl);${
          withDefault ? `\n        execute format('alter table %s alter column workspace_id set default ${DEFAULT.replace(/'/g, "''")}', tbl);` : ''
        }
      end
    $fn$`;

const WORKSPACE_OWNED = `select format('%I.%I', c.table_schema, c.table_name)::regclass as tbl
      from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
     where c.table_schema = 'public' and c.column_name = 'workspace_id' and t.table_type = 'BASE TABLE'`;

export class Migration20261129100000_workspace_id_default extends Migration {
  override name = 'Migration20261129100000_workspace_id_default';

  override up(): void {
    this.addSql(ENABLE_RLS(true));
    this.addSql(`select app_enable_workspace_rls(tbl) from (${WORKSPACE_OWNED}) w`);
  }

  override down(): void {
    this.addSql(ENABLE_RLS(false));
    this.addSql(`do $$ declare t regclass; begin
      for t in ${WORKSPACE_OWNED} loop
        execute format('alter table %s alter column workspace_id drop default', t);
      end loop;
    end $$`);
  }
}
