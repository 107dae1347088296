/**
 * The API edge (issue 11): hostile input is refused in one place before it reaches a handler or
 * the database, with a 4xx naming the JSON pointer, and nothing is written.
 * - prototype keys (`__proto__`, `constructor.prototype`) in JSON bodies;
 * - NUL (and lone surrogates) in any JSON string, query string or path parameter;
 * - authentication and rate limiting before the body parser, plus a per-IP limit for traffic
 *   without a valid key;
 * - a body size limit per route (1 MiB default, bulk routes larger);
 * - 405 with `Allow` for methods a known path does not route (TRACE, QUERY …);
 * - a PostgreSQL data exception (SQLSTATE class 22) that slips through is a 400 `invalid_value`.
 */
import { request as httpRequest } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../harness.js';
import { createApp } from '../../api/app.js';
import { defineRoute } from '../../api/route.js';
import { Contact } from '../../db/contacts.js';

let app: TestApp;
let key: string;
let workspaceId: string;
let source: string;

const json = { 'content-type': 'application/json' };
const MiB = 1024 * 1024;

async function contactCount(): Promise<number> {
  const r = await app.pool.query<{ n: number }>(`select count(*)::int as n from contacts where workspace_id = $1`, [workspaceId]);
  return r.rows[0]!.n;
}

