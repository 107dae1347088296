/**
 * Bulk upserts from a contacts file (CSV or JSON Lines) uploaded through the media routes and
 * referenced by `contactsFile.fileName`: the same job as inline rows (mapping, identity
 * resolution, per-row errors, progress, webhook), the file read from the object store in segments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { startJob } from '../../api/jobs.js';
import { startTestApp, type TestApp } from '../harness.js';
import { inWorkspaceScope } from '../../db/tenancy.js';

let app: TestApp;
let hook: Server;
let hookUrl: string;
const received: any[] = [];

beforeAll(async () => {
  app = await startTestApp();
  hook = createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      received.push(JSON.parse(data));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await new Promise((r) => hook?.close(r));
  await app?.close();
});

const MAPPING = [
  ['First Name', 'contact.firstName'],
  ['Last Name', 'contact.lastName'],
  ['Email', 'contact.workEmail'],
  ['Title', 'contact.jobTitle'],
  ['Company', 'company.companyName'],
].map(([sourceFieldName, targetFieldName]) => ({ sourceFieldName, targetFieldName }));

const post = (path: string, body: unknown, apiKey: string) => app.http('POST', path, { apiKey, body });

async function setup() {
  const ws = await app.createWorkspace();
  const src = await post('/sources', { sourceType: 'importFromWebhook', sourceIdentifier: `file-${Date.now()}`, sourceMeta: { config: { fieldMapping: MAPPING } } }, ws.apiKey);
  expect(src.status, JSON.stringify(src.body)).toBe(200);
  return { ws, sourceId: src.body.data.id as string };
}

function uploadPart(apiKey: string, body: Buffer, query = '', declared = query ? 'application/octet-stream' : 'text/csv', path = '/contact-files') {
  const fd = new FormData();
  fd.append('file', new Blob([new Uint8Array(body)], { type: declared }), 'contacts.bin');
  return app.http('POST', `${path}${query}`, { apiKey, rawBody: fd });
}

/** Uploads `body` in chunks of `chunkBytes` and assembles them. */
async function uploadChunked(apiKey: string, body: Buffer, fileExtension: string, chunkBytes = 5 * 1024 * 1024) {
  const chunks = [];
  for (let i = 0, n = 1; i < body.length; i += chunkBytes, n++) {
    const r = await uploadPart(apiKey, body.subarray(i, i + chunkBytes), '?chunk=true');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    chunks.push({ fileName: r.body.fileName, chunkNumber: n });
  }
  return post('/contact-files/assemble-chunks', { chunks, fileExtension }, apiKey);
}

const csvCell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

