/**
 * An OpenSearch outage (DISCOVERY_ENGINE=opensearch, the engine unreachable: here a closed port)
 * is a 503 `search_unavailable` with Retry-After on every discovery search, charges nothing, and
 * leaves the rest of the API answering — not a 500. Needs no OpenSearch.
 */
import { createServer } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { startApiServer, type ApiServer } from '../../api/server.js';

let app: TestApp;
let api: ApiServer;
let apiKey: string;

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
  const discovery = { ...app.config.discovery, engine: 'opensearch' as const, opensearchUrl: `http://127.0.0.1:${await closedPort()}`, indexPrefix: 'outage' };
  api = await startApiServer({ ...app.config, discovery }, { log: pino({ level: 'silent' }), port: 0 });
  apiKey = (await app.createWorkspace({ credits: 1000 })).apiKey;
}, 60_000);

afterAll(async () => {
  await api?.close();
  await app?.close();
});

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(api.url + path, { method, headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
};

describe('OpenSearch unreachable', () => {
  it.each([
    ['/discovery-search/find-contacts-v2', { conditions: [{ field: 'dsContact.member_seniority', operator: '==', value: 'VP' }] }],
    ['/discovery-search/find-companies-v2', {}],
    ['/discovery-search/find-verified-companies', { inputFieldMapping: [{ sourceFieldName: 'companyIndustryInclude', userInput: ['Software'] }] }],
    ['/discovery-search/find-verified-contacts', { inputFieldMapping: [{ sourceFieldName: 'numberOfCompaniesToPull', userInput: 3 }] }],
  ])('%s answers 503 search_unavailable with Retry-After and charges nothing', async (path, body) => {
    const res = await call('POST', path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(503);
    expect(res.body.error.code).toBe('search_unavailable');
    expect(Number(res.retryAfter)).toBeGreaterThan(0);
    // the engine's address is the operator's business, not the client's
    expect(res.body.error.message).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/);
    expect((await call('GET', '/credits/balance')).body.data.balance).toBe(1000);
  });
});
