/**
 * `statement_timeout` on the API's database pools: a request whose statement runs past it gets
 * a 422 `query_too_expensive` (never a 500, never a hung request), and the pool keeps working.
 * Errors of a store that is away (database, Temporal) are told apart: the API answers them 503.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { startTestApp, type TestApp } from '../harness.js';
import { Client, Connection } from '@temporalio/client';
import { isDatabaseUnavailable, isStatementTimeout } from '../../db/pgErrors.js';
import { isTemporalUnavailable } from '../../db/connect.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none', env: { API_STATEMENT_TIMEOUT_MS: '700' } });
});
afterAll(() => app?.close());

it('sets the API timeout on the pg pool and on the ORM pool', async () => {
  // app.pool is the harness's owner pool; the API's own pool is deps.pool.
  expect((await app.deps.pool.query('show statement_timeout')).rows[0].statement_timeout).toBe('700ms');
  const orm = await app.deps.orm.em.fork().getConnection().execute<{ statement_timeout: string }[]>('show statement_timeout');
  expect(orm[0]!.statement_timeout).toBe('700ms');
});

it('answers 422 query_too_expensive when a statement runs past it, and serves the next request', async () => {
  const ws = await app.createWorkspace({ credits: 7 });
  // Another session holds a lock the balance query waits for, longer than the timeout.
  const blocker = new pg.Client({ connectionString: app.config.databaseUrl });
  await blocker.connect();
  try {
    await blocker.query('begin');
    await blocker.query('lock table credit_accounts in access exclusive mode');
    const started = Date.now();
    const res = await app.http('GET', '/credits/balance', { apiKey: ws.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.error.code).toBe('query_too_expensive');
    expect(Date.now() - started).toBeLessThan(5000);
    await blocker.query('rollback');
  } finally {
    await blocker.end();
  }
  const after = await app.http('GET', '/credits/balance', { apiKey: ws.apiKey });
  expect(after.status).toBe(200);
  expect(after.body.data.balance).toBe(7);
});

it('tells a statement timeout and a lost connection from other database errors', async () => {
  // The victims are the API's own pool (deps.pool, with its error listeners); the owner pool
  // (app.pool) cancels and terminates them, which the tenant role may not do.
  const timeout = await app.deps.pool.query('set local statement_timeout = 1; select pg_sleep(1)').catch((e) => e);
  expect(isStatementTimeout(timeout)).toBe(true);
  expect(isDatabaseUnavailable(timeout)).toBe(false);
  const cancelled = await (async () => {
    const c = await app.deps.pool.connect();
    try {
      const pid = (await c.query('select pg_backend_pid() as pid')).rows[0].pid;
      const q = c.query('select pg_sleep(5)').catch((e) => e);
      await new Promise((r) => setTimeout(r, 200));
      await app.pool.query('select pg_cancel_backend($1)', [pid]);
      return await q;
    } finally {
      c.release();
    }
  })();
  expect(cancelled.code).toBe('57014');
  expect(isStatementTimeout(cancelled)).toBe(false);
  const terminated = await (async () => {
    const c = await app.deps.pool.connect();
    const pid = (await c.query('select pg_backend_pid() as pid')).rows[0].pid;
    const q = c.query('select pg_sleep(5)').catch((e) => e);
    await new Promise((r) => setTimeout(r, 200));
    await app.pool.query('select pg_terminate_backend($1)', [pid]);
    const err = await q;
    // The dead client stays checked out across its 'error' event without ending the process.
    await new Promise((r) => setTimeout(r, 100));
    c.release(err);
    return err;
  })();
  expect(isDatabaseUnavailable(terminated)).toBe(true);
  expect(isDatabaseUnavailable(new Error('duplicate key'))).toBe(false);
  expect((await app.deps.pool.query('select 1 as one')).rows[0].one).toBe(1);
});

it('tells an unreachable Temporal server from other errors', async () => {
  const connection = Connection.lazy({ address: '127.0.0.1:1' });
  const client = new Client({ connection });
  try {
    const err = await connection.withDeadline(Date.now() + 500, () => client.workflow.getHandle('nowhere').describe()).catch((e) => e);
    expect(isTemporalUnavailable(err), String(err)).toBe(true);
  } finally {
    await connection.close().catch(() => {});
  }
  // A workflow that does not exist is an answer, not an outage.
  const missing = await app.deps.temporal.workflow.getHandle(`missing-${Date.now()}`).describe().catch((e) => e);
  expect(isTemporalUnavailable(missing)).toBe(false);
});
