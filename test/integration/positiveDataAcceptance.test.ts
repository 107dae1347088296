/**
 * Issue 27 item 21: what the OpenAPI document calls valid, the server accepts. Each case is a
 * body schemathesis' `positive_data_acceptance` check found refused (400) although its schema
 * allowed it; the answer now is a success, or a 404 for a well-formed reference to something the
 * workspace does not have.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { NewWorkspace } from '../../db/workspaces.js';
import { startTestApp, type TestApp } from '../harness.js';

let app: TestApp;
let ws: NewWorkspace;

beforeAll(async () => {
  app = await startTestApp();
  ws = await app.createWorkspace({ plan: 'enterprise', credits: 1000 });
});
afterAll(() => app?.close());

const call = (method: string, path: string, body?: unknown) => app.http(method, path, { apiKey: ws.apiKey, body });
const UNKNOWN = '0193a5c2-7f1e-7b3a-9c4d-2e8f6a1b3c5d';

let docAjv: Ajv2020 | undefined;
let doc: any;
/** Whether the published document's schema of the operation's JSON body accepts `body` (what schemathesis generates from). */
async function documentAccepts(method: string, path: string, body: unknown): Promise<boolean> {
  if (!docAjv) {
    doc = (await app.http('GET', '/openapi.json')).body;
    docAjv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    (addFormatsModule as unknown as (a: Ajv2020) => Ajv2020)(docAjv);
    docAjv.addSchema({ $id: 'https://doc.local/openapi.json', components: doc.components });
  }
  const id = `https://doc.local/${method}${path}`;
  let validate = docAjv.getSchema(id);
  if (!validate) {
    const schema = doc.paths[path][method.toLowerCase()].requestBody.content['application/json'].schema;
    validate = docAjv.compile({ $id: id, ...JSON.parse(JSON.stringify(schema).replace(/"#\/components/g, '"https://doc.local/openapi.json#/components')) });
  }
  return validate(body) as boolean;
}

/** A 404 `not_found` whose details name `path`. */
function expectNotFound(res: { status: number; body: any }, path: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(404);
  expect(res.body.error.code).toBe('not_found');
  expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
}

describe('uploads', () => {
  it('a one-byte chunk is stored', async () => {
    const boundary = '6d2d58169728b7298f650d1dbc852b7a';
    const raw = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\n\r\n0\r\n--${boundary}--\r\n`;
    for (const path of ['/contact-files?chunk=true', '/v1/media/upload?chunk=true']) {
      const r = await app.http('POST', path, { apiKey: ws.apiKey, rawBody: Buffer.from(raw), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
  });

  it('parts besides `file` are ignored, a dozen of them too (the document allows any)', async () => {
    // Random seed 2093718744: eleven extra parts before `file` were a 413 "File exceeds the limit".
    const boundary = 'f4535c2e64fa5b19dd2d181eb13f8c63';
    const extra = Array.from({ length: 12 }, (_, i) => `--${boundary}\r\nContent-Disposition: form-data; name="x${i}"\r\n\r\ntrue\r\n`).join('');
    const raw = `${extra}--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\nContent-Type: application/x-ndjson\r\n\r\n{"a": 1}\n\r\n--${boundary}--\r\n`;
    for (const path of ['/contact-files?chunk=true', '/contact-files']) {
      const r = await app.http('POST', path, { apiKey: ws.apiKey, rawBody: Buffer.from(raw), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
  });
});

describe('contact files', () => {
  it('the document names the types the file part may declare, and each is taken', async () => {
    // schemathesis sent the part without a type (400 file_type_not_allowed): the document said only "binary"
    const doc = (await app.http('GET', '/openapi.json')).body;
    const encoding = doc.paths['/contact-files'].post.requestBody.content['multipart/form-data'].encoding;
    const types = String(encoding?.file?.contentType ?? '').split(',').map((t) => t.trim());
    expect(types.sort()).toEqual(['application/x-ndjson', 'text/csv']);
    const boundary = 'b0undary';
    const bodies: Record<string, string> = { 'text/csv': 'name,city\nAda,London\n', 'application/x-ndjson': '{"name":"Ada"}\n' };
    for (const type of types) {
      const raw = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\nContent-Type: ${type}\r\n\r\n${bodies[type]}\r\n--${boundary}--\r\n`;
      const r = await app.http('POST', '/contact-files', { apiKey: ws.apiKey, rawBody: Buffer.from(raw), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.contentType).toBe(type);
    }
  });
});

describe('media upload', () => {
  it('the document names the media types the file part may declare, and a file of each is taken', async () => {
    // schemathesis sent the part without a type (400 file_type_not_allowed): the document said only "binary"
    const doc = (await app.http('GET', '/openapi.json')).body;
    const encoding = doc.paths['/v1/media/upload'].post.requestBody.content['multipart/form-data'].encoding;
    const types = String(encoding?.file?.contentType ?? '').split(',').map((t) => t.trim());
    const hex = (h: string) => Buffer.from(h, 'hex');
    // the leading bytes file-type recognises each by (the fuzzer's hooks send the same, then any bytes)
    const files: Record<string, Buffer> = {
      'image/jpeg': hex('ffd8ffe000104a46494600010100'),
      'image/png': hex('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000049444154'),
      'image/gif': Buffer.from('GIF89a'),
      'image/webp': Buffer.concat([Buffer.from('RIFF'), hex('24000000'), Buffer.from('WEBPVP8 ')]),
      'video/mp4': Buffer.concat([hex('00000018'), Buffer.from('ftypisom'), hex('00000200'), Buffer.from('isomiso2')]),
      'video/quicktime': Buffer.concat([hex('00000014'), Buffer.from('ftypqt  '), hex('00000200'), Buffer.from('qt  ')]),
      'application/pdf': Buffer.from('%PDF-1.4\n'),
    };
    expect(types.sort()).toEqual(Object.keys(files).sort());
    const boundary = 'b0undary';
    for (const type of types) {
      const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="file"\r\nContent-Type: ${type}\r\n\r\n`;
      const raw = Buffer.concat([Buffer.from(head), files[type]!, Buffer.from([0, 1, 2, 255]), Buffer.from(`\r\n--${boundary}--\r\n`)]);
      const r = await app.http('POST', '/v1/media/upload', { apiKey: ws.apiKey, rawBody: raw, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } });
      expect(r.status, `${type} ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.body.contentType).toBe(type);
    }
  });
});

describe('a well-formed reference to something the workspace does not have is a 404', () => {
  it('segment sources', async () => {
    expectNotFound(await call('POST', '/segments', { name: 'S', segmentSources: [UNKNOWN] }), '/segmentSources/0');
    const seg = await call('POST', '/segments', { name: 'S' });
    expect(seg.status).toBe(200);
    expectNotFound(await call('PATCH', `/segments/${seg.body.data.id}`, { segmentSources: ['string'] }), '/segmentSources/0');
  });
  it('post integrations, posts and uploaded chunks', async () => {
    expectNotFound(await call('POST', '/v1/posts', { providerId: UNKNOWN, content: 'Hello' }), '/providerId');
    const scheduledTime = new Date(Date.now() + 86_400_000).toISOString();
    expectNotFound(await call('POST', '/v1/posts/bulk-schedule', { posts: [{ postId: UNKNOWN, schedules: [{ providerId: UNKNOWN, scheduledTime }] }] }), '/posts/0/postId');
    for (const path of ['/contact-files/assemble-chunks', '/v1/media/assemble-chunks'])
      expectNotFound(await call('POST', path, { chunks: [{ fileName: 'string', chunkNumber: 3 }], fileExtension: 'csv' }), '/chunks/0/fileName');
  });
});

describe('sources', () => {
  it('a field mapping to a well-formed custom field path the workspace does not have is a 404 naming it', async () => {
    const fieldMapping = [{ sourceFieldName: 'score', targetFieldName: `contact.customFields.${UNKNOWN}` }];
    expectNotFound(await call('POST', '/sources', { sourceType: 'importFromWebhook', sourceMeta: { config: { fieldMapping } } }), '/sourceMeta/config/fieldMapping/0/targetFieldName');
    expectNotFound(
      await call('POST', '/sources/bulk-upsert', { sources: [{ sourceType: 'importFromWebhook', sourceMeta: { config: { fieldMapping } } }] }),
      '/sources/0/sourceMeta/config/fieldMapping/0/targetFieldName',
    );
  });
});

describe('sources bulk update', () => {
  it('an id listed twice gets both PATCHes, in order', async () => {
    // positive_data_acceptance (seed 12345): 400 "appears twice", though the schema allows it.
    const s = await call('POST', '/sources', { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'bulk twice', a: 1 } });
    const id = s.body.data.id as string;
    const r = await call('PATCH', '/sources/bulk-update', {
      sources: [
        { id, sourceMeta: { a: 2, b: 1 }, runFrequency: { numberOfPastDaysToSync: '7', periodicInterval: '1d' } },
        { id: id.toUpperCase(), sourceMeta: { b: null, c: 3 }, runFrequency: { periodicInterval: '6h' } },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.map((d: { id: string }) => d.id)).toEqual([id, id]);
    const got = (await call('GET', `/sources/${id}`)).body.data.attributes;
    expect(got.sourceMeta).toMatchObject({ keyword: 'bulk twice', a: 2, c: 3 });
    expect(got.sourceMeta).not.toHaveProperty('b');
    expect(got.runFrequency).toEqual({ numberOfPastDaysToSync: '7', periodicInterval: '6h' });
    expect(r.body.data[0].attributes).toEqual(got);
    await call('PATCH', `/sources/${id}`, { runFrequency: null });
  });
});

describe('contact field options', () => {
  it('`q` on a field that does not support filtering is taken', async () => {
    // schemathesis (seed 20261122): field=company.id with q answered 400 "company.id does not support filtering"
    const r = await call('GET', '/schema/contact/options?field=company.id&q=ae');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.meta.source).toBe('values');
  });
});

describe('post and source conditions', () => {
  it('a list within its maxItems is taken, however many of its conditions are LIKEs', async () => {
    // the post and source catalogs kept per-query totals no schema states: 11 LIKEs answered 400 "at most 10 LIKE / NOT LIKE conditions"
    const likes = (field: string) => Array.from({ length: 11 }, (_, i) => ({ field, operator: i % 2 ? 'LIKE' : 'NOT LIKE', value: `%${i}%` }));
    for (const [path, body] of [
      ['/v1/posts/filter-posts', { conditions: likes('status') }],
      ['/sources/filter-sources/pronetKeywordSearch', { conditions: likes('sourceIdentifier') }],
    ] as const) {
      expect(await documentAccepts('POST', path.replace('pronetKeywordSearch', '{sourceType}'), body)).toBe(true);
      const r = await call('POST', path, body);
      expect(r.status, `${path} ${JSON.stringify(r.body).slice(0, 300)}`).toBe(200);
    }
  });
});

describe('filter-posts sort', () => {
  it('a field listed twice keeps its first direction', async () => {
    const r = await call('POST', '/v1/posts/filter-posts', { sort: [{ field: 'createdAt', direction: 'asc' }, { field: 'createdAt', direction: 'desc' }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  });
});

describe('contact conditions', () => {
  it('a well-formed custom field path the workspace does not have is a 404 naming it', async () => {
    const path = `contact.customFields.${UNKNOWN}`;
    expectNotFound(await call('POST', '/contacts/filter-contacts', { conditions: [{ field: path, operator: '==', value: 1 }] }), '/conditions/0/field');
    expectNotFound(await call('POST', '/contacts/filter-contacts', { sort: [{ field: path }] }), '/sort/0/field');
    expectNotFound(await call('POST', '/contacts/unique-values', { groupByField: path }), '/groupByField');
    expectNotFound(await call('POST', '/segments', { name: 'S', groupedCondition: { operator: 'AND', conditions: [{ field: path, operator: 'IS EMPTY' }] } }), '/groupedCondition/conditions/0/field');
    expectNotFound(await call('GET', `/schema/contact/options?field=${path}`), '/field');
  });
  it('every list within its maxItems is taken, whatever the tree totals', async () => {
    // schemathesis: one root condition beside a group of 100 answered 400 "at most 100 conditions"
    const leaf = { field: 'contact.firstName', operator: 'IS NOT EMPTY' };
    const likes = Array.from({ length: 100 }, (_, i) => ({ field: 'contact.lastName', operator: 'LIKE', value: `%${i}%` }));
    let deep: object = { operator: 'OR', conditions: [leaf, leaf] };
    for (let d = 0; d < 10; d++) deep = { operator: 'AND', conditions: [leaf, deep] };
    const where = { conditions: [leaf], groupedCondition: { operator: 'AND', conditions: [{ operator: 'OR', conditions: likes }, deep] } };
    const seg = await call('POST', '/segments', { name: 'Wide', ...where });
    expect(seg.status, JSON.stringify(seg.body)).toBe(200);
    for (const [path, body] of [
      ['/contacts/filter-contacts', where],
      ['/contacts/unique-values', { groupByField: 'contact.firstName', ...where }],
      [`/contacts/by-segment/${seg.body.data.id}`, { fields: ['contact.firstName'], ...where }],
    ] as const) {
      const r = await call('POST', path, body);
      expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(200);
    }
  });
  it('a path outside the catalog is refused by the schema', async () => {
    const r = await call('POST', '/contacts/filter-contacts', { conditions: [{ field: 'string', operator: '==', value: 'x' }] });
    expect(r.status).toBe(400);
    expect(r.body.error.details.map((d: { path: string }) => d.path)).toContain('/conditions/0/field');
  });
});

describe('integrations', () => {
  it('credentials: the document refuses a NUL in a nested string, as the server does', async () => {
    // schemathesis: {"credentials": {"k": {"n": "\u0000"}}} was schema-valid, answered 400 (PostgreSQL stores no NUL)
    const body = { provider: 'microblog', name: 'Acme', externalAccountId: '42', credentials: { accessToken: 't', extra: { nested: ['ok', 'a\u0000b'] } } };
    expect(await documentAccepts('POST', '/integrations', body)).toBe(false);
    const r = await call('POST', '/integrations', body);
    expect(r.status).toBe(400);
    expect(r.body.error.details.map((d: { path: string }) => d.path)).toContain('/credentials/extra/nested/1');
    const clean = { ...body, credentials: { accessToken: 't', extra: { nested: ['ok', 'ab'], n: 1, b: null } } };
    expect(await documentAccepts('POST', '/integrations', clean)).toBe(true);
    const ok = await call('POST', '/integrations', clean);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });
});

describe('bulk enrichment selection', () => {
  const path = '/contacts/bulk-enrichment/estimate';
  it('conditions are paths of the contact catalog, in the document as on the server', async () => {
    // schemathesis: the document's own example, `{"field": "title", …}`, answered 400 "unknown field title"
    const byTitle = { fields: ['emails'], conditions: [{ field: 'title', operator: 'LIKE', value: '%engineer%' }] };
    expect(await documentAccepts('POST', path, byTitle)).toBe(false);
    expect((await call('POST', path, byTitle)).status).toBe(400);
    const byJobTitle = { fields: ['emails'], conditions: [{ field: 'contact.jobTitle', operator: 'LIKE', value: '%engineer%' }], groupedCondition: { operator: 'OR', conditions: [{ field: 'contact.firstName', operator: 'IS NOT EMPTY' }] } };
    expect(await documentAccepts('POST', path, byJobTitle)).toBe(true);
    const r = await call('POST', path, byJobTitle);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  });
  it('contactIds alone, or a segment / conditions: the document says so, the server answers with its codes', async () => {
    // schemathesis: contactIds beside segmentId and conditions was schema-valid, answered 400 selection_conflict
    const conflict = { fields: ['emails'], contactIds: [UNKNOWN], segmentId: UNKNOWN, conditions: [] };
    expect(await documentAccepts('POST', path, conflict)).toBe(false);
    const c = await call('POST', path, conflict);
    expect(c.status).toBe(400);
    expect(c.body.error.code).toBe('selection_conflict');
    expect(await documentAccepts('POST', path, { fields: ['emails'] })).toBe(false);
    expect((await call('POST', path, { fields: ['emails'] })).body.error.code).toBe('selection_required');
    for (const body of [{ fields: ['emails'], segmentId: UNKNOWN, conditions: [] }, { fields: ['emails'], conditions: [] }]) {
      expect(await documentAccepts('POST', path, body), JSON.stringify(body)).toBe(true);
      expect([200, 404], JSON.stringify(body)).toContain((await call('POST', path, body)).status);
    }
    expect(await documentAccepts('POST', '/contacts/bulk-enrichment', conflict)).toBe(false);
  });
  it('a well-formed contact id the workspace does not have is a 404 naming contactIds', async () => {
    // schemathesis: answered 400 contacts_not_found
    for (const p of [path, '/contacts/bulk-enrichment']) {
      const r = await call('POST', p, { fields: ['emails'], contactIds: [UNKNOWN] });
      expect([r.status, r.body.error.code]).toEqual([404, 'contacts_not_found']);
      expect(r.body.error.details.map((d: { path: string }) => d.path)).toEqual(['/contactIds']);
    }
  });
  it('rows: `after` beyond any seq is refused by the schema, not by the database', async () => {
    // schemathesis (stateful): after=1552029573604721328092348416 was schema-valid, answered 400 invalid_value
    const r = await call('GET', `/contacts/bulk-enrichment/${UNKNOWN}/rows?after=1552029573604721328092348416`);
    expect([r.status, r.body.error.code]).toEqual([400, 'validation_failed']);
    expect(r.body.error.details.map((d: { path: string }) => d.path)).toEqual(['/query/after']);
    const after = (await call('GET', '/openapi.json')).body.paths['/contacts/bulk-enrichment/{jobId}/rows'].get.parameters.find((p: { name: string }) => p.name === 'after');
    expect(after.schema.maximum).toBe(2 ** 31 - 1);
  });
});

describe('discovery v2 condition trees', () => {
  const leaf = () => ({ field: 'dsCompany.company_name', operator: 'IS NOT EMPTY' });
  it('every tree within the maxItems of its depth is taken, whatever its total', async () => {
    // schemathesis: 100 root conditions beside a group of one answered 400 "at most 100 conditions"
    for (const path of ['/discovery-search/find-contacts-v2', '/discovery-search/find-companies-v2']) {
      const l = leaf();
      const likes = Array.from({ length: 10 }, (_, i) => ({ field: 'dsCompany.company_name', operator: 'LIKE', value: `%${i}%` }));
      const third = { operator: 'OR', conditions: [l, l, l] };
      const second = { operator: 'NOT', conditions: [...likes.slice(0, 9), third] };
      const body = { conditions: Array.from({ length: 100 }, () => l), groupedCondition: { operator: 'AND', conditions: [...Array.from({ length: 29 }, () => l), second] }, limit: 1 };
      expect(await documentAccepts('POST', path, body)).toBe(true);
      const r = await call('POST', path, body);
      expect(r.status, `${path} ${JSON.stringify(r.body).slice(0, 300)}`).toBe(200);
      // one more LIKE in a full second-level group: 11 LIKEs in the query, still within every list
      const moreLikes = { groupedCondition: { operator: 'OR', conditions: [{ operator: 'AND', conditions: likes }, likes[0]] }, limit: 1 };
      expect(await documentAccepts('POST', path, moreLikes)).toBe(true);
      expect((await call('POST', path, moreLikes)).status).toBe(200);
    }
  });
  it('a list over its depth\'s maxItems, or a group too deep, is refused by the schema, naming the list', async () => {
    const path = '/discovery-search/find-contacts-v2';
    const l = leaf();
    const wide = { groupedCondition: { operator: 'AND', conditions: [{ operator: 'OR', conditions: Array.from({ length: 11 }, () => l) }] } };
    const deep = { groupedCondition: { operator: 'AND', conditions: [{ operator: 'OR', conditions: [{ operator: 'AND', conditions: [{ operator: 'OR', conditions: [l] }] }] }] } };
    for (const [body, at] of [[wide, '/groupedCondition/conditions/0/conditions'], [deep, '/groupedCondition/conditions/0/conditions/0/conditions/0']] as const) {
      expect(await documentAccepts('POST', path, body)).toBe(false);
      const r = await call('POST', path, body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
      expect(r.body.error.details.map((d: { path: string }) => d.path), JSON.stringify(r.body)).toContain(at);
    }
  });
});

describe('contact PATCH', () => {
  it('a work email of white space only clears it, as the schema allows', async () => {
    // schemathesis: workEmail "\u2007\u2007\f\u2028" matched EMAIL_OR_BLANK_PATTERN, answered 400 "is not an email address"
    const src = await call('POST', '/sources', { sourceType: 'importFromWebhook', sourceMeta: {} });
    expect(src.status, JSON.stringify(src.body)).toBe(200);
    const created = await call('POST', `/contacts/${src.body.data.id}`, { 'contact.firstName': 'Ada', 'contact.workEmail': 'ada@analytical.example' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.data.id;
    const body = { workEmail: '\u2007\u2007\f\u2028' };
    expect(await documentAccepts('PATCH', '/contacts/{id}', body)).toBe(true);
    const r = await call('PATCH', `/contacts/${id}`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.workEmail ?? null).toBeNull();
  });
});

describe('sources sourceMeta', () => {
  it('the document refuses a NUL in a nested key, as the server does', async () => {
    // schemathesis: a sourceMeta value {"a\u0000": 1} was schema-valid, answered 400
    for (const sourceMeta of [{ keyword: 'nul keys', extra: { 'a\u0000': 1 } }, { keyword: 'nul keys', 'b\u0000': 1 }]) {
      const body = { sources: [{ sourceType: 'pronetKeywordSearch', sourceMeta }] };
      expect(await documentAccepts('POST', '/sources/bulk-upsert', body), JSON.stringify(sourceMeta)).toBe(false);
      expect((await call('POST', '/sources/bulk-upsert', body)).status).toBe(400);
    }
    const clean = { sources: [{ sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'nul keys', extra: { a: 1 } } }] };
    expect(await documentAccepts('POST', '/sources/bulk-upsert', clean)).toBe(true);
  });
});

describe('sources runFrequency', () => {
  it('half a runFrequency on a source that has none is a conflict with its state (409), not a 400', async () => {
    // schemathesis: {"runFrequency": {"numberOfPastDaysToSync": "090"}} was schema-valid, answered 400
    const s = await call('POST', '/sources', { sourceType: 'pronetKeywordSearch', sourceMeta: { keyword: 'half frequency' } });
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    const r = await call('PATCH', `/sources/${s.body.data.id}`, { runFrequency: { numberOfPastDaysToSync: '7' } });
    expect([r.status, r.body.error?.code]).toEqual([409, 'run_frequency_incomplete']);
    expect(r.body.error.details.map((d: { path: string }) => d.path)).toEqual(['/runFrequency/periodicInterval']);
    const whole = await call('PATCH', `/sources/${s.body.data.id}`, { runFrequency: { numberOfPastDaysToSync: '7', periodicInterval: '1d' } });
    expect(whole.status, JSON.stringify(whole.body)).toBe(200);
    expect((await call('PATCH', `/sources/${s.body.data.id}`, { runFrequency: { numberOfPastDaysToSync: '3' } })).status).toBe(200);
  });
});

describe('verified search inputs', () => {
  it('an input given twice is taken, the first applying', async () => {
    // schemathesis: inputFieldMapping naming companyNameInclude twice was schema-valid, answered 400 "is given more than once"
    for (const [path, name] of [['/discovery-search/find-verified-contacts', 'countryInclude'], ['/discovery-search/find-verified-companies', 'companyCountryInclude']] as const) {
      const body = { page: 1, limit: 1, inputFieldMapping: [{ sourceFieldName: name, userInput: ['Zz'] }, { sourceFieldName: name, userInput: ['Yy'] }] };
      expect(await documentAccepts('POST', path, body)).toBe(true);
      const r = await call('POST', path, body);
      expect(r.status, `${path} ${JSON.stringify(r.body).slice(0, 300)}`).toBe(200);
    }
  });

  it('a range written high-low is the range between its ends', async () => {
    // schemathesis: companyHeadcountRange ['200-51'] was schema-valid, answered 400 "min must not exceed max"
    const path = '/discovery-search/find-verified-companies';
    const ids = async (input: { sourceFieldName: string; userInput: unknown }) => {
      const body = { page: 1, limit: 25, inputFieldMapping: [input] };
      expect(await documentAccepts('POST', path, body)).toBe(true);
      const r = await call('POST', path, body);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
      return r.body.data.map((c: { id: string }) => c.id);
    };
    expect(await ids({ sourceFieldName: 'companyHeadcountRange', userInput: ['500-11'] })).toEqual(await ids({ sourceFieldName: 'companyHeadcountRange', userInput: ['11-500'] }));
    expect(await ids({ sourceFieldName: 'companyRevenue', userInput: { min: '50M', max: '1M' } })).toEqual(
      await ids({ sourceFieldName: 'companyRevenue', userInput: { min: '1M', max: '50M' } }),
    );
  });
});
