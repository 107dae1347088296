/**
 * The contract's resource tables (API-SPEC "Resources and their fields": Contact, Company
 * record, Source, Segment, Media object, verified schema item) as JSON Schemas written here from
 * those tables — not from the service's TypeBox schemas — and the real responses of every
 * endpoint returning one of them, validated against them on the real stack.
 *
 * Where the tables say `string` for a value a record may not know, the schemas allow `null`: the
 * decision of issue 12 (docs/CONTACTS.md "Null vs absent"). Properties beyond the tables are
 * allowed (the contract shows only some fields).
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDataset } from '../../db/datasetImport.js';
import { startTestApp, type TestApp } from '../harness.js';

// ---------------------------------------------------------------------------------------------
// JSON Schemas from the contract's tables

const str = { type: 'string' } as const;
const maybe = (s: object) => ({ anyOf: [s, { type: 'null' }] });
const url = { type: 'string', pattern: '^https?://[^\\s/]+' } as const;
/** "ISO 8601 UTC timestamp with milliseconds". */
const timestamp = { type: 'string', pattern: '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$' } as const;
const headcount = { type: 'string', pattern: '^\\d+-\\d+$' } as const;
const obj = (properties: Record<string, object>, required: string[] = Object.keys(properties)) => ({ type: 'object', properties, required });

/** Company summary (embedded in a contact). */
const companySummary = obj({ id: str, companyName: maybe(str), companyWebsite: maybe(url), companyIndustry: maybe(str), companyHeadcount: maybe(headcount) });

/** Contact: every row of the table. */
const contactProperties = {
  id: str,
  firstName: maybe(str),
  lastName: maybe(str),
  fullName: maybe(str),
  title: maybe(str),
  pronet: maybe(url),
  emails: { type: 'array', items: str },
  sources: { type: 'array', items: str },
  companies: { type: 'array', items: str },
  primaryCompanyId: maybe(str),
  company: maybe(companySummary),
  createdAt: timestamp,
  updatedAt: timestamp,
  customFields: { type: 'object' },
};
const contact = obj(contactProperties);
/** A contact record answered with `fields` (discovery, by-segment): `id` plus properties of the Contact table (which ones: "not shown"). */
const contactRecord = obj({ ...contactProperties, company: maybe({ ...companySummary, required: [] }) }, ['id']);

/** Company record (result of find-companies-v2): all strings; profile URL, website URL, headcount range. */
const companyRecord = obj({
  id: str,
  companyName: maybe(str),
  companyWebsite: maybe(url),
  companyPronet: maybe(url),
  companyIndustry: maybe(str),
  companyHeadcount: maybe(headcount),
  companyCity: maybe(str),
  companyState: maybe(str),
  companyCountry: maybe(str),
});

const SOURCE_TYPES = ['pronetInbound', 'pronetOutbound', 'pronetPost', 'pronetKeywordSearch', 'pronetJobPosting', 'importFromWebhook'];
const source = obj({
  id: str,
  type: { const: 'sources' },
  attributes: obj({
    sourceType: { enum: SOURCE_TYPES },
    sourceIdentifier: maybe(str),
    sourceMeta: { type: 'object' },
    refreshStatus: maybe(str),
    createdAt: timestamp,
    runFrequency: maybe(obj({ numberOfPastDaysToSync: str, periodicInterval: str })),
  }),
});
const segment = obj({
  id: str,
  type: { const: 'segments' },
  attributes: obj({ name: str, clonedFrom: maybe(str), segmentSources: { type: 'array' }, isDefault: { type: 'boolean' } }),
});
const media = obj({ fileName: str, fileSizeInBytes: { type: 'integer' }, contentType: str, readUrl: url });

const option = obj({ label: str, value: {} });
const childItem = {
  $id: 'childItem',
  ...obj({
    name: str,
    jsonKey: str,
    writeAccessPath: str,
    parentField: str,
    type: str,
    displayName: str,
    filteringSupported: { type: 'boolean' },
    options: { type: 'array', items: option },
    optionsLink: str,
    suggestionLink: str,
    hasMoreOptions: { type: 'boolean' },
    childFields: { type: 'array', items: { $ref: 'childItem' } },
  }),
};
const verifiedSchemaItem = obj({
  name: str,
  readAccessPath: str,
  writeAccessPath: str,
  type: str,
  displayName: str,
  description: str,
  filteringSupported: { type: 'boolean' },
  groupNames: { type: 'array', items: str },
  userInputShape: str,
  userInputWrapKey: str,
  verifiedDiscoveryField: { type: 'boolean' },
  exampleUserInput: {},
  options: { type: 'array', items: option },
  optionsLink: str,
  suggestionLink: str,
  hasMoreOptions: { type: 'boolean' },
  childFields: { type: 'array', items: { $ref: 'childItem' } },
});
const verifiedSchemaResponse = obj({
  data: { type: 'array', items: verifiedSchemaItem, minItems: 1 },
  meta: obj({ groupsOrder: { type: 'array', items: str }, schemaVersion: { const: 'verified-v1' }, inputFieldMappingContract: { type: 'object' }, jsonFieldExamples: { type: 'array' } }),
});
const meta = obj({ totalRecords: { type: 'integer' }, previousToken: str, nextToken: str });

