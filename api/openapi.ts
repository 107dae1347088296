/** The OpenAPI 3.1 document, generated from the same route definitions and schemas ajv validates. */
import type { TSchema } from '@sinclair/typebox';
import { routeGroups } from './routes/index.js';
import { sharedSchemas } from './schemas/common.js';
import { refShared } from './validation.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'Validation failure', 401: 'Missing or invalid API key', 402: 'Insufficient credits', 403: 'Feature not available on this plan',
  404: 'Not found or not visible to the workspace', 409: 'Conflict', 413: 'Payload too large', 415: 'Unsupported media type',
  422: 'Idempotency key reused with another request', 429: 'Rate limited', 500: 'Server error', 503: 'Not ready',
};

/**
 * TypeBox emits `$ref: "Condition"`; OpenAPI wants `#/components/schemas/Condition`. Every schema
 * carrying an `$id` (shared ones, and recursive ones TypeBox names itself) becomes a component.
 */
const extraComponents = new Map<string, unknown>();
function toOpenApiSchema(schema: unknown): unknown {
  const walk = (v: unknown, top: boolean): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, false));
    if (!v || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    if (!top && typeof o.$id === 'string') {
      if (!extraComponents.has(o.$id)) {
        extraComponents.set(o.$id, null);
        extraComponents.set(o.$id, walk(o, true));
      }
      return { $ref: `#/components/schemas/${o.$id}` };
    }
    const out: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(o)) {
      if (k === '$id') continue;
      if (k === '$ref' && typeof val === 'string' && !val.startsWith('#')) out[k] = `#/components/schemas/${val}`;
      else out[k] = walk(val, false);
    }
    return out;
  };
  return walk(refShared(schema, false), true);
}

function isSchema(v: unknown): v is TSchema {
  return !!v && typeof v === 'object' && !('description' in v && Object.keys(v).every((k) => k === 'description' || k === 'schema'));
}

let cached: Record<string, unknown> | undefined;

export function buildOpenApi(serverUrl: string): Record<string, unknown> {
  if (cached) return { ...cached, servers: [{ url: serverUrl }] };
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const group of routeGroups) {
    for (const r of group) {
      tags.add(r.tag);
      const parameters: unknown[] = [];
      for (const [where, schema] of [['path', r.params], ['query', r.query]] as const) {
        const props = (schema as { properties?: Record<string, TSchema>; required?: string[] } | undefined)?.properties ?? {};
        for (const [name, s] of Object.entries(props)) {
          parameters.push({ name, in: where, required: where === 'path' || ((schema as { required?: string[] }).required ?? []).includes(name), schema: toOpenApiSchema(s) });
        }
      }
      if (r.idempotent) parameters.push({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 }, description: 'Replays the first response for 24 h' });
      const responses: Record<string, unknown> = {};
      for (const [status, spec] of Object.entries(r.responses)) {
        const schema = isSchema(spec) ? spec : (spec as { schema?: TSchema }).schema;
        const description = isSchema(spec) ? (Number(status) === 202 ? 'Accepted' : 'Success') : (spec as { description: string }).description;
        responses[status] = { description, ...(schema ? { content: { 'application/json': { schema: toOpenApiSchema(schema) } } } : {}) };
      }
      for (const status of r.errors ?? []) {
        responses[String(status)] = { description: STATUS_TEXT[status] ?? 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
      }
      const op: Record<string, unknown> = {
        operationId: `${r.method}${r.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
        tags: [r.tag],
        summary: r.summary,
        ...(r.description ? { description: r.description } : {}),
        ...(parameters.length ? { parameters } : {}),
        responses,
        ...(r.auth === false ? { security: [] } : {}),
      };
      if (r.body) op.requestBody = { required: true, content: { 'application/json': { schema: toOpenApiSchema(r.body) } } };
      if (r.contentType === 'multipart/form-data') {
        op.requestBody = { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' } }, required: ['file'] } } } };
      }
      (paths[r.path] ??= {})[r.method] = op;
    }
  }
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Contact Data, Discovery and Social Publishing API',
      version: '1.0.0',
      description: 'Multi-tenant API for contact data, prospect discovery, asynchronous enrichment and scheduled social publishing. Authenticate with the `x-api-key` header (or `Authorization: Bearer`).',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    tags: [...tags].map((name) => ({ name })),
    paths,
    components: {
      schemas: {
        ...Object.fromEntries(sharedSchemas.map((s) => [s.$id as string, toOpenApiSchema({ ...s, $id: undefined })])),
        ...Object.fromEntries(extraComponents),
      },
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        Bearer: { type: 'http', scheme: 'bearer' },
      },
    },
    security: [{ ApiKey: [] }, { Bearer: [] }],
  };
  return { ...cached, servers: [{ url: serverUrl }] };
}
