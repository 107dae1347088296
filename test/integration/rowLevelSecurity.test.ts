/**
 * Tenancy enforced by PostgreSQL (migration `…_row_level_security`, db/tenancy.ts): every table
 * with a `workspace_id` has row-level security enabled, forced, with its policies; and on the
 * pool the API and the worker use (`tenancy: 'enforced'`), a statement written WITHOUT a
 * workspace predicate, run in workspace A's scope, sees and touches none of B's rows — SELECT,
 * UPDATE, DELETE, INSERT, COPY — and outside any scope sees none at all. Rows are written for
 * real in two workspaces of a freshly migrated database, in every such table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { to as copyTo, from as copyFrom } from 'pg-copy-streams';
import { openDatabase, type Database } from '../../db/orm.js';
import { inWorkspaceScope, withoutTenancy } from '../../db/tenancy.js';
import { inTransaction } from '../../db/pool.js';
import { cloneTestDatabase, dropTestDatabase } from '../harness.js';
import { loadConfig } from '../../domain/config.js';
import { keyringOf } from '../../domain/keyring.js';
import { createWorkspace } from '../../db/workspaces.js';

/** Values the generic filler cannot guess: columns under CHECK constraints (table → column → value). */
/** Tables no role may UPDATE or DELETE (Migration20261128630000_audit_trail). */
const APPEND_ONLY = new Set(['audit_events', 'audit_outcomes']);

const VALID: Record<string, Record<string, string>> = {
  api_keys: { kind: 'workspace' },
  contacts: { status: 'active' },
  custom_field_definitions: { type: 'string' },
  sources: { source_type: 'importFromWebhook' },
  integrations: { provider: 'microblog', status: 'connected' },
  posts: { status: 'draft' },
  post_schedules: { status: 'scheduled' },
  publish_attempts: { state: 'pending' },
  credit_transactions: { kind: 'grant' },
  oauth_states: { provider: 'microblog', app_source: 'operator' },
  oauth_apps: { network: 'microblog' },
  suppression_entries: { kind: 'email', reason: 'erasure' },
  audit_events: { actor_kind: 'workspace' },
};

let owner: Database;
let app: Database;
let dbName: string;
let dbUrl: string;
let a: string;
let b: string;
let tables: string[];

/** The tables of the migrated schema with a `workspace_id` column. */
async function workspaceOwnedTables(db: Database): Promise<string[]> {
  const r = await db.pool.query<{ table_name: string }>(
    `select c.table_name from information_schema.columns c
       join information_schema.tables t using (table_schema, table_name)
      where c.table_schema = 'public' and c.column_name = 'workspace_id' and t.table_type = 'BASE TABLE'
      order by 1`,
  );
  return r.rows.map((x) => x.table_name);
}

/** Inserts one row of `workspaceId` into `table`: defaults where there are, else a value of the column's type. */
async function insertRow(table: string, workspaceId: string): Promise<void> {
  const cols = await owner.pool.query<{ column_name: string; data_type: string; udt_name: string; is_nullable: string; column_default: string | null; is_generated: string }>(
    `select column_name, data_type, udt_name, is_nullable, column_default, is_generated from information_schema.columns
      where table_schema = 'public' and table_name = $1 order by ordinal_position`,
    [table],
  );
  const names: string[] = [];
  const values: string[] = [];
  const params: unknown[] = [];
  for (const c of cols.rows) {
    if (c.is_generated === 'ALWAYS') continue;
    let v: string | undefined;
    if (c.column_name === 'workspace_id') {
      params.push(workspaceId);
      v = `$${params.length}::uuid`;
    } else if (VALID[table]?.[c.column_name] !== undefined) {
      params.push(VALID[table]![c.column_name]);
      v = `$${params.length}`;
    } else if (c.column_default !== null || c.is_nullable === 'YES') continue;
    else if (c.data_type === 'ARRAY') v = `'{}'`;
    else if (c.udt_name === 'uuid') v = 'gen_random_uuid()';
    else if (c.udt_name.startsWith('timestamp')) v = 'now()';
    else if (c.udt_name === 'date') v = 'current_date';
    else if (c.udt_name === 'jsonb' || c.udt_name === 'json') v = `'{}'`;
    else if (c.udt_name === 'bool') v = 'false';
    else if (c.udt_name === 'bytea') v = `'\\x00'::bytea`;
    else if (/^(int|numeric|float)/.test(c.udt_name)) v = '1';
    else v = `'${table}-' || gen_random_uuid()`;
    names.push(c.column_name);
    values.push(`${v}::${c.udt_name === '_text' ? 'text[]' : c.data_type === 'ARRAY' ? `${c.udt_name.slice(1)}[]` : c.udt_name}`);
  }
  // Parent rows other than the workspace (a post's integration, a schedule's post) are not what
  // this test is about: FK triggers are off for this one transaction; CHECK constraints still apply.
  await inTransaction(await owner.pool.connect(), async (client) => {
    try {
      await client.query('set local session_replication_role = replica');
      await client.query(`insert into ${table} (${names.join(', ')}) values (${values.join(', ')})`, params);
    } finally {
      client.release();
    }
  });
}

