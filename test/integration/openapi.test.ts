import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestApp, type TestApp } from '../harness.js';
import { routeGroups } from '../../api/routes/index.js';

let app: TestApp;
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
    for (const group of routeGroups) for (const r of group) expect(doc.paths[r.path]?.[r.method], `${r.method} ${r.path}`).toBeTruthy();
  });
});