const one = (s: object) => obj({ data: s });
const list = (s: object) => obj({ data: { type: 'array', items: s, minItems: 1 } });
const page = (s: object) => obj({ data: { type: 'array', items: s, minItems: 1 }, meta });

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats.default(ajv);
ajv.addSchema(childItem);

function check(schema: object, res: { status: number; body: unknown }, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(200);
  const validate: ValidateFunction = ajv.compile(schema);
  const ok = validate(res.body);
  expect(ok ? [] : validate.errors!.map((e) => `${e.instancePath} ${e.message}`), `${what}: ${JSON.stringify(res.body).slice(0, 2000)}`).toEqual([]);
}

// ---------------------------------------------------------------------------------------------

let app: TestApp;
let key: string;
let server: Server;
let serverUrl: string;

/** A real 1×1 PNG. */
function png(): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc32 = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0);
  ihdr.writeUInt32BE(1, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.from([0, 255, 0, 0]))), chunk('IEND', Buffer.alloc(0))]);
}

beforeAll(async () => {
  // The worker runs media import and chunk assembly.
  app = await startTestApp();
  key = (await app.createWorkspace({ credits: 1_000_000, plan: 'enterprise' })).apiKey;
  server = createServer((_req, res) => {
    const body = png();
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': body.length }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  serverUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const dir = mkdtempSync(join(tmpdir(), 'contract-ds-'));
  writeFileSync(
    join(dir, 'companies.jsonl'),
    [
      { company_pronet_url: 'https://www.pronet.com/company/engines-ltd', company_name: 'Engines Ltd', company_website: 'https://engines.example', industry: 'Manufacturing', size_range: '11-50', employee_count: 40, hq_city: 'London', hq_country: 'United Kingdom', verified: true },
      { company_pronet_url: 'https://pronet.com/company/bare-co', verified: true },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n'),
  );
  writeFileSync(
    join(dir, 'people.jsonl'),
    [
      { member_pronet_url: 'https://www.pronet.com/in/ada', member_full_name: 'Ada Lovelace', member_first_name: 'Ada', member_last_name: 'Lovelace', member_job_title: 'CFO', member_seniority: 'CXO', member_emails: [{ email: 'ada@engines.example', status: 'valid' }], company_pronet_url: 'https://www.pronet.com/company/engines-ltd', verified: true },
      { member_pronet_url: 'https://pronet.com/in/nobody', verified: true },
    ]
      .map((r) => JSON.stringify(r))
      .join('\n'),
  );
  expect((await importDataset(app.pool, { companies: join(dir, 'companies.jsonl'), people: join(dir, 'people.jsonl') })).errorCount).toBe(0);
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await app?.close();
});

const post = (path: string, body: unknown) => app.http('POST', path, { apiKey: key, body });
const patch = (path: string, body: unknown) => app.http('PATCH', path, { apiKey: key, body });
const get = (path: string) => app.http('GET', path, { apiKey: key });

describe("responses match the contract's resource tables", () => {
  it('Contact: single read, bulk fetch, filter, by-segment, patch, upsert; discovery and verified contact records', async () => {
    const src = await post('/sources', { sourceType: 'pronetPost', sourceIdentifier: 'https://www.pronet.com/posts/contract-1' });
    const withCompany = await post(`/contacts/${src.body.data.id}`, {
      'contact.firstName': 'Grace',
      'contact.pronet': 'https://www.pronet.com/in/grace',
      'contact.workEmail': 'grace@navy.example',
      'company.companyName': 'Navy',
      'company.companyWebsite': 'https://navy.example',
      'company.companyHeadcount': '1001-5000',
    });
    check(one(contact), withCompany, 'POST /contacts/{sourceId}');
    const bare = await post(`/contacts/${src.body.data.id}`, { 'contact.workEmail': 'bare@contract.example' });
    check(one(contact), bare, 'POST /contacts/{sourceId} (no company)');
    const ids = [withCompany.body.data.id, bare.body.data.id];
    for (const id of ids) check(one(contact), await get(`/contacts/${id}`), 'GET /contacts/{id}');
    check(list(contact), await post('/contacts/bulk-fetch', { contactIds: ids }), 'POST /contacts/bulk-fetch');
    check(page(contact), await post('/contacts/filter-contacts', {}), 'POST /contacts/filter-contacts');
    check(page(contactRecord), await post('/contacts/filter-contacts', { fields: ['contact.firstName', 'contact.pronet', 'company.companyName'] }), 'POST /contacts/filter-contacts with fields');
    check(one(contact), await patch(`/contacts/${ids[1]}`, { lastName: 'Doe' }), 'PATCH /contacts/{id}');
    const all = ((await get('/segments/search?q=')).body.data as { id: string; attributes: { isDefault: boolean } }[]).find((s) => s.attributes.isDefault)!;
    check(page(contactRecord), await post(`/contacts/by-segment/${all.id}`, { fields: ['contact.firstName', 'contact.lastName', 'contact.pronet', 'contact.emails', 'company.companyName', 'company.companyWebsite'] }), 'POST /contacts/by-segment/{segmentId}');
    check(page(contactRecord), await post('/discovery-search/find-contacts-v2', {}), 'POST /discovery-search/find-contacts-v2');
    check(
      page(contactRecord),
      await post('/discovery-search/find-contacts-v2', { fields: ['dsContact.member_pronet_url', 'dsContact.member_emails', 'dsCompany.company_website', 'dsCompany.size_range'] }),
      'POST /discovery-search/find-contacts-v2 with fields',
    );
    check(page(contactRecord), await post('/discovery-search/find-verified-contacts', { fields: ['fullName', 'pronet', 'emails', 'companyName', 'companyWebsite'] }), 'POST /discovery-search/find-verified-contacts');
  });

  it('Company record: find-companies-v2 and find-verified-companies', async () => {
    const v2 = await post('/discovery-search/find-companies-v2', {});
    check(page(companyRecord), v2, 'POST /discovery-search/find-companies-v2');
    expect(v2.body.data).toHaveLength(2);
    check(page(companyRecord), await post('/discovery-search/find-verified-companies', {}), 'POST /discovery-search/find-verified-companies');
  });

  it('Source: create, get, patch, bulk fetch, filter', async () => {
    const created = await post('/sources', { sourceType: 'pronetInbound', sourceIdentifier: 'https://www.pronet.com/in/contract-owner' });
    check(one(source), created, 'POST /sources');
    expect(created.body.data.attributes.refreshStatus).toBeNull();
    const id = created.body.data.id;
    check(one(source), await get(`/sources/${id}`), 'GET /sources/{id}');
    const scheduled = await patch(`/sources/${id}`, { runFrequency: { numberOfPastDaysToSync: '7', periodicInterval: 'PT6H' } });
    check(one(source), scheduled, 'PATCH /sources/{id}');
    check(one(source), await patch(`/sources/${id}`, { runFrequency: null }), 'PATCH /sources/{id} (no schedule)');
    check(list(source), await post('/sources/bulk-fetch', { sourceIds: [id] }), 'POST /sources/bulk-fetch');
    check(page(source), await post('/sources/filter-sources/pronetInbound', {}), 'POST /sources/filter-sources/{sourceType}');
  });

  it('Segment: create, get, patch, search, clone', async () => {
    const created = await post('/segments', { name: 'Contract segment' });
    check(one(segment), created, 'POST /segments');
    const id = created.body.data.id;
    check(one(segment), await get(`/segments/${id}`), 'GET /segments/{id}');
    check(one(segment), await patch(`/segments/${id}`, { name: 'Contract segment 2' }), 'PATCH /segments/{id}');
    check(list(segment), await get('/segments/search?q=contract'), 'GET /segments/search');
    const clone = await post(`/segments/${id}/clone`, {});
    check(one(segment), clone, 'POST /segments/{id}/clone');
    expect(clone.body.data.attributes.clonedFrom).toBe(id);
  });

  it('Media object: upload, assemble-chunks, import-from-url', async () => {
    const fd = new FormData();
    fd.append('file', new Blob([new Uint8Array(png())], { type: 'image/png' }), 'dot.png');
    check(media, await app.http('POST', '/v1/media/upload', { apiKey: key, rawBody: fd }), 'POST /v1/media/upload');
    const chunkForm = new FormData();
    chunkForm.append('file', new Blob([new Uint8Array(png())], { type: 'application/octet-stream' }), 'part-1');
    const chunk = await app.http('POST', '/v1/media/upload?chunk=true', { apiKey: key, rawBody: chunkForm });
    check(media, chunk, 'POST /v1/media/upload?chunk=true');
    check(media, await post('/v1/media/assemble-chunks', { chunks: [{ fileName: chunk.body.fileName, chunkNumber: 1 }], fileExtension: 'png' }), 'POST /v1/media/assemble-chunks');
    check(media, await post('/v1/media/import-from-url', { url: `${serverUrl}/dot.png` }), 'POST /v1/media/import-from-url');
  });

  it('verified schema items: both verified catalogs', async () => {
    for (const entity of ['contact', 'company']) check(verifiedSchemaResponse, await get(`/schema/verified-discovery/${entity}`), `GET /schema/verified-discovery/${entity}`);
  });
});