/** Methods `fetch` refuses to send (TRACE) or may not know (QUERY) go through node:http. */
function rawRequest(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        let parsed: unknown = text;
        if ((res.headers['content-type'] ?? '').includes('json') && text) parsed = JSON.parse(text);
        resolve({ status: res.statusCode!, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
  const ws = await app.createWorkspace();
  key = ws.apiKey;
  workspaceId = ws.workspaceId;
  const res = await app.http('POST', '/sources', { apiKey: key, body: { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/edge-owner', sourceMeta: {} } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  source = res.body.data.id;
});
afterAll(() => app?.close());

describe('prototype keys in JSON bodies', () => {
  it('answers 400 naming the pointer of __proto__ and constructor.prototype, and writes nothing', async () => {
    const before = await contactCount();
    const proto = await app.http('POST', `/contacts/${source}`, { apiKey: key, headers: json, rawBody: '{"contact.firstName":"Proto","__proto__":{"polluted":true}}' });
    expect(proto.status, JSON.stringify(proto.body)).toBe(400);
    expect(proto.body.error.code).toBe('validation_failed');
    expect(proto.body.error.details).toContainEqual({ path: '/__proto__', message: expect.stringMatching(/not allowed/) });

    const ctor = await app.http('POST', `/contacts/${source}/bulk-upsert-contacts`, {
      apiKey: key,
      headers: json,
      rawBody: '{"contactsData":[{"contact.firstName":"Ctor"},{"contact.firstName":"Ctor2","constructor":{"prototype":{"polluted":true}}}]}',
    });
    expect(ctor.status, JSON.stringify(ctor.body)).toBe(400);
    expect(ctor.body.error.code).toBe('validation_failed');
    expect(ctor.body.error.details).toContainEqual({ path: '/contactsData/1/constructor', message: expect.stringMatching(/not allowed/) });

    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await contactCount()).toBe(before);
    const jobs = await app.pool.query(`select count(*)::int as n from jobs where workspace_id = $1`, [workspaceId]);
    expect(jobs.rows[0].n).toBe(0);
  });

  it('answers 400 to nesting deeper than 64 levels (no stack overflow) and 415 to a body that is not JSON', async () => {
    const before = await contactCount();
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const res = await app.http('POST', `/contacts/${source}/bulk-upsert-contacts`, { apiKey: key, headers: json, rawBody: `{"contactsData":[{"contact.firstName":"Deep","contact.customFields":{"x":${deep}}}]}` });
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details[0]).toMatchObject({ message: expect.stringMatching(/deeper than 64/) });
    expect(res.body.error.details[0].path).toMatch(/^\/contactsData\/0\/contact\.customFields\/x(\/0)+$/);

    const form = await app.http('POST', `/contacts/${source}`, { apiKey: key, headers: { 'content-type': 'application/x-www-form-urlencoded' }, rawBody: 'contact.firstName=Form' });
    expect(form.status).toBe(415);
    expect(form.body.error.code).toBe('unsupported_media_type');
    const gzip = await app.http('POST', `/contacts/${source}`, { apiKey: key, headers: { ...json, 'content-encoding': 'gzip' }, rawBody: 'not gzip at all' });
    expect(gzip.status, JSON.stringify(gzip.body)).toBe(415);
    expect(gzip.body.error.code).toBe('unsupported_media_type');
    expect(await contactCount()).toBe(before);
  });

  it('keeps a plain "constructor" key or value as data', async () => {
    const res = await app.http('POST', '/contacts/filter-contacts', { apiKey: key, headers: json, rawBody: '{"fields":["constructor"],"limit":1}' });
    expect(res.status).not.toBe(500);
  });
});

describe('NUL characters', () => {
  it('answers 400 naming the pointer of a NUL in a body value, a body key (any depth), a query string and a path parameter; nothing is written', async () => {
    const before = await contactCount();
    const value = await app.http('POST', `/contacts/${source}`, { apiKey: key, body: { 'contact.firstName': 'Nul\u0000Value' } });
    expect(value.status, JSON.stringify(value.body)).toBe(400);
    expect(value.body.error.code).toBe('validation_failed');
    expect(value.body.error.details).toContainEqual({ path: '/contact.firstName', message: expect.stringMatching(/NUL/) });

    const deepKey = await app.http('POST', `/contacts/${source}/bulk-upsert-contacts`, {
      apiKey: key,
      body: { contactsData: [{ 'contact.firstName': 'Ok' }, { 'contact.firstName': 'Deep', 'contact.customFields': { 'a/b\u0000c': ['x'] } }] },
    });
    expect(deepKey.status, JSON.stringify(deepKey.body)).toBe(400);
    expect(deepKey.body.error.details).toContainEqual({ path: '/contactsData/1/contact.customFields/a~1b\u0000c', message: expect.stringMatching(/NUL/) });

    const surrogate = await app.http('POST', `/contacts/${source}`, { apiKey: key, headers: json, rawBody: '{"contact.firstName":"lone \\ud800 surrogate"}' });
    expect(surrogate.status, JSON.stringify(surrogate.body)).toBe(400);
    expect(surrogate.body.error.details).toContainEqual({ path: '/contact.firstName', message: expect.stringMatching(/Unicode/) });

    const huge = await app.http('POST', `/contacts/${source}`, { apiKey: key, headers: json, rawBody: '{"contact.firstName":"Huge","contact.customFields":{"n":[1, -1e400]}}' });
    expect(huge.status, JSON.stringify(huge.body)).toBe(400);
    expect(huge.body.error.details).toContainEqual({ path: '/contact.customFields/n/1', message: 'is out of range for a number' });

    const query = await app.http('GET', '/credits/transactions?paginationToken=%00abc', { apiKey: key });
    expect(query.status, JSON.stringify(query.body)).toBe(400);
    expect(query.body.error.code).toBe('validation_failed');
    expect(query.body.error.details).toContainEqual({ path: '/query/paginationToken', message: expect.stringMatching(/NUL/) });

    const param = await app.http('POST', `/contacts/${source}%00`, { apiKey: key, body: { 'contact.firstName': 'Param' } });
    expect(param.status, JSON.stringify(param.body)).toBe(400);
    expect(param.body.error.details).toContainEqual({ path: '/params/sourceId', message: expect.stringMatching(/NUL/) });

    expect(await contactCount()).toBe(before);
  });
});

describe('character encoding of JSON bodies and query strings', () => {
  // Found by an outside client: bytes that are not UTF-8 were decoded with U+FFFD in their place
  // and stored (a Latin-1 "René" became "Ren\uFFFD"), and a declared charset was ignored.
  const latin1Rene = Buffer.from('{"firstName":"Ren\xe9"}', 'latin1');
  const segmentCount = async () => (await app.pool.query<{ n: number }>(`select count(*)::int as n from segments where workspace_id = $1`, [workspaceId])).rows[0]!.n;
  let contactId: string;
  const firstName = async () => (await app.http('GET', `/contacts/${contactId}`, { apiKey: key })).body.data.firstName;
  const patchRaw = (body: Buffer | string, contentType: string) =>
    app.http('PATCH', `/contacts/${contactId}`, { apiKey: key, headers: { 'content-type': contentType }, rawBody: body });
  const postSegmentRaw = (body: Buffer | string, contentType = 'application/json') =>
    app.http('POST', '/segments', { apiKey: key, headers: { 'content-type': contentType }, rawBody: body });

  beforeAll(async () => {
    const res = await app.http('POST', `/contacts/${source}`, { apiKey: key, body: { 'contact.firstName': 'Encoding' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    contactId = res.body.data.id;
    // the default segment is created on first use; make it exist before segments are counted
    expect((await app.http('GET', '/segments/search', { apiKey: key })).status).toBe(200);
  });

  it('answers 400 invalid_json naming the byte offset to a body that is not well-formed UTF-8; nothing is written', async () => {
    const segments = await segmentCount();
    const latin = await patchRaw(latin1Rene, 'application/json');
    expect(latin.status, JSON.stringify(latin.body)).toBe(400);
    expect(latin.body.error.code).toBe('invalid_json');
    expect(latin.body.error.message).toMatch(/not valid UTF-8.*byte offset 17\b/);

    for (const bytes of [
      Buffer.from('{"name":"bad \xff\xfe seg"}', 'latin1'),
      Buffer.from('{"name":"overlong \xc0\xaf"}', 'latin1'), // an overlong "/"
      Buffer.from('{"name":"surrogate \xed\xa0\x80"}', 'latin1'), // a UTF-16 surrogate encoded as UTF-8 (CESU)
      Buffer.from('{"name":"cut \xe2\x82"}', 'latin1'), // a three-byte character cut short
      Buffer.from('{"name":"cut at the end"}\xc3', 'latin1'),
    ]) {
      const res = await postSegmentRaw(bytes);
      expect(res.status, `${bytes.toString('hex')} ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error.code).toBe('invalid_json');
      expect(res.body.error.message).toMatch(/not valid UTF-8/);
    }
    // An encoded U+FFFD is a character like any other: the offset is of the first invalid byte after it.
    const afterReplacement = await postSegmentRaw(Buffer.concat([Buffer.from('{"name":"\u{fffd} then '), Buffer.from([0xff]), Buffer.from('"}')]));
    expect(afterReplacement.status).toBe(400);
    expect(afterReplacement.body.error.message).toMatch(/byte offset 18\b/); // 9 + 3 (EF BF BD) + 6
    // A declared UTF-8 charset does not make the bytes UTF-8.
    const declared = await postSegmentRaw(Buffer.from('{"name":"bad \xff seg"}', 'latin1'), 'application/json; charset="UTF-8"');
    expect(declared.status).toBe(400);
    expect(declared.body.error.code).toBe('invalid_json');

    expect(await firstName()).toBe('Encoding');
    expect(await segmentCount()).toBe(segments);
  });

  it('answers 415 unsupported_media_type naming a declared charset other than UTF-8; nothing is written', async () => {
    const segments = await segmentCount();
    const latin = await patchRaw(latin1Rene, 'application/json; charset=iso-8859-1');
    expect(latin.status, JSON.stringify(latin.body)).toBe(415);
    expect(latin.body.error.code).toBe('unsupported_media_type');
    expect(latin.body.error.message).toMatch(/iso-8859-1/);

    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"name":"UTF-16 segment"}', 'utf16le')]);
    for (const contentType of ['application/json; charset=utf-16', 'application/json;charset="UTF-16"', 'application/json; Charset=UTF-16LE']) {
      const res = await postSegmentRaw(utf16, contentType);
      expect(res.status, `${contentType} ${JSON.stringify(res.body)}`).toBe(415);
      expect(res.body.error.code).toBe('unsupported_media_type');
      expect(res.body.error.message.toLowerCase()).toMatch(/utf-16/);
    }
    // Even a body whose bytes happen to be ASCII: the declared charset is what is refused.
    const ascii = await postSegmentRaw('{"name":"ascii"}', 'application/json; charset=windows-1252');
    expect(ascii.status).toBe(415);
    expect(ascii.body.error.message).toMatch(/windows-1252/);

    expect(await firstName()).toBe('Encoding');
    expect(await segmentCount()).toBe(segments);
  });

  it('accepts UTF-8, declared in any spelling or not at all, with or without a BOM', async () => {
    const rene = Buffer.from('{"firstName":"René"}', 'utf8');
    for (const contentType of ['application/json', 'application/json; charset=utf-8', 'application/json; charset="UTF-8"', 'application/json;charset=utf8']) {
      const res = await patchRaw(rene, contentType);
      expect(res.status, `${contentType} ${JSON.stringify(res.body)}`).toBe(200);
      expect(await firstName()).toBe('René');
      expect((await patchRaw('{"firstName":"Encoding"}', 'application/json')).status).toBe(200);
    }
    const bom = await patchRaw(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), rene]), 'application/json; charset=utf-8');
    expect(bom.status, JSON.stringify(bom.body)).toBe(200);
    expect(await firstName()).toBe('René');
    const replacement = await postSegmentRaw(Buffer.from('{"name":"kept \u{fffd} as sent"}', 'utf8'));
    expect(replacement.status, JSON.stringify(replacement.body)).toBe(200);
    expect(replacement.body.data.attributes.name).toBe('kept \u{fffd} as sent');
  });

  // Found by an outside probe: `Content-Encoding: IDENTITY` (content codings are case-insensitive,
  // RFC 9110 §8.4.1) passed the API's own check and was then refused by the body reader with
  // 415 "Unsupported Content-Encoding: IDENTITY".
  it('accepts Content-Encoding identity in any case, and still refuses a compressed body with 415', async () => {
    for (const encoding of ['identity', 'IDENTITY', 'Identity', ' identity ']) {
      const res = await app.http('PATCH', `/contacts/${contactId}`, { apiKey: key, headers: { ...json, 'content-encoding': encoding }, rawBody: '{"firstName":"Coded"}' });
      expect(res.status, `${encoding} ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body.data.firstName).toBe('Coded');
      expect((await patchRaw('{"firstName":"Encoding"}', 'application/json')).status).toBe(200);
    }
    const gzip = await app.http('PATCH', `/contacts/${contactId}`, { apiKey: key, headers: { ...json, 'content-encoding': 'GZIP' }, rawBody: '{"firstName":"Coded"}' });
    expect(gzip.status, JSON.stringify(gzip.body)).toBe(415);
    expect(gzip.body.error).toMatchObject({ code: 'unsupported_media_type', message: expect.stringMatching(/Content-Encoding gzip is not supported/) });
    expect(await firstName()).toBe('Encoding');
  });

  it('answers 400 naming /query/<name> to a percent-encoded query parameter that is not UTF-8', async () => {
    const bad = await app.http('GET', '/segments/search?q=%FF', { apiKey: key });
    expect(bad.status, JSON.stringify(bad.body)).toBe(400);
    expect(bad.body.error.code).toBe('validation_failed');
    expect(bad.body.error.details).toContainEqual({ path: '/query/q', message: expect.stringMatching(/not valid UTF-8/) });
    const latin = await app.http('GET', '/segments/search?limit=5&q=Ren%E9', { apiKey: key });
    expect(latin.status).toBe(400);
    expect(latin.body.error.details).toContainEqual({ path: '/query/q', message: expect.stringMatching(/not valid UTF-8/) });
    // a name that is not UTF-8 is named too (as far as it can be)
    const name = await app.http('GET', '/segments/search?x%FF=1', { apiKey: key });
    expect(name.status).toBe(400);
    expect(name.body.error.details[0].path).toMatch(/^\/query\/x/);
    expect(name.body.error.details[0].message).toMatch(/not valid UTF-8/);

    const ok = await app.http('GET', `/segments/search?q=${encodeURIComponent('René')}&limit=5`, { apiKey: key });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const plus = await app.http('GET', '/segments/search?q=a+b%20c', { apiKey: key });
    expect(plus.status, JSON.stringify(plus.body)).toBe(200);
  });
});

describe('order of middleware', () => {
  it('answers 401 to a keyless or wrongly keyed request with a broken or huge body', async () => {
    const before = await contactCount();
    for (const apiKey of [undefined, 'cdk_ws_wrong']) {
      const broken = await app.http('POST', `/contacts/${source}`, { apiKey, headers: json, rawBody: '{broken' });
      expect(broken.status, JSON.stringify(broken.body)).toBe(401);
      expect(broken.body.error.code).toBe('unauthorized');
      const proto = await app.http('POST', `/contacts/${source}`, { apiKey, headers: json, rawBody: '{"__proto__":{}}' });
      expect(proto.status).toBe(401);
      const huge = await app.http('POST', `/contacts/${source}/bulk-upsert-contacts`, { apiKey, headers: json, rawBody: '{"contactsData":["' + 'x'.repeat(12 * MiB) + '"]}' });
      expect(huge.status, JSON.stringify(huge.body)).toBe(401);
    }
    expect(await contactCount()).toBe(before);
  });

  it('limits requests without a valid key per IP (429 rate_limited with Retry-After) while valid keys keep working', async () => {
    const limited = await startTestApp({ workerMode: 'none', env: { ANON_RATE_LIMIT_PER_MINUTE: '3' }, rateLimitPerMinute: 100 });
    try {
      const ws = await limited.createWorkspace();
      const sourcesBefore = (await limited.pool.query(`select count(*)::int as n from sources`)).rows[0].n;
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await limited.http('GET', '/credits/balance', { apiKey: i % 2 ? 'cdk_ws_wrong' : undefined })).status);
      expect(statuses).toEqual([401, 401, 401]);
      const over = await limited.http('POST', '/sources', { headers: json, rawBody: '{"sourceType":"pronetInbound"}' });
      expect(over.status, JSON.stringify(over.body)).toBe(429);
      expect(over.body.error.code).toBe('rate_limited');
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await limited.http('GET', '/credits/balance', { apiKey: 'cdk_ws_wrong' })).status).toBe(429);
      // A valid key is judged by its own (per-key) limit and headers.
      const ok = await limited.http('GET', '/credits/balance', { apiKey: ws.apiKey });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit-limit')).toBe('100');
      const sources = await limited.pool.query(`select count(*)::int as n from sources`);
      expect(sources.rows[0].n).toBe(sourcesBefore);
    } finally {
      await limited.close();
    }
  });

  it('never limits or counts health probes: /healthz and /readyz answer while bad keys from the same IP get 429', async () => {
    const limited = await startTestApp({ workerMode: 'none', env: { ANON_RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      // Probes first: they must not use up the address's allowance.
      for (let i = 0; i < 5; i++) expect((await limited.http('GET', '/healthz')).status).toBe(200);
      for (let i = 0; i < 3; i++) expect((await limited.http('GET', '/credits/balance', { apiKey: 'cdk_ws_wrong' })).status).toBe(401);
      expect((await limited.http('GET', '/credits/balance', { apiKey: 'cdk_ws_wrong' })).status).toBe(429);
      const health = await limited.http('GET', '/healthz');
      expect(health.status).toBe(200);
      expect(health.headers.get('ratelimit-limit')).toBeNull();
      expect((await limited.http('GET', '/readyz')).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('requests Node refuses before any route runs', () => {
  /** Sends `raw` on a fresh connection and returns all the server wrote before it closed. */
  const rawExchange = (raw: string) =>
    new Promise<string>((resolve, reject) => {
      const { hostname, port } = new URL(app.url);
      const socket = connect(Number(port), hostname, () => socket.end(raw));
      let got = '';
      socket.on('data', (b) => (got += b.toString('latin1')));
      socket.on('close', () => resolve(got));
      socket.on('error', reject);
    });

  it.each([
    ['two Content-Length values', 'POST /contacts/bulk-fetch HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', 400],
    ['Content-Length and chunked', 'POST /contacts/bulk-fetch HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400],
    ['a bad chunk size', 'POST /contacts/bulk-fetch HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', 400],
    ['a request line that is not HTTP', 'HELLO\r\n\r\n', 400],
    ['headers over the limit', `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    // found by the contract review: a long URL is a 414, not "headers too large"
    ['a URL over the parser limit', `GET /healthz?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414],
    ['a URL over 8 KiB the parser takes', `GET /healthz?q=${'a'.repeat(9_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414],
  ])('%s: answered with the error envelope, not a bare status line', async (_, raw, status) => {
    // found by the outsider probe: Node's own answer is a status line with no body and no error code
    const got = await rawExchange(raw);
    const [head, body] = got.split('\r\n\r\n');
    expect(head, got).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
    expect(head).toMatch(/\r\ncontent-type: application\/json/i);
    expect(head).toMatch(/\r\nconnection: close/i);
    const parsed = JSON.parse(body!);
    expect(parsed.error).toMatchObject({ status, code: ({ 431: 'headers_too_large', 414: 'uri_too_long' } as Record<number, string>)[status] ?? 'malformed_request' });
    expect(parsed.error.message).toBeTruthy();
    expect(parsed.error.requestId).toBeTruthy();
  });
});

describe('body size limit per route', () => {
  it('answers 413 payload_too_large over 1 MiB on an ordinary route and accepts a larger body on bulk upsert', async () => {
    const before = await contactCount();
    const big = await app.http('POST', `/contacts/${source}`, { apiKey: key, body: { 'contact.firstName': 'Big', 'contact.jobTitle': 'x'.repeat(1.2 * MiB) } });
    expect(big.status, JSON.stringify(big.body).slice(0, 300)).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
    expect(await contactCount()).toBe(before);

    // Bulk upsert takes ~2 MiB (accepted as a job; no worker runs in this file).
    const rows = Array.from({ length: 4000 }, (_, i) => ({ 'contact.firstName': `Row ${i} ${'y'.repeat(500)}` }));
    const bulk = await app.http('POST', `/contacts/${source}/bulk-upsert-contacts`, { apiKey: key, body: { contactsData: rows } });
    expect(JSON.stringify({ contactsData: rows }).length).toBeGreaterThan(2 * MiB);
    expect(bulk.status, JSON.stringify(bulk.body).slice(0, 300)).toBe(202);
  });

  it('answers 413 to a chunked body without Content-Length as soon as it passes the limit', async () => {
    const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = httpRequest(app.url + `/contacts/${source}`, { method: 'POST', headers: { ...json, 'x-api-key': key, 'transfer-encoding': 'chunked' } }, (r) => {
        let text = '';
        r.on('data', (c) => (text += c));
        r.on('end', () => resolve({ status: r.statusCode!, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.write('{"contact.firstName":"');
      for (let i = 0; i < 3; i++) req.write('z'.repeat(512 * 1024));
      req.end('"}');
    });
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe('payload_too_large');
  });
});

describe('methods', () => {
  it('answers 404 naming the parameter when an id segment of the path is empty (an unset shell variable), instead of routing elsewhere', async () => {
    // Found pasting the README walkthrough without `export SEGMENT_ID=…`: POST /contacts/by-segment/
    // answered "Source by-segment was not found" (the upsert route), and
    // POST /sources/pull-contacts-from-source/ a 405 naming PATCH.
    const cases = [
      ['POST', '/contacts/by-segment/', '{segmentId}', '/contacts/by-segment/{segmentId}'],
      ['POST', '/sources/pull-contacts-from-source/', '{id}', '/sources/pull-contacts-from-source/{id}'],
      ['GET', '/jobs/', '{jobId}', '/jobs/{jobId}'],
      ['POST', '/contacts//bulk-upsert-contacts', '{sourceId}', '/contacts/{sourceId}/bulk-upsert-contacts'],
      ['POST', '/v1/posts//unschedule', '{postId}', '/v1/posts/{postId}/unschedule'],
    ] as const;
    const before = await contactCount();
    for (const [method, path, param, template] of cases) {
      const res = await rawRequest(app.url, method, path, { ...json, 'x-api-key': key }, method === 'GET' ? undefined : '{"fields":["contact.firstName"]}');
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(404);
      expect(res.body.error).toMatchObject({ status: 404, code: 'empty_path_parameter' });
      expect(res.body.error.message).toContain(`${param} is empty in ${method} ${template}`);
    }
    expect(await contactCount()).toBe(before);
    // A trailing slash on a path without a parameter there still reaches its route.
    const balance = await rawRequest(app.url, 'GET', '/credits/balance/', { 'x-api-key': key });
    expect(balance.status, JSON.stringify(balance.body)).toBe(200);
    const draft = await rawRequest(app.url, 'POST', '/v1/posts/', { ...json, 'x-api-key': key }, '{}');
    expect(draft.status, JSON.stringify(draft.body)).toBe(400);
    expect(draft.body.error.code).toBe('validation_failed');
  });

  it('answers 405 with Allow and the error envelope for methods a known path does not route; unknown paths stay 404', async () => {
    for (const method of ['TRACE', 'QUERY', 'PUT']) {
      const res = await rawRequest(app.url, method, '/contacts/00000000-0000-7000-8000-000000000000', { 'x-api-key': key });
      expect(res.status, `${method}: ${JSON.stringify(res.body)}`).toBe(405);
      expect(res.body.error).toMatchObject({ status: 405, code: 'method_not_allowed' });
      expect(String(res.headers.allow).split(/,\s*/).sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH', 'POST']);
    }
    const post = await rawRequest(app.url, 'POST', '/credits/balance', { ...json, 'x-api-key': key }, '{}');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toMatch(/GET/);
    // A static path is its own resource (as in OpenAPI): /contacts/{id} does not lend it GET.
    const getStatic = await rawRequest(app.url, 'GET', '/contacts/bulk-fetch', { 'x-api-key': key });
    expect(getStatic.status, JSON.stringify(getStatic.body)).toBe(405);
    expect(getStatic.headers.allow).toBe('POST');
    const optionsStatic = await rawRequest(app.url, 'OPTIONS', '/contacts/bulk-fetch');
    expect(optionsStatic.status).toBe(204);
    expect(optionsStatic.headers.allow).toBe('POST');
    for (const method of ['TRACE', 'QUERY', 'GET']) {
      const res = await rawRequest(app.url, method, '/no-such-path');
      expect(res.status, method).toBe(404);
      expect(res.body.error.code).toBe('route_not_found');
    }
    const options = await rawRequest(app.url, 'OPTIONS', '/credits/balance');
    expect(options.status).toBe(204);
    expect(options.headers.allow).toMatch(/GET/);
    // A body sent with an unrouted method is never parsed or written.
    const before = await contactCount();
    const put = await rawRequest(app.url, 'PUT', `/contacts/${source}`, { ...json, 'x-api-key': key }, JSON.stringify({ 'contact.firstName': 'Put' }));
    expect(put.status).toBe(405);
    expect(await contactCount()).toBe(before);
  });
});

describe('PostgreSQL data exceptions', () => {
  let probe: Server;
  let probeUrl: string;
  beforeAll(async () => {
    // A route that hands client input to PostgreSQL unchecked, as a forgotten check would.
    const route = defineRoute({
      method: 'post',
      path: '/probe',
      tag: 'Test',
      summary: 'casts its input in SQL',
      body: Type.Object({ sql: Type.String(), value: Type.String() }),
      responses: { 200: Type.Object({}) },
      handler: async ({ body, deps }) => {
        await deps.pool.query(`insert into workspaces (id, name, plan, webhook_secret) select gen_random_uuid(), 'probe', 'free', 'x' where ${body.sql} is not null`, [body.value]);
        return {};
      },
    });
    probe = createApp(app.deps, [[route]]).listen(0, '127.0.0.1');
    await new Promise((r) => probe.once('listening', r));
    probeUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => probe?.close(r)));

  it('maps SQLSTATE class 22 (and 54000) to 400 invalid_value without SQL internals; nothing is written', async () => {
    const count = async () => (await app.pool.query(`select count(*)::int as n from workspaces where name = 'probe'`)).rows[0].n;
    const cases = [
      { sql: '$1::int', value: 'abc' }, // 22P02
      { sql: '$1::int', value: '99999999999' }, // 22003
      { sql: `('abc' like $1)`, value: '%\\' }, // 22025
      { sql: '$1::date', value: '2026-02-30' }, // 22008
      { sql: '$1::uuid', value: '0000000000000000000000000000000000zz' }, // 22P02
      { sql: `repeat('x', $1::int)`, value: '2000000000' }, // 54000: too large, caused by the value
    ];
    for (const c of cases) {
      const res = await fetch(probeUrl + '/probe', { method: 'POST', headers: { ...json, 'x-api-key': key }, body: JSON.stringify(c) });
      const body = (await res.json()) as any;
      expect(res.status, `${c.sql} ${c.value}: ${JSON.stringify(body)}`).toBe(400);
      expect(body.error.code).toBe('invalid_value');
      expect(body.error.message).not.toMatch(/invalid input syntax|for type|escape string|date\/time field|select|insert|\$1/i);
    }
    expect(await count()).toBe(0);
  });
});

describe('routes without the ORM (orm: false)', () => {
  let probe: Server;
  let probeUrl: string;
  beforeAll(async () => {
    // The same entity-manager read, once on an ordinary route and once on one declared `orm: false`.
    const counting = (path: string, orm?: false) =>
      defineRoute({
        method: 'get', path, tag: 'Test', summary: 'counts contacts through the entity manager', orm,
        responses: { 200: Type.Object({ n: Type.Number() }) },
        handler: async ({ em }) => ({ n: await em.count(Contact, {}) }),
      });
    probe = createApp(app.deps, [[counting('/with-orm'), counting('/without-orm', false)]]).listen(0, '127.0.0.1');
    await new Promise((r) => probe.once('listening', r));
    probeUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => probe?.close(r)));

  it('get no RequestContext fork: a handler that uses the entity manager there fails loudly instead of reading unscoped', async () => {
    const withOrm = await fetch(probeUrl + '/with-orm', { headers: { 'x-api-key': key } });
    expect(withOrm.status).toBe(200);
    expect(((await withOrm.json()) as { n: number }).n).toBe(await contactCount());
    const withoutOrm = await fetch(probeUrl + '/without-orm', { headers: { 'x-api-key': key } });
    expect(withoutOrm.status).toBe(500);
  });
});
