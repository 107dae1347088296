/**
 * `npm start` after an unclean shutdown: PostgreSQL first replays its WAL (35 s for 3.7 GB of it
 * on this machine) and answers 57P03 "the database system is not yet accepting connections"
 * meanwhile. The stack used to give up after 10 s, so `npm start` failed where waiting would have
 * worked. Here a real server is held in that state for longer (a standby with no primary answers
 * 57P03 until it is promoted: the embedded server's `wal_level=minimal` rules standby out, so this
 * test starts its own), then promoted: the stack's database check must wait for it.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import pg from 'pg';
import { ensureDatabase, pgBinaries, pgUser } from '../../scripts/stack.js';
import { freePort } from '../harness.js';

const root = mkdtempSync(join(tmpdir(), 'stack-recovery-'));
const data = join(root, 'data');
const ids = pgUser();
let pgCtl = '';
const ctl = (...args: string[]) => spawnSync(pgCtl, ['-D', data, ...args], { encoding: 'utf8', ...(ids ?? {}) });

afterAll(() => {
  if (pgCtl) ctl('stop', '-m', 'immediate');
  rmSync(root, { recursive: true, force: true });
});

it('waits for a PostgreSQL that is still recovering instead of failing after 10 s', { timeout: 120_000 }, async () => {
  const bin = await pgBinaries();
  pgCtl = join(dirname(bin.postgres), 'pg_ctl');
  mkdirSync(data);
  if (ids) [root, data].forEach((d) => chownSync(d, ids.uid, ids.gid));
  expect(spawnSync(bin.initdb, ['-D', data, '-U', 'app', '-A', 'trust', '-E', 'UTF8', '--locale=C'], { encoding: 'utf8', ...(ids ?? {}) }).status).toBe(0);
  const port = await freePort();
  const opts = `-p ${port} -h 127.0.0.1 -k ${root} -c wal_level=replica -c hot_standby=off -c fsync=off`;
  const log = join(root, 'postgres.log');
  expect(ctl('start', '-w', '-l', log, '-o', opts).status).toBe(0);
  expect(ctl('stop', '-w').status).toBe(0);

  // Restart as a standby with no primary: up, but refusing connections with 57P03.
  writeFileSync(join(data, 'standby.signal'), '');
  if (ids) chownSync(join(data, 'standby.signal'), ids.uid, ids.gid);
  expect(ctl('start', '-l', log, '-o', opts).status).toBe(0);

  const t0 = Date.now();
  let readyAfterMs = -1;
  const ready = ensureDatabase(port, 'unused (trust)', true).then(() => (readyAfterMs = Date.now() - t0));
  ready.catch(() => {});
  const promoteAfterMs = 15_000;
  await new Promise((r) => setTimeout(r, promoteAfterMs));
  expect(readyAfterMs, 'ready while the server still refused connections?').toBe(-1);
  const promote = ctl('promote', '-w');
  expect(promote.status, promote.stderr + readFileSync(log, 'utf8').slice(-1500)).toBe(0);

  await ready; // before: rejected after ~10 s with 57P03
  expect(readyAfterMs).toBeGreaterThanOrEqual(promoteAfterMs);
  const c = new pg.Client({ host: '127.0.0.1', port, user: 'app', database: 'app' });
  await c.connect();
  expect((await c.query('select pg_is_in_recovery() as r')).rows[0].r).toBe(false);
  await c.end();
});