beforeAll(async () => {
  const clone = await cloneTestDatabase('rls');
  dbName = clone.name;
  dbUrl = clone.url;
  owner = await openDatabase(clone.url, { max: 2 });
  app = await openDatabase(clone.url, { max: 2, tenancy: 'enforced' });
  const keyring = keyringOf(loadConfig());
  a = (await createWorkspace(owner.orm.em, { name: 'A', keyring })).workspaceId;
  b = (await createWorkspace(owner.orm.em, { name: 'B', keyring })).workspaceId;
  tables = await workspaceOwnedTables(owner);
  for (const table of tables) {
    for (const ws of [a, b]) {
      const has = await owner.pool.query(`select 1 from ${table} where workspace_id = $1 limit 1`, [ws]);
      if (!has.rowCount) await insertRow(table, ws);
    }
  }
}, 120_000);
afterAll(async () => {
  await app?.close();
  await owner?.close();
  if (dbName) await dropTestDatabase(dbName);
});

/** Rows of `table` per workspace, as the owner sees them (the truth the scoped statements are checked against). */
async function countsOf(table: string): Promise<{ a: number; b: number }> {
  const r = await owner.pool.query<{ a: number; b: number }>(
    `select count(*) filter (where workspace_id = $1)::int as a, count(*) filter (where workspace_id = $2)::int as b from ${table}`,
    [a, b],
  );
  return r.rows[0]!;
}

/** Runs `fn` on a client of the enforced pool in A's scope, in a transaction that is rolled back. */
async function inA<T>(fn: (client: import('pg').PoolClient) => Promise<T>): Promise<T> {
  return inWorkspaceScope(a, async () => {
    const client = await app.pool.connect();
    try {
      await client.query('begin');
      return await fn(client);
    } finally {
      await client.query('rollback').catch(() => {});
      client.release();
    }
  });
}

it('enables, forces and has both policies on every table with a workspace_id (a new table calls app_enable_workspace_rls)', async () => {
  expect(tables.length).toBeGreaterThan(15);
  const r = await owner.pool.query<{ table: string; enabled: boolean; forced: boolean; policies: string[] | null }>(
    `select c.relname as table, c.relrowsecurity as enabled, c.relforcerowsecurity as forced,
            (select array_agg(p.polname::text order by p.polname) from pg_policy p where p.polrelid = c.oid) as policies
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relname = any($1::text[])`,
    [tables],
  );
  const missing = r.rows.filter((t) => !t.enabled || !t.forced || String(t.policies) !== 'all_workspaces,workspace_isolation').map((t) => t.table);
  expect(missing, 'tables with a workspace_id but no row-level security: add `select app_enable_workspace_rls(\'<table>\')` to the migration').toEqual([]);
  expect(r.rows.length).toBe(tables.length);
});

it('the pool runs as app_tenant, neither a superuser nor an owner, so it cannot bypass the policies', async () => {
  const r = await inWorkspaceScope(a, () =>
    app.pool.query<{ role: string; superuser: boolean; bypass: boolean; owns: number }>(
      `select current_user as role, r.rolsuper as superuser, r.rolbypassrls as bypass,
              (select count(*)::int from pg_class c where pg_has_role(current_user, c.relowner, 'member') and c.relkind = 'r' and c.relnamespace = 'public'::regnamespace) as owns
         from pg_roles r where r.rolname = current_user`,
    ),
  );
  expect(r.rows[0]).toEqual({ role: 'app_tenant', superuser: false, bypass: false, owns: 0 });
});

