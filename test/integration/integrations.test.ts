import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOneValidationDetail, startTestApp, type TestApp } from '../harness.js';
import { decryptCredentials } from '../../domain/credentials.js';
import { keyringOf } from '../../domain/keyring.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
});
afterAll(() => app?.close());

async function connect(apiKey: string, body: Record<string, unknown>) {
  return app.http('POST', '/integrations', { apiKey, body });
}

describe('integrations', () => {
  it('connects an account, never returns its credentials and stores them encrypted', async () => {
    const ws = await app.createWorkspace();
    const res = await connect(ws.apiKey, {
      provider: 'microblog',
      name: 'Brand on X',
      externalAccountId: '12345',
      credentials: { accessToken: 'super-secret-token-abc' },
      apiBaseUrl: 'http://127.0.0.1:9/x',
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ provider: 'microblog', name: 'Brand on X', externalAccountId: '12345', apiBaseUrl: 'http://127.0.0.1:9/x', status: 'connected' });
    expect(res.body.data.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(JSON.stringify(res.body)).not.toContain('super-secret-token-abc');
    expect(res.body.data.credentials).toBeUndefined();

    const got = await app.http('GET', `/integrations/${res.body.data.id}`, { apiKey: ws.apiKey });
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(res.body.data);
    expect(JSON.stringify(got.body)).not.toContain('super-secret-token-abc');

    const row = (await app.pool.query(`select credentials_encrypted from integrations where id = $1`, [res.body.data.id])).rows[0];
    expect(row.credentials_encrypted).not.toContain('super-secret-token-abc');
    expect(row.credentials_encrypted).not.toContain(Buffer.from('super-secret-token-abc').toString('base64'));
    expect(decryptCredentials(row.credentials_encrypted, keyringOf(app.config), res.body.data.id)).toEqual({ accessToken: 'super-secret-token-abc' });
  });

  it('validates the connect body', async () => {
    const ws = await app.createWorkspace();
    const bad = await connect(ws.apiKey, { provider: 'myspace', name: 'x', externalAccountId: '1', credentials: { accessToken: 't' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details[0].path).toBe('/provider');
    const noCreds = await connect(ws.apiKey, { provider: 'pronet', name: 'x', externalAccountId: '1', credentials: {} });
    expect(noCreds.status).toBe(400);
    expect(noCreds.body.error.details[0].path).toBe('/credentials');
    const extra = await connect(ws.apiKey, { provider: 'pronet', name: 'x', externalAccountId: '1', credentials: { a: 1 }, secret: 1 });
    expect(extra.status).toBe(400);
    expect(extra.body.error.details[0].path).toBe('/secret');
    const internal = await connect(ws.apiKey, { provider: 'pronet', name: 'x', externalAccountId: '1', credentials: { a: 1 }, apiBaseUrl: 'http://10.0.0.8/api' });
    expect(internal.status).toBe(400);
    expect(internal.body.error.code).toBe('url_not_allowed');
    expect(internal.body.error.details[0].path).toBe('/apiBaseUrl');
  });

  it('filters connected accounts by provider with pagination, and disconnects', async () => {
    const ws = await app.createWorkspace();
    const ids: Record<string, string[]> = { microblog: [], pronet: [], pronetPage: [] };
    for (const [i, provider] of ['microblog', 'pronet', 'pronetPage', 'microblog', 'pronet', 'microblog'].entries()) {
      const r = await connect(ws.apiKey, { provider, name: `acct ${i}`, externalAccountId: `ext-${i}`, credentials: { accessToken: `t${i}` } });
      ids[provider]!.push(r.body.data.id);
    }
    const all = await app.http('POST', '/integrations/filter-integrations', { apiKey: ws.apiKey, body: {} });
    expect(all.status).toBe(200);
    expect(all.body.meta.totalRecords).toBe(6);
    expect(Object.keys(all.body.data[0]).sort()).toEqual(['accessExpiresAt', 'apiBaseUrl', 'createdAt', 'externalAccountId', 'grantExpiresAt', 'handle', 'id', 'name', 'provider', 'scopes', 'status']);

    const micro = await app.http('POST', '/integrations/filter-integrations', {
      apiKey: ws.apiKey,
      body: { conditions: [{ field: 'provider', operator: '==', value: 'microblog' }], limit: 2 },
    });
    expect(micro.body.meta.totalRecords).toBe(3);
    expect(micro.body.data.map((d: any) => d.id)).toEqual(ids.microblog!.slice(0, 2));
    expect(micro.body.meta.previousToken).toBe('');
    const page2 = await app.http('POST', '/integrations/filter-integrations', {
      apiKey: ws.apiKey,
      body: { conditions: [{ field: 'provider', operator: '==', value: 'microblog' }], limit: 2, paginationToken: micro.body.meta.nextToken },
    });
    expect(page2.body.data.map((d: any) => d.id)).toEqual(ids.microblog!.slice(2));
    expect(page2.body.meta.nextToken).toBe('');
    const back = await app.http('POST', '/integrations/filter-integrations', {
      apiKey: ws.apiKey,
      body: { conditions: [{ field: 'provider', operator: '==', value: 'microblog' }], limit: 2, paginationToken: page2.body.meta.previousToken },
    });
    expect(back.body.data.map((d: any) => d.id)).toEqual(ids.microblog!.slice(0, 2));

    // A token used with another filter is refused.
    const other = await app.http('POST', '/integrations/filter-integrations', {
      apiKey: ws.apiKey,
      body: { conditions: [{ field: 'provider', operator: '==', value: 'pronet' }], paginationToken: micro.body.meta.nextToken },
    });
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe('invalid_pagination_token');
    // ... and so is one from another workspace.
    const stranger = await app.createWorkspace();
    const foreign = await app.http('POST', '/integrations/filter-integrations', {
      apiKey: stranger.apiKey,
      body: { conditions: [{ field: 'provider', operator: '==', value: 'microblog' }], limit: 2, paginationToken: micro.body.meta.nextToken },
    });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe('invalid_pagination_token');

    const pro = await app.http('POST', '/integrations/filter-integrations', {
      apiKey: ws.apiKey,
      body: { conditions: [{ field: 'provider', operator: 'IN', value: ['pronet', 'pronetPage'] }] },
    });
    expect(pro.body.data.map((d: any) => d.provider).sort()).toEqual(['pronet', 'pronet', 'pronetPage']);

    const badValue = await app.http('POST', '/integrations/filter-integrations', {
      apiKey: ws.apiKey,
      body: { conditions: [{ field: 'provider', operator: 'IN', value: ['pronet', 'fax'] }] },
    });
    expect(badValue.status).toBe(400);
    expect(badValue.body.error.details[0].path).toBe('/conditions/0/value/1');

    const del = await app.http('DELETE', `/integrations/${ids.pronet![0]}`, { apiKey: ws.apiKey });
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ id: ids.pronet![0], deleted: true });
    expect((await app.http('GET', `/integrations/${ids.pronet![0]}`, { apiKey: ws.apiKey })).status).toBe(404);
    expect((await app.http('DELETE', `/integrations/${ids.pronet![0]}`, { apiKey: ws.apiKey })).status).toBe(404);
    const after = await app.http('POST', '/integrations/filter-integrations', { apiKey: ws.apiKey, body: {} });
    expect(after.body.meta.totalRecords).toBe(5);
    const row = (await app.pool.query(`select status, credentials_encrypted from integrations where id = $1`, [ids.pronet![0]])).rows[0];
    expect(row).toEqual({ status: 'disconnected', credentials_encrypted: '' });
  });

  it('refuses conditions whose value does not fit the field and operator, naming the pointer', async () => {
    const ws = await app.createWorkspace();
    const filter = (condition: unknown) => app.http('POST', '/integrations/filter-integrations', { apiKey: ws.apiKey, body: { conditions: [{ field: 'name', operator: '==', value: 'ok' }, condition] } });
    const cases: [unknown, string, RegExp][] = [
      [{ field: 'provider', operator: 'IN', value: 'microblog' }, '/conditions/1/value', /array/],
      [{ field: 'name', operator: 'IN', value: 'acct' }, '/conditions/1/value', /array/],
      [{ field: 'name', operator: '==', value: ['acct'] }, '/conditions/1/value', /string/],
      [{ field: 'provider', operator: '==', value: ['microblog'] }, '/conditions/1/value', /string|one of/],
      [{ field: 'provider', operator: '==', value: 'fax' }, '/conditions/1/value', /microblog.*pronet.*pronetPage/],
      // the element itself (the hand-written check named the whole list)
      [{ field: 'provider', operator: 'IN', value: ['pronet', 'fax'] }, '/conditions/1/value/1', /microblog.*pronet.*pronetPage/],
      [{ field: 5, operator: '==', value: 'x' }, '/conditions/1/field', /"provider", "externalAccountId", "name"/],
      [{ field: 'name', operator: 'LIKE', value: 'x' }, '/conditions/1/operator', /"==", "IN"/],
      [{ field: 'nope', operator: '==', value: 'x' }, '/conditions/1/field', /"provider", "externalAccountId", "name"/],
      [{ field: 'name', operator: 'IN', value: [] }, '/conditions/1/value', /fewer than 1 items/],
      [{ field: 'name', operator: '==', value: 5 }, '/conditions/1/value', /string/],
      [{ field: 'externalAccountId', operator: 'IN', value: ['a', 5] }, '/conditions/1/value/1', /string/],
      [{ field: 'name', operator: '==', value: 'x'.repeat(201) }, '/conditions/1/value', /more than 200 characters/],
      [{ field: 'name', operator: '==' }, '/conditions/1/value', /is required/],
      [{ field: 'name', value: 'x' }, '/conditions/1/operator', /is required/],
      [{ field: 'name', operator: '==', value: 'x', extra: 1 }, '/conditions/1/extra', /not a known property/],
      ['x', '/conditions/1', /must be object/],
    ];
    for (const [condition, path, message] of cases) {
      // One line, naming the precise pointer: a union must not report every branch it tried.
      expectOneValidationDetail(await filter(condition), path, message, condition);
    }
    const both = await filter({ field: 'nope', operator: 'LIKE', value: 'x' });
    expect(both.status).toBe(400);
    expect(both.body.error.details).toEqual([
      { path: '/conditions/1/field', message: 'must be one of "provider", "externalAccountId", "name"' },
      { path: '/conditions/1/operator', message: 'must be one of "==", "IN"' },
    ]);
  });

  it('answers 404 for another workspace and hides it from lists', async () => {
    const a = await app.createWorkspace();
    const b = await app.createWorkspace();
    const r = await connect(a.apiKey, { provider: 'pronet', name: 'A', externalAccountId: 'a', credentials: { accessToken: 't' } });
    const id = r.body.data.id;
    const get = await app.http('GET', `/integrations/${id}`, { apiKey: b.apiKey });
    expect(get.status).toBe(404);
    expect(get.body.error.code).toBe('not_found');
    expect((await app.http('DELETE', `/integrations/${id}`, { apiKey: b.apiKey })).status).toBe(404);
    expect((await app.http('GET', `/integrations/not-a-uuid`, { apiKey: b.apiKey })).status).toBe(404);
    const list = await app.http('POST', '/integrations/filter-integrations', { apiKey: b.apiKey, body: {} });
    expect(list.body).toEqual({ data: [], meta: { totalRecords: 0, previousToken: '', nextToken: '' } });
    expect((await app.http('GET', `/integrations/${id}`, { apiKey: a.apiKey })).status).toBe(200);
  });
});
