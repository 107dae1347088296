/**
 * Issue 31 item 3: the per-key rate limit holds whatever the number of API replicas, as they come
 * and go, with no database write per request. Replicas announce themselves (api_replicas) and each
 * admits ceil(limit / N) of the N it counts. Load runs on API A; API B starts on the same database
 * in the middle of it; then both take load; then B stops.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pino } from 'pino';
import { startApiServer, type ApiServer } from '../../api/server.js';
import { startTestApp, type TestApp } from '../harness.js';

const LIMIT = 20;
const HEARTBEAT_MS = 250;
let a: TestApp;
let b: ApiServer | undefined;
beforeAll(async () => {
  a = await startTestApp({ workerMode: 'none', rateLimitPerMinute: LIMIT, env: { API_REPLICA_HEARTBEAT_MS: String(HEARTBEAT_MS) } });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('a second API started under load: both share the key limit, the total stays within the stated bound; replicas, not requests, have rows', async () => {
  const ws = await a.createWorkspace();
  const statuses = { a: [] as number[], b: [] as number[] };
  const hit = async (url: string, into: number[]) => into.push((await fetch(`${url}/credits/balance`, { headers: { 'x-api-key': ws.apiKey } })).status);
  const replicaRows = async () => Number((await a.pool.query(`select count(*) from api_replicas`)).rows[0].count);
  expect(await replicaRows()).toBe(1);

  // A alone: its share is the whole limit.
  for (let i = 0; i < 12; i++) await hit(a.url, statuses.a);
  expect(statuses.a).toEqual(Array(12).fill(200));

  // B starts while A takes load.
  let loading = true;
  const loadA = (async () => {
    while (loading) {
      await hit(a.url, statuses.a);
      await sleep(10);
    }
  })();
  b = await startApiServer(a.config, { port: 0, log: pino({ level: 'silent' }) });
  expect(await replicaRows()).toBe(2);
  expect(b.deps.replicas!.count()).toBe(2);
  // Within a heartbeat A counts two replicas too: its share is now ceil(20 / 2) = 10, already spent.
  await sleep(3 * HEARTBEAT_MS);
  expect(a.deps.replicas!.count()).toBe(2);
  const aAdmittedBeforeB = statuses.a.filter((s) => s === 200).length;
  for (let i = 0; i < 15; i++) await hit(b.url, statuses.b);
  await sleep(200);
  loading = false;
  await loadA;

  const admitted = { a: statuses.a.filter((s) => s === 200).length, b: statuses.b.filter((s) => s === 200).length };
  // B admits exactly its share; A admitted nothing once it counted B (it had spent more than 10).
  expect(admitted.b).toBe(Math.ceil(LIMIT / 2));
  expect(admitted.a).toBe(aAdmittedBeforeB);
  // The bound for the window a replica joined in: N × ceil(L / N) + ceil(L / (N + 1)), N = 1.
  expect(admitted.a + admitted.b).toBeLessThanOrEqual(LIMIT + Math.ceil(LIMIT / 2));
  expect(admitted.a).toBeLessThanOrEqual(LIMIT);
  expect(statuses.a.filter((s) => s !== 200 && s !== 429)).toEqual([]);
  expect(statuses.b.filter((s) => s !== 200 && s !== 429)).toEqual([]);

  // B stops cleanly: its row goes, and A counts one replica again at its next beat.
  await b.close();
  b = undefined;
  expect(await replicaRows()).toBe(1);
  await sleep(3 * HEARTBEAT_MS);
  expect(a.deps.replicas!.count()).toBe(1);
  // A's share is the whole limit again: a key whose window opens now gets all of it from A alone.
  const fresh = await a.createWorkspace();
  const freshStatuses: number[] = [];
  for (let i = 0; i < LIMIT + 5; i++) freshStatuses.push((await fetch(`${a.url}/credits/balance`, { headers: { 'x-api-key': fresh.apiKey } })).status);
  expect(freshStatuses.filter((s) => s === 200).length).toBe(LIMIT);
});
