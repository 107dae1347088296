/**
 * A dependency that accepts connections and then says nothing (a stalled PostgreSQL or object
 * store) cannot hang the process: opening the database gives up after the pool's connection
 * timeout; an object-store request gives up after S3_REQUEST_TIMEOUT_MS without an answer.
 */
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/orm.js';
import { loadConfig } from '../../domain/config.js';
import { createObjectStore } from '../../infra/objectStore.js';

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

describe('a stalled object store', () => {
  const store = () => createObjectStore(loadConfig({ S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_ACCESS_KEY: 'app', S3_SECRET_KEY: 'secret', S3_REQUEST_TIMEOUT_MS: '500' }).s3);

  it('fails the readiness ping after S3_REQUEST_TIMEOUT_MS instead of hanging /readyz', async () => {
    const started = Date.now();
    await expect(store().ping()).rejects.toThrow(/did not answer within 500 ms/);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 15_000);

  it('fails an upload after S3_REQUEST_TIMEOUT_MS instead of hanging the request', async () => {
    const s = store();
    const started = Date.now();
    await expect(s.client.putObject(s.bucket, 'w1/stalled.png', Buffer.alloc(1024))).rejects.toThrow(/did not answer within 500 ms/);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 15_000);

  it('defaults to a 10 s bound', () => {
    expect(loadConfig({}).s3.requestTimeoutMs).toBe(10_000);
  });
});
