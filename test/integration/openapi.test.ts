import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { webhookPayload } from '../../workflows/job.js';
import { startTestApp, type TestApp } from '../harness.js';
import { routeGroups } from '../../api/routes/index.js';
import { errorCodesOf } from '../../api/openapi.js';
import type { RouteDef } from '../../api/route.js';

let app: TestApp;

/** The operation a route is published as: templates that differ only in parameter names are one path. */
function publishedOp(doc: any, r: { path: string; method: string }) {
  const shape = (p: string) => p.replace(/\{\w+\}/g, '{}');
  const path = Object.keys(doc.paths).find((p) => shape(p) === shape(r.path));
  return path ? doc.paths[path][r.method] : undefined;
}
beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
});
afterAll(() => app?.close());

describe('OpenAPI document', () => {
  it('validates as OpenAPI 3.1', async () => {
    const doc = (await app.http('GET', '/openapi.json')).body;
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  // issue 27 item 21: an empty `file` part answers 400 "is required", so the document says ≥ 1 byte.
  it('a multipart upload publishes a non-empty file part', async () => {
    const doc = (await app.http('GET', '/openapi.json')).body;
    for (const path of ['/v1/media/upload', '/contact-files']) {
      expect(doc.paths[path].post.requestBody.content['multipart/form-data'].schema.properties.file.minLength, path).toBe(1);
    }
  });

  it('documents every mounted route', async () => {
    const doc = (await app.http('GET', '/openapi.json')).body;
    for (const group of routeGroups) for (const r of group) expect(publishedOp(doc, r), `${r.method} ${r.path}`).toBeTruthy();
  });

  it('documents every status an operation can answer, each error with the envelope schema', async () => {
    const doc = (await app.http('GET', '/openapi.json')).body;
    for (const group of routeGroups) {
      for (const r of group) {
        const op = publishedOp(doc, r);
        const statuses = Object.keys(op.responses).map(Number);
        const expected = [400, 414, 429, 500, ...(r.auth === false ? [] : [401, 503]), ...(r.body || r.query ? [422] : []), ...(r.idempotent ? [409, 422] : []), ...(/\{/.test(r.path) ? [404] : []), ...(r.body ? [413, 415] : []), ...(r.errors ?? [])];
        expect(statuses, `${r.method} ${r.path}`).toEqual(expect.arrayContaining(expected));
        for (const s of statuses.filter((s) => s >= 400 && !(s in r.responses))) {
          const ref = op.responses[s].content['application/json'].schema.$ref as string;
          const envelope = doc.components.schemas[ref.replace('#/components/schemas/', '')];
          expect(envelope.properties.error.required, `${r.method} ${r.path} ${s}`).toEqual(['status', 'code', 'message', 'requestId']);
          // Each status names the codes this operation answers with it (errorCodesOf, a route's `errorCodes`).
          const codes = s === 408 ? ['request_timeout'] : s === 414 ? ['uri_too_long'] : s === 431 ? ['headers_too_large'] : errorCodesOf(r as RouteDef, s);
          expect(envelope.properties.error.properties.code.enum, `${r.method} ${r.path} ${s}`).toEqual(codes.length ? codes : undefined);
        }
        expect(op.responses['429'].headers['Retry-After'].required).toBe(true);
        expect(Object.keys(op.responses['429'].headers)).toEqual(expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']));
      }
    }
  });

  it('answers with the documented error envelope, rate-limit headers included', async () => {
    const ws = await app.createWorkspace();
    const res = await app.http('GET', '/segments/not-a-segment', { apiKey: ws.apiKey });
    expect(res.status).toBe(404);
    expect(Object.keys(res.body)).toEqual(['error']);
    expect(res.body.error).toMatchObject({ status: 404, code: expect.any(String), message: expect.any(String), requestId: res.headers.get('x-request-id') });
    expect(Number(res.headers.get('RateLimit-Limit'))).toBeGreaterThan(0);
  });

  it('closes response objects and links creators to the operations that take their ids', async () => {
    const doc = (await app.http('GET', '/openapi.json')).body;
    const created = doc.paths['/segments'].post.responses['200'];
    expect(created.content['application/json'].schema.additionalProperties).toBe(false);
    expect(created.links.getSegmentsId).toEqual({ operationId: 'getSegmentsId', parameters: { id: '$response.body#/data/id' } });
    expect(created.links.postContactsBySegmentSegmentId.parameters).toEqual({ segmentId: '$response.body#/data/id' });
    const job = doc.paths['/contacts/{sourceId}/bulk-upsert-contacts'].post.responses['202'];
    expect(job.links.getJobsJobId.parameters).toEqual({ jobId: '$response.body#/jobId' });
    // A body with no required property may be left out (it reads as `{}`).
    expect(doc.paths['/contacts/filter-contacts'].post.requestBody.required).toBe(false);
  });

  it('publishes templates that differ only in parameter names as one path', async () => {
    const doc = (await app.http('GET', '/openapi.json')).body;
    const shapes = Object.keys(doc.paths).map((p) => p.replace(/\{\w+\}/g, '{}'));
    expect(new Set(shapes).size).toBe(shapes.length);
    // POST /contacts/{sourceId} is published on /contacts/{id}, its parameter renamed by position.
    expect(doc.paths['/contacts/{id}'].post.parameters[0]).toMatchObject({ name: 'id', in: 'path' });
    const res = await app.http('OPTIONS', '/contacts/x');
    expect(res.headers.get('allow')?.split(/,\s*/).sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH', 'POST']);
  });

  it('names every schema, gives every JSON body and success response an example that its schema accepts', async () => {
    const doc = (await app.http('GET', '/openapi.json')).body;
    const schemas = doc.components.schemas as Record<string, { title?: string }>;
    for (const [name, schema] of Object.entries(schemas)) {
      // TypeBox names an unnamed recursive schema `T0`, `T1`…: give it an `$id`.
      expect(name, name).not.toMatch(/^T\d+$/);
      expect(schema.title, name).toBe(name);
    }
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    (addFormatsModule as unknown as (a: Ajv2020) => Ajv2020)(ajv);
    ajv.addSchema({ $id: 'https://doc.local/openapi.json', components: doc.components });
    const accepts = (schema: object, value: unknown) => {
      const validate = ajv.compile({ $id: `https://doc.local/${Math.random()}`, ...JSON.parse(JSON.stringify(schema).replace(/"#\/components/g, '"https://doc.local/openapi.json#/components')) });
      return validate(value) ? [] : validate.errors;
    };
    let checked = 0;
    const operations = [
      ...Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item as object).map(([method, op]) => [`${method} ${path}`, op] as const)),
      ...Object.entries(doc.webhooks).flatMap(([name, item]) => Object.entries(item as object).map(([method, op]) => [`webhook ${name} ${method}`, op] as const)),
    ];
    for (const [label, op] of operations) {
      const body = op.requestBody?.content?.['application/json'];
      if (body) {
        expect(body.example, `${label} request example`).toBeDefined();
        expect(accepts(body.schema, body.example), `${label} request example`).toEqual([]);
        checked++;
      }
      for (const [status, res] of Object.entries(op.responses as Record<string, { content?: Record<string, { schema: object; example?: unknown }> }>)) {
        const media = res.content?.['application/json'];
        if (!status.startsWith('2') || !media) continue;
        expect(media.example, `${label} ${status} example`).toBeDefined();
        expect(accepts(media.schema, media.example), `${label} ${status} example`).toEqual([]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(100);
  });

  it('types groupedCondition as the recursive schema ajv validates, in requests and in segment responses', async () => {
    const doc = (await app.http('GET', '/openapi.json')).body;
    const grouped = doc.components.schemas.GroupedCondition;
    expect(grouped.properties.conditions.items.anyOf).toEqual([{ $ref: '#/components/schemas/Condition' }, { $ref: '#/components/schemas/GroupedCondition' }]);
    const attributes = doc.components.schemas.Segment.properties.attributes.properties;
    expect(attributes.groupedCondition).toEqual({ anyOf: [{ $ref: '#/components/schemas/GroupedCondition' }, { type: 'null' }] });
    expect(attributes.conditions.items).toEqual({ $ref: '#/components/schemas/Condition' });
    // request bodies name the group of their catalog (ContactGroupedCondition …), typed the same way over its own leaves
    expect(doc.paths['/contacts/filter-contacts'].post.requestBody.content['application/json'].schema.properties.groupedCondition).toEqual({ $ref: '#/components/schemas/ContactGroupedCondition' });
    expect(doc.components.schemas.ContactGroupedCondition.properties.conditions.items.anyOf).toEqual([
      { $ref: '#/components/schemas/ContactCondition' },
      { $ref: '#/components/schemas/ContactGroupedCondition' },
    ]);
    // What the document says is what ajv says: a nested group with an unknown operator is a 400 naming it.
    const ws = await app.createWorkspace();
    const res = await app.http('POST', '/segments', { apiKey: ws.apiKey, body: { name: 'x', groupedCondition: { operator: 'AND', conditions: [{ operator: 'XOR', conditions: [] }] } } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain('/groupedCondition/conditions/0/operator');
  });

  it('publishes the job webhooks, whose payload is what the workflow sends', async () => {
    const doc = (await app.http('GET', '/openapi.json')).body;
    expect(Object.keys(doc.webhooks)).toEqual(['job.completed', 'job.failed', 'post.published', 'post.failed', 'integration.reauth_required', 'integration.expires_soon']);
    const schema = doc.components.schemas.JobWebhookEvent;
    expect(doc.webhooks['job.failed'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/JobWebhookEvent' });
    const ajv = new Ajv2020({ strict: false, validateSchema: false });
    (addFormatsModule as unknown as (a: Ajv2020) => Ajv2020)(ajv);
    const validate = ajv.compile(schema);
    const input = { jobId: 'j1', jobType: 'bulk-upsert', workspaceId: 'w' } as Parameters<typeof webhookPayload>[0];
    const completed = webhookPayload(input, { jobStatus: 'completed', progress: { completed: 1, total: 1, percent: 100 }, jobResponsePayload: { created: 1 }, error: null });
    const failed = webhookPayload(input, { jobStatus: 'failed', progress: null, jobResponsePayload: null, error: { code: 'x', message: 'y' } } as never);
    expect(validate(completed), JSON.stringify(validate.errors)).toBe(true);
    expect(validate(failed), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...completed, extra: 1 })).toBe(false);
  });

  it('documents the 404 of a custom field path the workspace does not have', async () => {
    // fuzzer, seed 20261122: both answered an undocumented 404.
    const doc = (await app.http('GET', '/openapi.json')).body;
    const ws = await app.createWorkspace();
    const unknown = 'contact.customFields.00000000-0000-0000-0000-000000000000';
    for (const [path, body, at] of [
      ['/contacts/filter-contacts', { fields: [unknown] }, '/fields/0'],
      ['/contacts/unique-values', { groupByField: unknown }, '/groupByField'],
    ] as const) {
      const res = await app.http('POST', path, { apiKey: ws.apiKey, body });
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.body.error.details[0].path).toBe(at);
      const ref = doc.paths[path].post.responses['404']?.content['application/json'].schema.$ref as string;
      expect(doc.components.schemas[ref.split('/').pop()!].properties.error.properties.code.enum).toContain(res.body.error.code);
    }
  });

  it('answers only error codes the operation documents', async () => {
    const doc = (await app.http('GET', '/openapi.json')).body;
    const ws = await app.createWorkspace();
    const segments = (await app.http('GET', '/segments/search', { apiKey: ws.apiKey })).body.data as { id: string; attributes: { isDefault: boolean } }[];
    const defaultSegment = segments.find((s) => s.attributes.isDefault)!;
    const res = await app.http('DELETE', `/segments/${defaultSegment.id}`, { apiKey: ws.apiKey });
    expect(res.status).toBe(409);
    const ref = doc.paths['/segments/{id}'].delete.responses['409'].content['application/json'].schema.$ref as string;
    expect(doc.components.schemas[ref.split('/').pop()!].properties.error.properties.code.enum).toEqual([res.body.error.code]);
  });
});
