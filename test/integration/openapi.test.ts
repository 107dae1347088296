import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
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
          const codes = s === 408 ? ['request_timeout'] : s === 431 ? ['headers_too_large'] : errorCodesOf(r as RouteDef, s);
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
});
