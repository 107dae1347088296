/**
 * A dependency that accepts connections and then says nothing (a stalled PostgreSQL) cannot
 * hang the process: opening the database gives up after the pool's connection timeout.
 */
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/orm.js';

const sockets = new Set<Socket>();
const stalled = createServer((s) => {
  sockets.add(s); // accepted, never answered
  s.on('error', () => {});
});
let port = 0;
beforeAll(async () => {
  await new Promise<void>((r) => stalled.listen(0, '127.0.0.1', r));
  port = (stalled.address() as AddressInfo).port;
});
afterAll(() => {
  for (const s of sockets) s.destroy();
  stalled.close();
});

describe('a stalled database', () => {
  it('fails a connection after connectionTimeoutMs instead of waiting for ever', async () => {
    const started = Date.now();
    const attempt = (async () => {
      const db = await openDatabase(`postgres://app:x@127.0.0.1:${port}/app`, { connectionTimeoutMs: 500 });
      try {
        await db.pool.query('select 1');
      } finally {
        await db.close();
      }
    })();
    await expect(attempt).rejects.toThrow(/timeout/i);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 15_000);
});