describe('bulk upsert from a contacts file', () => {
  it('imports a CSV uploaded in chunks: quoted commas and newlines, BOM, CRLF, bad rows as row errors, webhook', async () => {
    const { ws, sourceId } = await setup();
    const N = 3000;
    // An unmapped Notes column makes the file > 5 MiB, so it travels in two chunks cut mid-record.
    const notes = 'n'.repeat(1900);
    const records: string[] = [];
    for (let i = 0; i < N; i++) {
      const title = i % 3 === 0 ? `Head of\nSales, "EMEA" ${i}` : `Engineer ${i}`;
      records.push([`First${i}`, `Last${i}`, `person${i}@corp${i % 7}.example.com`, title, `Corp, ${i % 7}`, notes].map(csvCell).join(','));
    }
    records[10] = ['Broken', 'Email', 'not-an-email', 'x', 'y', ''].join(','); // a mapping error
    records[20] = 'Too,Many,fields@x.com,a,b,c,d'; // 7 fields under a 6-column header
    records[30] = '"Stray"quote,Q,stray@x.com,t,c,'; // malformed CSV: text after a closing quote
    records[N - 2] = 'Open,"never closed,open@x.com,t,c,'; // a quote never closed: the record is its line
    const body = '\uFEFF' + ['First Name,Last Name,Email,Title,Company,Notes', ...records.slice(0, 500), '', ...records.slice(500)].join('\r\n') + '\r\n';
    const file = Buffer.from(body);
    expect(file.length).toBeGreaterThan(5 * 1024 * 1024);
    const up = await uploadChunked(ws.apiKey, file, 'csv');
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body).toMatchObject({ contentType: 'text/csv', fileSizeInBytes: file.length });
    expect(up.body.fileName).toMatch(/\.csv$/);

    const res = await post(`/contacts/${sourceId}/bulk-upsert-contacts`, { contactsData: [], contactsFile: { fileName: up.body.fileName }, webhookConfiguration: { url: hookUrl } }, ws.apiKey);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const job = await app.waitForJob(res.body.jobId, ws.apiKey, 120_000);
    expect(job.jobStatus, JSON.stringify(job.error)).toBe('completed');
    expect(job.progress).toEqual({ completed: N, total: N, percent: 100 });
    expect(job.jobResponsePayload).toMatchObject({
      sourceId,
      totalRows: N,
      processedRows: N,
      created: N - 4,
      updated: 0,
      failed: 4,
      contactsFile: { fileName: up.body.fileName, fileSizeInBytes: file.length, bytesRead: file.length, complete: true },
    });
    expect(job.jobResponsePayload.errors).toEqual([
      { row: 10, path: '/contactsFile/rows/10/Email', message: 'not-an-email is not an email address' },
      { row: 20, path: '/contactsFile/rows/20', message: 'has 7 fields; the header has 6' },
      { row: 30, path: '/contactsFile/rows/30', message: expect.stringMatching(/^is not a well-formed CSV record: a quoted field is followed by/) },
      // The open quote runs into the next line, whose quotes then do not close it properly.
      { row: N - 2, path: `/contactsFile/rows/${N - 2}`, message: expect.stringMatching(/^is not a well-formed CSV record: a quoted field is/) },
    ]);
    // Values came through exactly: quoted commas, embedded newlines and doubled quotes.
    const three = await post('/contacts/filter-contacts', { conditions: [{ field: 'contact.workEmail', operator: '==', value: 'person3@corp3.example.com' }], fields: ['contact.firstName', 'contact.jobTitle', 'company.companyName'] }, ws.apiKey);
    expect(three.body.data.map(({ id: _id, ...c }: any) => c)).toEqual([{ firstName: 'First3', title: 'Head of\nSales, "EMEA" 3', company: { companyName: 'Corp, 3' } }]);
    const last = await post('/contacts/filter-contacts', { conditions: [{ field: 'contact.workEmail', operator: '==', value: `person${N - 1}@corp${(N - 1) % 7}.example.com` }], fields: ['contact.firstName'] }, ws.apiKey);
    expect(last.body.data.map((c: any) => c.firstName)).toEqual([`First${N - 1}`]); // the row after the unclosed quote
    const all = await post('/contacts/filter-contacts', { fields: ['contact.firstName'], limit: 1 }, ws.apiKey);
    expect(all.body.meta.totalRecords).toBe(N - 4);
    expect((await app.pool.query(`select count(*)::int as n from contact_ingest_staging`)).rows[0].n).toBe(0);
    for (let i = 0; i < 100 && !received.some((r) => r.jobId === res.body.jobId); i++) await new Promise((r) => setTimeout(r, 100));
    expect(received.find((r) => r.jobId === res.body.jobId)).toMatchObject({ type: 'job.completed', jobType: 'bulk-upsert', jobResponsePayload: { created: N - 4, failed: 4 } });

    // The same file again: identity resolution finds every contact.
    const again = await post(`/contacts/${sourceId}/bulk-upsert-contacts`, { contactsData: [], contactsFile: { fileName: up.body.fileName } }, ws.apiKey);
    expect((await app.waitForJob(again.body.jobId, ws.apiKey, 120_000)).jobResponsePayload).toMatchObject({ created: 0, updated: N - 4, failed: 4 });
  });

  it('imports JSON Lines in segments, continuing as new, with progress that grows as the file is read', async () => {
    const { ws, sourceId } = await setup();
    const N = 2000;
    const lines = Array.from({ length: N }, (_, i) => JSON.stringify({ 'First Name': `Json${i}`, Email: `json${i}@lines.example.com`, Title: `Title ${i}`, Company: `Co ${i % 5}` }));
    lines[5] = '{"First Name": "Cut", "Email": '; // invalid JSON
    lines[6] = '["an", "array"]';
    lines[7] = JSON.stringify({ 'First Name': 'Bad', Email: 'nope' });
    lines[8] = JSON.stringify({ 'First Name': 'Nul\u0000', Email: 'nul@lines.example.com' });
    const file = Buffer.from('\uFEFF' + [...lines.slice(0, 100), '   ', ...lines.slice(100)].join('\n') + '\n');
    const up = await uploadPart(ws.apiKey, file, '', 'application/x-ndjson');
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body.contentType).toBe('application/x-ndjson');
    expect(up.body.fileName).toMatch(/\.jsonl$/);

    // Small chunks (100 rows, 2 per segment, 4 per run) so that the progress and the runs show.
    const { rows } = await app.pool.query(`select content_type, size_bytes from media_objects where file_name = $1`, [up.body.fileName]);
    expect(rows[0]).toMatchObject({ content_type: 'application/x-ndjson' });
    const batchId = '01a1ff4e-c0b3-77cc-8dc5-' + Date.now().toString(16).padStart(12, '0').slice(-12);
    // As the route does it: in the workspace's scope (row-level security).
    const accepted = await inWorkspaceScope(ws.workspaceId, () =>
      startJob(app.deps, {
        workspaceId: ws.workspaceId,
        job: 'bulk-upsert',
        args: { sourceId, batchId, totalRows: 0, file: { fileName: up.body.fileName, format: 'jsonl', sizeBytes: file.length }, chunkSize: 100, chunksPerRun: 4 },
      }),
    );
    const seen: { status: string; completed: number; total: number; percent: number; complete: boolean }[] = [];
    let job: any;
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
      job = (await app.http('GET', `/jobs/${accepted.jobId}`, { apiKey: ws.apiKey })).body.data;
      if (job.jobStatus !== 'running' && job.jobStatus !== 'queued') break;
      const p = job.jobResponsePayload;
      if (p) seen.push({ status: job.jobStatus, ...job.progress, complete: p.contactsFile.complete });
      await new Promise((r) => setTimeout(r, 15));
    }
    expect(job.jobStatus, JSON.stringify(job.error)).toBe('completed');
    expect(job.jobResponsePayload).toMatchObject({ totalRows: N, processedRows: N, created: N - 4, failed: 4, contactsFile: { bytesRead: file.length, complete: true } });
    expect(job.jobResponsePayload.errors).toEqual([
      { row: 5, path: '/contactsFile/rows/5', message: expect.stringMatching(/^is not valid JSON/) },
      { row: 6, path: '/contactsFile/rows/6', message: 'is not a JSON object' },
      { row: 7, path: '/contactsFile/rows/7/Email', message: 'nope is not an email address' },
      { row: 8, path: '/contactsFile/rows/8', message: '/First Name must not contain NUL (U+0000) characters' },
    ]);
    // While running: rows ingested never exceed rows read, both only grow, and some snapshot was mid-file.
    for (const [a, b] of seen.slice(1).map((s, i) => [seen[i]!, s] as const)) {
      expect(b.completed).toBeGreaterThanOrEqual(a.completed);
      expect(b.total).toBeGreaterThanOrEqual(a.total);
    }
    for (const s of seen) expect(s.completed).toBeLessThanOrEqual(s.total);
    expect(seen.some((s) => s.completed > 0 && s.completed < N && !s.complete && s.percent < 100)).toBe(true);
    const runs = await app.deps.temporal.workflow.list({ query: `WorkflowId = 'bulk-upsert-${accepted.jobId}'` });
    let n = 0;
    for await (const _ of runs) n++;
    expect(n).toBe(5); // 20 chunks, 4 per run
    expect((await app.pool.query(`select count(*)::int as n from contact_ingest_staging where batch_id = $1`, [batchId])).rows[0].n).toBe(0);
    const listed = await post('/contacts/filter-contacts', { fields: ['contact.firstName'], limit: 1 }, ws.apiKey);
    expect(listed.body.meta.totalRecords).toBe(N - 4);
    await app.recordHistory(`bulk-upsert-${accepted.jobId}`, 'bulkUpsert/file-jsonl-last-run');
  });

  it('refuses what is not a contacts file, a CSV whose header misses a mapped column, and rows beside a file', async () => {
    const { ws, sourceId } = await setup();
    const expect400 = (r: any, path: string, code = 'validation_failed') => {
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error.code).toBe(code);
      expect(r.body.error.details?.[0]?.path ?? r.body.error.message).toContain(path);
    };
    // Binary bytes declared as CSV are refused at upload, whole or chunked.
    expect400(await uploadPart(ws.apiKey, randomBytes(3000), '', 'text/csv'), '/file', 'file_type_not_allowed');
    const part = await uploadPart(ws.apiKey, Buffer.concat([Buffer.from('a,b\n'), randomBytes(3000)]), '?chunk=true');
    expect400(await post('/contact-files/assemble-chunks', { chunks: [{ fileName: part.body.fileName, chunkNumber: 1 }], fileExtension: 'csv' }, ws.apiKey), '/chunks/0/fileName', 'file_type_not_allowed');
    // A pretty-printed JSON document is neither CSV nor JSON Lines.
    expect400(await uploadPart(ws.apiKey, Buffer.from('{\n  "a": 1\n}\n')), '/file', 'file_type_not_allowed');
    // A real media file (GIF) is no contacts file: refused here, and as media it cannot be imported.
    const gifBytes = Buffer.from('GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;', 'latin1');
    expect400(await uploadPart(ws.apiKey, gifBytes, '', 'image/gif'), '/file', 'file_type_not_allowed');
    const gif = await uploadPart(ws.apiKey, gifBytes, '', 'image/gif', '/v1/media/upload');
    expect(gif.status, JSON.stringify(gif.body)).toBe(200);
    const bulk = (body: unknown) => post(`/contacts/${sourceId}/bulk-upsert-contacts`, body, ws.apiKey);
    expect400(await bulk({ contactsData: [], contactsFile: { fileName: gif.body.fileName } }), '/contactsFile/fileName', 'file_type_not_allowed');
    const missing = await bulk({ contactsData: [], contactsFile: { fileName: `${ws.workspaceId}/missing.csv` } });
    expect(missing.status, JSON.stringify(missing.body)).toBe(404); // a file the workspace does not have
    expect(missing.body.error.details[0].path).toBe('/contactsFile/fileName');
    const csv = await uploadPart(ws.apiKey, Buffer.from('First Name,Email\nA,a@x.com\n'));
    expect(csv.body.contentType).toBe('text/csv');
    expect400(await bulk({ contactsData: [], contactsFile: { fileName: csv.body.fileName } }), '/contactsFile/fileName'); // Last Name, Title, Company missing
    const dup = await uploadPart(ws.apiKey, Buffer.from('First Name,Last Name,Email,Title,Company,Email\nA,B,a@x.com,t,c,d\n'));
    expect400(await bulk({ contactsData: [], contactsFile: { fileName: dup.body.fileName } }), '/contactsFile/fileName');
    const good = await uploadPart(ws.apiKey, Buffer.from('First Name,Last Name,Email,Title,Company\nA,B,a@x.com,t,c\n'));
    expect400(await bulk({ contactsData: [{ 'First Name': 'X' }], contactsFile: { fileName: good.body.fileName } }), '/contactsData');
    expect400(await bulk({ contactsData: [] }), '/contactsData');
    expect400(await bulk({ contactsData: [], contactsFile: { fileName: good.body.fileName, extra: 1 } }), '/contactsFile');
    // Another workspace's file is unknown there.
    const other = await setup();
    const foreignFile = await post(`/contacts/${other.sourceId}/bulk-upsert-contacts`, { contactsData: [], contactsFile: { fileName: good.body.fileName } }, other.ws.apiKey);
    expect(foreignFile.status, JSON.stringify(foreignFile.body)).toBe(404);
    expect(foreignFile.body.error.details[0].path).toBe('/contactsFile/fileName');
    // The good file imports.
    const ok = await bulk({ contactsData: [], contactsFile: { fileName: good.body.fileName } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    expect((await app.waitForJob(ok.body.jobId, ws.apiKey)).jobResponsePayload).toMatchObject({ totalRows: 1, created: 1, failed: 0 });
  });
});
