/**
 * PostgreSQL's own log holds no personal data and no ERROR line from normal operation: an
 * Idempotency-Key replay and concurrent upserts of one person (expected conflicts) are resolved
 * without a failing statement, so no unique-violation detail (which quotes the key's values, a
 * profile URL among them) reaches the server log. Read from the embedded stack's log file.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { stackLayout } from '../../scripts/stack.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
});
afterAll(() => app?.close());

const logFile = () => join(stackLayout().logs, 'postgres.log');
/** What PostgreSQL wrote to its log while `fn` ran (other test files write there too: callers filter on their own values). */
async function logDuring(fn: () => Promise<void>): Promise<string> {
  const from = statSync(logFile()).size;
  await fn();
  await new Promise((r) => setTimeout(r, 300)); // the logger writes asynchronously
  return readFileSync(logFile()).subarray(from).toString('utf8');
}

describe('PostgreSQL server log', () => {
  it.skipIf(process.env.DATABASE_URL !== undefined || !existsSync(logFile()))('gets no ERROR line and no profile URL from an Idempotency-Key replay or concurrent upserts of one person', async () => {
    const ws = await app.createWorkspace();
    const source = (await app.http('POST', '/sources', { apiKey: ws.apiKey, body: { sourceType: 'pronetInbound', sourceIdentifier: `https://www.pronet.com/in/log-owner-${randomBytes(3).toString('hex')}`, sourceMeta: {} } })).body.data.id;
    const slug = `log-person-${randomBytes(4).toString('hex')}`;
    const key = `idem-${randomBytes(4).toString('hex')}`;
    const body = { 'contact.firstName': 'Log', 'contact.pronet': `https://www.pronet.com/in/${slug}/` };
    const log = await logDuring(async () => {
      const first = await app.http('POST', `/contacts/${source}`, { apiKey: ws.apiKey, body, headers: { 'Idempotency-Key': key } });
      expect(first.status, JSON.stringify(first.body)).toBe(200);
      for (let i = 0; i < 3; i++) {
        const replay = await app.http('POST', `/contacts/${source}`, { apiKey: ws.apiKey, body, headers: { 'Idempotency-Key': key } });
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
      }
      // The same new person sent at once, without a key: one contact, expected conflicts only.
      const other = { ...body, 'contact.pronet': `https://www.pronet.com/in/${slug}-2/` };
      const together = await Promise.all(Array.from({ length: 6 }, () => app.http('POST', `/contacts/${source}`, { apiKey: ws.apiKey, body: other })));
      expect(together.map((r) => r.status)).toEqual(Array(6).fill(200));
    });
    const ours = log.split('\n').filter((l) => l.includes(slug) || l.includes(key) || /idempotency_records|contacts_.*pronet|duplicate key/.test(l));
    expect(ours, ours.join('\n')).toEqual([]);
  });
});