describe('a statement without a workspace predicate, in workspace A’s scope', () => {
  it('SELECT sees A’s rows and none of B’s, in every workspace-owned table', async () => {
    const wrong: string[] = [];
    for (const table of tables) {
      const truth = await countsOf(table);
      expect(truth.a, table).toBeGreaterThan(0);
      expect(truth.b, table).toBeGreaterThan(0);
      const seen = await inWorkspaceScope(a, () => app.pool.query<{ workspace_id: string }>(`select workspace_id from ${table}`));
      if (seen.rows.length !== truth.a || seen.rows.some((r) => r.workspace_id !== a)) wrong.push(`${table}: ${seen.rows.length} rows, A has ${truth.a}`);
    }
    expect(wrong).toEqual([]);
  });

  it('UPDATE and DELETE touch none of B’s rows', async () => {
    const wrong: string[] = [];
    // The audit trail's tables refuse UPDATE and DELETE to every role (test/integration/audit.test.ts).
    for (const table of tables.filter((t) => !APPEND_ONLY.has(t))) {
      const truth = await countsOf(table);
      const updated = await inA((c) => c.query(`update ${table} set workspace_id = workspace_id`));
      if (updated.rowCount !== truth.a) wrong.push(`${table}: update touched ${updated.rowCount}, A has ${truth.a}`);
      const updatedB = await inA((c) => c.query(`update ${table} set workspace_id = workspace_id where workspace_id = $1`, [b]));
      if (updatedB.rowCount !== 0) wrong.push(`${table}: update of B's rows touched ${updatedB.rowCount}`);
      // Moving an A row to B is refused by the policy's WITH CHECK.
      await inA((c) => c.query(`update ${table} set workspace_id = $1`, [b])).then(
        () => wrong.push(`${table}: an A row was moved to B`),
        (e: Error) => expect(e.message, table).toMatch(/row-level security/),
      );
      const deleted = await inA((c) => c.query(`delete from ${table} where workspace_id = $1`, [b]));
      if (deleted.rowCount !== 0) wrong.push(`${table}: delete of B's rows removed ${deleted.rowCount}`);
      const deletedAll = await inA((c) => c.query(`delete from ${table}`));
      if (deletedAll.rowCount !== truth.a) wrong.push(`${table}: unqualified delete removed ${deletedAll.rowCount}, A has ${truth.a}`);
    }
    expect(wrong).toEqual([]);
  });

  it('INSERT of a B row is refused; the same row for A is accepted', async () => {
    const wrong: string[] = [];
    for (const table of tables) {
      // A copy of one of A's rows (its own new id where it has one), with the workspace replaced.
      const copyOf = (ws: string) =>
        `insert into ${table} select (jsonb_populate_record(null::${table}, to_jsonb(t) || jsonb_build_object('workspace_id', '${ws}'::uuid)
           || case when to_jsonb(t) ? 'id' and jsonb_typeof(to_jsonb(t) -> 'id') = 'string' then jsonb_build_object('id', gen_random_uuid()) else '{}' end)).*
           from ${table} t limit 1`;
      const err = await inA((c) => c.query(copyOf(b))).then(() => null, (e: Error) => e);
      if (!err || !/row-level security/.test(err.message)) wrong.push(`${table}: a B row was ${err ? `refused by: ${err.message}` : 'inserted'}`);
    }
    expect(wrong).toEqual([]);
    // The refusal is the policy's, not the statement's: for A, the same statement goes through
    // (on a table without other unique columns).
    const ok = await inA((c) =>
      c.query(`insert into custom_field_definitions select (jsonb_populate_record(null::custom_field_definitions, to_jsonb(t) || jsonb_build_object('id', gen_random_uuid(), 'label', 'copy'))).* from custom_field_definitions t limit 1`),
    );
    expect(ok.rowCount).toBe(1);
  });

  it('COPY … TO sees none of B’s rows; COPY … FROM is refused (PostgreSQL runs no COPY FROM under row-level security)', async () => {
    const wrong: string[] = [];
    for (const table of tables) {
      const truth = await countsOf(table);
      let text = '';
      await inA(async (c) => {
        await pipeline(c.query(copyTo(`copy (select workspace_id from ${table}) to stdout`)), new Writable({ write: (chunk, _e, done) => ((text += chunk), done()) }));
        let tableText = '';
        await pipeline(c.query(copyTo(`copy ${table} to stdout`)), new Writable({ write: (chunk, _e, done) => ((tableText += chunk), done()) }));
        if (tableText.includes(b)) wrong.push(`${table}: COPY TO wrote a B row`);
      });
      const lines = text.split('\n').filter(Boolean);
      if (lines.length !== truth.a || lines.some((l) => l !== a)) wrong.push(`${table}: COPY of a query gave ${lines.length} rows, A has ${truth.a}`);
      const err = await inA((c) => pipeline(Readable.from([]), c.query(copyFrom(`copy ${table} (workspace_id) from stdin`)))).then(() => null, (e: Error) => e);
      if (!err || !/row-level security/.test(err.message)) wrong.push(`${table}: COPY FROM was ${err ? `refused by: ${err.message}` : 'accepted'}`);
    }
    expect(wrong).toEqual([]);
  });
});

