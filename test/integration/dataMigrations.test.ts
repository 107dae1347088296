/**
 * Migrations that change how existing rows are stored, run over rows written before them: each
 * test migrates a database of its own up to the migration before, writes rows as the code of
 * that time did, migrates the rest of the way and checks what the rows became.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import { adminUrl } from '../globalSetup.js';
import { dropTestDatabase } from '../harness.js';
import { loadConfig } from '../../domain/config.js';
import { openOrm, type MikroORM } from '../../db/orm.js';

const opened: Array<{ name: string; orm: MikroORM; pool: pg.Pool }> = [];

/** A database of this test's own, migrated up to (and including) `to`. */
async function databaseAt(to: string): Promise<{ orm: MikroORM; pool: pg.Pool }> {
  const name = `t_${process.env.TEST_RUN_ID}_mig${randomBytes(4).toString('hex')}`;
  const base = loadConfig().databaseUrl;
  const admin = new pg.Client({ connectionString: adminUrl(base) });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const orm = await openOrm(adminUrl(base, name));
  const pool = new pg.Pool({ connectionString: adminUrl(base, name), max: 2 });
  opened.push({ name, orm, pool });
  await orm.migrator.up({ to });
  return { orm, pool };
}

afterEach(async () => {
  for (const { name, orm, pool } of opened.splice(0)) {
    await pool.end();
    await orm.close(true);
    await dropTestDatabase(name);
  }
});

async function insertWorkspace(pool: pg.Pool): Promise<string> {
  const id = uuidv7();
  await pool.query(`insert into workspaces (id, name, plan, webhook_secret) values ($1, 'before', 'free', 'x')`, [id]);
  return id;
}

describe('Migration20261126100000_idempotency_body_text', () => {
  it('keeps each stored body as the bytes its replays sent before it (compact, jsonb key order)', async () => {
    const { orm, pool } = await databaseAt('Migration20261126050000_people_country_id');
    const ws = await insertWorkspace(pool);
    const body = { message: 'Accepted', jobId: 'j-1', nested: { zz: [1, 2.5, 'a"b'], a: null } };
    const insert = (key: string, created: string, value: unknown) =>
      pool.query(
        `insert into idempotency_records (workspace_id, idempotency_key, method, path, request_hash, status, response_body, response_headers, created_at, completed_at)
          values ($1, $2, 'POST', '/x', 'h', $3, $4::jsonb, '{}', ${created}, now())`,
        [ws, key, value === null ? 200 : 202, value === null ? null : JSON.stringify(value)],
      );
    await insert('recent', 'now()', body);
    await insert('old', `now() - interval '3 days'`, body);
    await insert('empty', 'now()', null);
    // What a replay sent before: node-postgres parses the jsonb, Koa serialises the value.
    const before = JSON.stringify((await pool.query(`select response_body from idempotency_records where idempotency_key = 'recent'`)).rows[0].response_body);
    expect(before).not.toBe(JSON.stringify(body)); // jsonb reordered the keys: why the column changes

    await orm.migrator.up();
    const rows = new Map(
      (await pool.query<{ idempotency_key: string; response_body: string | null }>(`select idempotency_key, response_body from idempotency_records`)).rows.map((r) => [r.idempotency_key, r.response_body]),
    );
    expect(rows.get('recent')).toBe(before);
    // Past the 24 h a record counts for: never replayed again, the plain cast (same value).
    expect(JSON.parse(rows.get('old')!)).toEqual(body);
    expect(rows.get('empty')).toBeNull();
    const type = await pool.query(`select data_type from information_schema.columns where table_name = 'idempotency_records' and column_name = 'response_body'`);
    expect(type.rows[0].data_type).toBe('text');
  });
});

describe('Migration20261126110000_credit_ledger_seq', () => {
  it('numbers existing ledger rows in the order they were listed (id); new rows follow them, stamped at insert', async () => {
    const { orm, pool } = await databaseAt('Migration20261126100000_idempotency_body_text');
    const a = await insertWorkspace(pool);
    const b = await insertWorkspace(pool);
    const ids = Array.from({ length: 6 }, () => uuidv7());
    // Inserted out of id order, two workspaces interleaved.
    for (const i of [3, 0, 5, 1, 4, 2]) {
      await pool.query(
        `insert into credit_transactions (id, workspace_id, amount, balance_after, reason, idempotency_key, kind) values ($1, $2, -1, 0, 'r', $3, 'debit')`,
        [ids[i], i % 2 ? b : a, `k-${i}`],
      );
    }
    await orm.migrator.up();
    const rows = (await pool.query<{ id: string; seq: string }>(`select id, seq from credit_transactions order by seq`)).rows;
    expect(rows.map((r) => r.id)).toEqual(ids);
    expect(rows.map((r) => Number(r.seq))).toEqual([1, 2, 3, 4, 5, 6]);
    const next = await pool.query<{ seq: string; created_at: Date }>(
      `insert into credit_transactions (id, workspace_id, amount, balance_after, reason, idempotency_key, kind) values ($1, $2, 1, 1, 'r', 'k-new', 'grant') returning seq, created_at`,
      [uuidv7(), a],
    );
    expect(Number(next.rows[0]!.seq)).toBe(7);
    const defaults = await pool.query(`select column_name, column_default, is_nullable from information_schema.columns where table_name = 'credit_transactions' and column_name in ('seq', 'created_at') order by column_name`);
    expect(defaults.rows).toEqual([
      { column_name: 'created_at', column_default: 'clock_timestamp()', is_nullable: 'NO' },
      { column_name: 'seq', column_default: "nextval('credit_transactions_seq_seq'::regclass)", is_nullable: 'NO' },
    ]);
  });
});
