/**
 * A client generated from /openapi.json just works: two generators' TypeScript output compiles
 * with tsc as generated (strict), and the typescript-fetch client drives a short walkthrough
 * against the real stack (create a segment, create a source, upsert a contact into it, filter
 * contacts, read the balance). A document change that breaks a generator fails here: fix the
 * document, never the generated code.
 *
 * Generators: `openapi-typescript` (npm devDependency, pinned) and `openapi-generator`'s
 * typescript-fetch (the Java CLI jar installed by scripts/bootstrap.mjs into .tools).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT_DIR } from '../../domain/config.js';
import { startTestApp, type TestApp } from '../harness.js';

const OPENAPI_GENERATOR_JAR = join(ROOT_DIR, '.tools', 'openapi-generator', 'openapi-generator-cli.jar');
const bin = (name: string) => join(ROOT_DIR, 'node_modules', '.bin', name);
const workDir = join(ROOT_DIR, '.test-data', `generated-clients-${process.pid}`);
const TSCONFIG = {
  compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'bundler', strict: true, noEmit: true, lib: ['ES2022', 'DOM'], skipLibCheck: true },
  include: ['**/*.ts'],
};

/** tsc over a generated directory: its diagnostics (empty when it compiles). */
function tscErrors(dir: string): string {
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  try {
    execFileSync(bin('tsc'), ['-p', dir], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
    return '';
  } catch (e) {
    return String((e as { stdout?: string }).stdout ?? e);
  }
}

let app: TestApp;
let doc: Record<string, unknown>;
beforeAll(async () => {
  app = await startTestApp({ workerMode: 'inline' });
  doc = (await app.http('GET', '/openapi.json')).body;
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  writeFileSync(join(workDir, 'openapi.json'), JSON.stringify(doc));
  // openapi-generator's typescript-fetch (7.25.0) emits a WebhooksApi for the document's
  // `webhooks` that imports models it never generates; outbound webhooks are not calls a client
  // makes, so that generator gets the document without them (openapi-typescript types them).
  const { webhooks: _webhooks, ...withoutWebhooks } = doc;
  writeFileSync(join(workDir, 'openapi-paths.json'), JSON.stringify(withoutWebhooks));
}, 120_000);
afterAll(async () => {
  await app?.close();
  rmSync(workDir, { recursive: true, force: true });
});

describe('generated clients', () => {
  it('openapi-typescript: generates types that compile, webhooks included', () => {
    const out = join(workDir, 'openapi-typescript');
    mkdirSync(out);
    execFileSync(bin('openapi-typescript'), [join(workDir, 'openapi.json'), '-o', join(out, 'schema.d.ts')], { stdio: 'pipe' });
    // The types are used, so tsc checks them against what a caller writes.
    writeFileSync(
      join(out, 'use.ts'),
      [
        "import type { components, operations, webhooks } from './schema';",
        "type Segment = components['schemas']['Segment'];",
        "const grouped: Segment['attributes']['groupedCondition'] = { operator: 'AND', conditions: [{ field: 'contact.firstName', operator: '==', value: 'Ada' }, { operator: 'NOT', conditions: [{ field: 'contact.lastName', operator: '==', value: 'Babbage' }] }] };",
        "type DeleteConflict = operations['deleteSegmentsId']['responses'][409]['content']['application/json'];",
        "const code: DeleteConflict['error']['code'] = 'default_segment_protected';",
        "type Event = webhooks['job.completed']['post']['requestBody'];",
        "const event: NonNullable<Event>['content']['application/json']['type'] = 'job.completed';",
        'export { grouped, code, event };',
      ].join('\n'),
    );
    expect(tscErrors(out)).toBe('');
  }, 120_000);

  it('openapi-generator typescript-fetch: compiles and drives the walkthrough against the stack', async () => {
    expect(existsSync(OPENAPI_GENERATOR_JAR), `${OPENAPI_GENERATOR_JAR}: run node scripts/bootstrap.mjs`).toBe(true);
    const out = join(workDir, 'typescript-fetch');
    execFileSync('java', ['-jar', OPENAPI_GENERATOR_JAR, 'generate', '-i', join(workDir, 'openapi-paths.json'), '-g', 'typescript-fetch', '-o', out], { stdio: 'pipe' });
    expect(tscErrors(out)).toBe('');

    const client = await import(join(out, 'index.ts'));
    const ws = await app.createWorkspace({ credits: 25 });
    const config = new client.Configuration({ basePath: app.url, apiKey: ws.apiKey });
    const segments = new client.SegmentsApi(config);
    const sources = new client.SourcesApi(config);
    const contacts = new client.ContactsApi(config);
    const credits = new client.CreditsApi(config);

    const segment = await segments.postSegments({
      postSegmentsRequest: { name: 'Generated-client leads', conditions: [{ field: 'contact.lastName', operator: '==', value: 'Lovelace' }] },
    });
    expect(segment.data.type).toBe('segments');
    expect(segment.data.attributes.conditions).toEqual([{ field: 'contact.lastName', operator: '==', value: 'Lovelace' }]);

    const source = await sources.postSources({ postSourcesRequest: { sourceType: 'importFromWebhook', sourceIdentifier: 'generated-client' } });
    const upserted = await contacts.postContactsSourceId({
      id: source.data.id,
      requestBody: { 'contact.firstName': 'Ada', 'contact.lastName': 'Lovelace', 'contact.workEmail': 'ada@analytical.example' },
    });
    expect(upserted.data.fullName).toBe('Ada Lovelace');

    // `conditions`, not `groupedCondition`: typescript-fetch 7.25.0 merges the anyOf of a
    // Condition and a nested GroupedCondition into one model whose serializer reads both shapes'
    // arrays, and throws on a Condition (its own runtime, not the document's schema).
    const filtered = await contacts.postContactsFilterContacts({
      postContactsFilterContactsRequest: {
        fields: ['contact.fullName', 'contact.workEmail'],
        conditions: [{ field: 'contact.workEmail', operator: '==', value: 'ada@analytical.example' }],
      },
    });
    expect(filtered.meta.totalRecords).toBe(1);
    expect(filtered.data[0].id).toBe(upserted.data.id);

    const balance = await credits.getCreditsBalance();
    expect(balance.data.balance).toBe(25);
    // Dates the document calls date-time arrive as Date objects through the generated models.
    expect(balance.data.updatedAt).toBeInstanceOf(Date);

    // An error answers with a typed code the document lists for that operation.
    const failure = await segments.deleteSegmentsId({ id: '00000000-0000-4000-8000-000000000000' }).catch((e: { response: Response }) => e.response);
    expect(failure.status).toBe(404);
    expect((await failure.json()).error.code).toBe('not_found');
  }, 300_000);
});
