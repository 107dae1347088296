import { Migration } from '@mikro-orm/migrations';

/**
 * Tenancy enforced by PostgreSQL: row-level security on every table with a `workspace_id`.
 *
 * Two NOLOGIN roles (cluster-wide, so created only when missing; a concurrent migration of
 * another database may create one first):
 * - `app_tenant`: what the API and the worker run as (`db/tenancy.ts` sets it on each pooled
 *   connection). Its policy admits the rows whose `workspace_id` is the session's
 *   `app.workspace_id`; unset or empty admits none (fail-closed).
 * - `app_all_workspaces`: the explicit opt-out of the global paths (`withoutTenancy(reason, …)`):
 *   every row.
 * Neither is a superuser nor owns a table, so neither bypasses the policies. FORCE makes them
 * bind the owner too; the owner (the role running the migrations) is made a member of both, so
 * migrations, the admin CLI and the dataset import still see every row (a superuser bypasses
 * RLS anyway).
 *
 * `app_enable_workspace_rls(regclass)` is the one line a later migration adding a
 * workspace-owned table calls; test/integration/rowLevelSecurity.test.ts fails on any table with a
 * `workspace_id` left without it. Default privileges give both roles DML (not TRUNCATE, which
 * RLS does not cover) on the tables the migrating role creates later.
 */
/** Operator functions of the indexed conditions on workspace-owned tables (`@>`, `&&`, `<@`, `lower()`, LIKE, ILIKE). */
const LEAKPROOF = [
  'pg_catalog.arraycontains(anyarray, anyarray)',
  'pg_catalog.arrayoverlap(anyarray, anyarray)',
  'pg_catalog.arraycontained(anyarray, anyarray)',
  'pg_catalog.lower(text)',
  'pg_catalog.textlike(text, text)',
  'pg_catalog.texticlike(text, text)',
];

export class Migration20261128100000_row_level_security extends Migration {
  override name = 'Migration20261128100000_row_level_security';

  override up(): void {
    for (const role of ['app_tenant', 'app_all_workspaces']) {
      this.addSql(`do $$ begin
        if not exists (select 1 from pg_roles where rolname = '${role}') then
          create role ${role} nologin;
        end if;
      exception when duplicate_object or unique_violation then null;
      end $$`);
      // SET ROLE needs membership (a superuser has it anyway); FORCE'd policies then admit the
      // owner through `app_all_workspaces`. Granted at most once per cluster, hence the guard.
      this.addSql(`do $$ begin
        if not pg_has_role(current_user, '${role}', 'member') then
          execute format('grant ${role} to %I', current_user);
        end if;
      exception when others then
        if not pg_has_role(current_user, '${role}', 'member') then raise; end if;
      end $$`);
    }
    this.addSql(`grant usage on schema public to app_tenant, app_all_workspaces`);
    this.addSql(`grant select, insert, update, delete on all tables in schema public to app_tenant, app_all_workspaces`);
    this.addSql(`grant usage, select, update on all sequences in schema public to app_tenant, app_all_workspaces`);
    this.addSql(`alter default privileges in schema public grant select, insert, update, delete on tables to app_tenant, app_all_workspaces`);
    this.addSql(`alter default privileges in schema public grant usage, select, update on sequences to app_tenant, app_all_workspaces`);

    // The policy's expression is written inline (not a function call) so the planner can use the
    // table's workspace_id index for it; current_setting is stable, evaluated once per scan.
    this.addSql(`create function app_enable_workspace_rls(tbl regclass) returns void language plpgsql as $fn$
      begin
        execute format('alter table %s enable row level security', tbl);
        execute format('alter table %s force row level security', tbl);
        execute format('drop policy if exists workspace_isolation on %s', tbl);
        execute format('create policy workspace_isolation on %s to app_tenant'
          ' using (workspace_id = nullif(current_setting(''app.workspace_id'', true), '''')::uuid)'
          ' with check (workspace_id = nullif(current_setting(''app.workspace_id'', true), '''')::uuid)', tbl);
        execute format('drop policy if exists all_workspaces on %s', tbl);
        execute format('create policy all_workspaces on %s to app_all_workspaces using (true) with check (true)', tbl);
      end
    $fn$`);
    // Below a policy, the planner uses a condition as an index condition only if its function is
    // LEAKPROOF (it cannot reveal a row the policy hides): without these, the GIN index on
    // contacts.emails, the trigram and lower(name) indexes are not used under RLS (an email look-up
    // of the ingest became a sequential scan). Their only "leak" would be an error message to our own
    // code. pg_proc is per database (the test template's clones inherit it); ALTER … LEAKPROOF
    // needs a superuser, so elsewhere the migration says so and goes on (slower reads, same rows).
    this.addSql(`do $$ begin
      if (select rolsuper from pg_roles where rolname = current_user) then
        ${LEAKPROOF.map((f) => `alter function ${f} leakproof;`).join('\n        ')}
        if to_regprocedure('similarity_op(text, text)') is not null then
          alter function similarity_op(text, text) leakproof;
        end if;
      else
        raise warning 'not a superuser: index conditions on arrays, lower() and LIKE are not used under row-level security (docs/ARCHITECTURE.md)';
      end if;
    end $$`);
    this.addSql(`select app_enable_workspace_rls(format('%I.%I', c.table_schema, c.table_name)::regclass)
      from information_schema.columns c
      join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
     where c.table_schema = 'public' and c.column_name = 'workspace_id' and t.table_type = 'BASE TABLE'`);
  }

  override down(): void {
    this.addSql(`do $$ declare t regclass; begin
      for t in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where n.nspname = 'public' and c.relkind = 'r' and c.relrowsecurity loop
        execute format('drop policy if exists workspace_isolation on %s', t);
        execute format('drop policy if exists all_workspaces on %s', t);
        execute format('alter table %s no force row level security', t);
        execute format('alter table %s disable row level security', t);
      end loop;
    end $$`);
    this.addSql(`drop function app_enable_workspace_rls(regclass)`);
    this.addSql(`do $$ begin
      if (select rolsuper from pg_roles where rolname = current_user) then
        ${LEAKPROOF.map((f) => `alter function ${f} not leakproof;`).join('\n        ')}
        if to_regprocedure('similarity_op(text, text)') is not null then
          alter function similarity_op(text, text) not leakproof;
        end if;
      end if;
    end $$`);
    this.addSql(`alter default privileges in schema public revoke select, insert, update, delete on tables from app_tenant, app_all_workspaces`);
    this.addSql(`alter default privileges in schema public revoke usage, select, update on sequences from app_tenant, app_all_workspaces`);
    this.addSql(`revoke all on all tables in schema public from app_tenant, app_all_workspaces`);
    this.addSql(`revoke all on all sequences in schema public from app_tenant, app_all_workspaces`);
    this.addSql(`revoke usage on schema public from app_tenant, app_all_workspaces`);
    // The roles are the cluster's (other databases may use them): left in place.
  }
}