it('outside any scope the enforced pool sees no workspace rows (fail-closed); withoutTenancy sees both', async () => {
  for (const table of tables) {
    const none = await app.pool.query(`select 1 from ${table}`);
    expect(none.rowCount, table).toBe(0);
    const truth = await countsOf(table);
    const all = await withoutTenancy('the test compares with the owner’s count', () => app.pool.query(`select 1 from ${table}`));
    expect(all.rowCount, table).toBe(truth.a + truth.b);
  }
});

it('a connection reused for another scope switches with it (the session setting follows the checkout)', async () => {
  // One connection: every checkout gets the same client, so a stale setting would show here.
  const single = await openDatabase(dbUrl, { max: 1, tenancy: 'enforced' });
  const pool = single.pool;
  try {
    const seen = async () => (await pool.query<{ w: string }>('select distinct workspace_id::text as w from api_keys')).rows.map((r) => r.w).sort();
    expect(await inWorkspaceScope(a, seen)).toEqual([a]);
    expect(await inWorkspaceScope(b, seen)).toEqual([b]);
    expect(await seen()).toEqual([]);
    expect(await withoutTenancy('test', seen)).toEqual([a, b].sort());
    expect(await inWorkspaceScope(a, seen)).toEqual([a]);
  } finally {
    await single.close();
  }
});

it('workspace_id defaults to the scope’s workspace on every table; outside a workspace an insert naming none is refused', async () => {
  const wrong: string[] = [];
  const defaults = await owner.pool.query<{ table_name: string; column_default: string | null; is_nullable: string }>(
    `select table_name, column_default, is_nullable from information_schema.columns
      where table_schema = 'public' and column_name = 'workspace_id' and table_name = any($1::text[])`,
    [tables],
  );
  for (const d of defaults.rows) {
    if (!d.column_default?.includes(`current_setting('app.workspace_id'`) || d.is_nullable !== 'NO') wrong.push(`${d.table_name}: default ${d.column_default}, nullable ${d.is_nullable}`);
  }
  expect(wrong).toEqual([]);
  expect(defaults.rows.length).toBe(tables.length);
  // A real insert that names no workspace: in A's scope it is A's; outside any workspace it is
  // refused rather than guessed (no scope: the policy, as for any row; withoutTenancy: NOT NULL).
  const insert = (c: Pick<import('pg').Pool, 'query'>) =>
    c.query<{ workspace_id: string }>(`insert into custom_field_definitions (id, label, type) values (gen_random_uuid(), $1, 'string') returning workspace_id`, [`default-${Math.random()}`]);
  expect((await inA(insert)).rows[0]!.workspace_id).toBe(a);
  await expect(insert(app.pool)).rejects.toThrow(/row-level security/);
  await expect(withoutTenancy('the test inserts outside a workspace', () => insert(app.pool))).rejects.toThrow(/null value in column "workspace_id"/);
});
