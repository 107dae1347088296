/** The OpenAPI 3.1 document, generated from the same route definitions and schemas ajv validates. */
import type { TSchema } from '@sinclair/typebox';
import { sample } from 'openapi-sampler';
import { NO_NUL, sharedSchemas } from './schemas/common.js';
import { JobWebhookEvent } from './schemas/platform.js';
import { EVENT_BODIES } from './schemas/webhookSubscriptions.js';
import { noNul, refShared } from './validation.js';
import { ROUTE_ERROR_CODES } from './errors.js';
import { CUSTOM_FIELD_PATH_PATTERN } from '../domain/contactCatalog.js';
import { startsJob, type RouteDef } from './route.js';

const STATUS_TEXT: Record<number, string> = {
  400: 'Validation failure (or `malformed_request`: not valid HTTP/1.1 framing; or malformed JSON, a JSON body or query parameter that is not UTF-8, or a value the store refuses)', 401: 'Missing or invalid API key',
  402: 'Insufficient credits', 403: 'Forbidden: a feature not on the plan, or a session key starting a job', 404: 'Not found or not visible to the workspace',
  409: 'Conflict (for an `Idempotency-Key`: its first request is still running)', 413: 'Payload too large',
  415: '`unsupported_media_type`: the body is not of the operation\'s content type (`application/json` in UTF-8, no `charset` but `utf-8`; `multipart/form-data` for uploads; either uncompressed: no `Content-Encoding` but `identity`)', 422: 'Idempotency key reused with another request, or the query needs more database time than allowed',
  429: 'Rate limited', 500: 'Server error', 503: 'Not ready, the database is unreachable, or (`credits_busy`) the workspace\'s credit account stayed locked by concurrent credit movements, or (`search_unavailable`) the discovery search engine could not answer; nothing changed, retry after `Retry-After`',
};

const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed per window (per API key; per client IP without a valid key)', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer', minimum: 0 } },
};
const REQUEST_ID_HEADER = { 'x-request-id': { description: 'The request id (echoed from the request, else generated); also in error bodies', schema: { type: 'string' } } };

/**
 * Every status an operation can answer, worked out from what its route declares (so no route
 * lists the generic ones by hand): anything can be refused as invalid input (NUL characters in
 * any parameter, malformed JSON) and rate limited (per key, or per IP without a valid key);
 * authenticated routes answer 401 (and 503 while the database is unreachable); routes that read
 * a JSON body 413 and 415; routes with a body or query 422 when the query they ask for outlives
 * the statement timeout; idempotent routes 409 (first request still running) and 422 (key
 * reused); routes with path parameters 404; 500 is the envelope of a bug. The route's own `errors` (402, 403, 409 …) are added to these.
 */
export function errorStatuses(r: RouteDef): number[] {
  const statuses = new Set<number>([400, 429, 500, ...(r.errors ?? []), ...(r.errorCodes ?? []).map((c) => ROUTE_ERROR_CODES[c])]);
  // Authenticated routes need the database: 503 while it is unreachable.
  if (r.auth !== false) statuses.add(401).add(503);
  // A session key starting a job: 403 `session_key_not_allowed`.
  if (startsJob(r)) statuses.add(403);
  // A request whose query outlives the API's statement_timeout is a 422 `query_too_expensive`.
  if (r.body || r.query) statuses.add(422);
  if (readsJsonBody(r)) {
    statuses.add(413);
    statuses.add(415);
  }
  if (r.contentType === 'multipart/form-data') statuses.add(413).add(415);
  if (r.idempotent) statuses.add(409).add(422);
  if (/\{\w+\}/.test(r.path)) statuses.add(404);
  // A custom field path the workspace does not have is a 404 `not_found` (domain/contactCatalog.ts).
  if (namesCustomFields(r)) statuses.add(404);
  return [...statuses].sort((a, b) => a - b);
}

/** Whether a schema, or any schema inside it, passes `test`. */
function mentions(schema: unknown, test: (o: Record<string, unknown>) => boolean): boolean {
  if (Array.isArray(schema)) return schema.some((x) => mentions(x, test));
  if (!schema || typeof schema !== 'object') return false;
  const o = schema as Record<string, unknown>;
  return test(o) || Object.values(o).some((v) => mentions(v, test));
}
const namesCustomFields = (r: RouteDef) => [r.body, r.query].some((schema) => mentions(schema, (o) => o.pattern === CUSTOM_FIELD_PATH_PATTERN));
const hasProperty = (name: string) => (o: Record<string, unknown>) => !!o.properties && typeof o.properties === 'object' && name in (o.properties as object);

/**
 * The `error.code`s an operation can answer with each status: the ones every route of its kind
 * answers (derived like {@link errorStatuses}) and the route's own `errorCodes`. A route that
 * declares a status in `errors` but no code of it answers that status's generic code
 * (402 `insufficient_credits`, 403 `feature_not_available`, 409 `conflict`).
 */
export function errorCodesOf(r: RouteDef, status: number): string[] {
  const own = (r.errorCodes ?? []).filter((c) => ROUTE_ERROR_CODES[c] === status);
  const codes = new Set<string>();
  switch (status) {
    case 400:
      codes.add('validation_failed').add('malformed_request');
      if (readsJsonBody(r)) codes.add('invalid_json');
      // A value PostgreSQL refuses (api/app.ts dataExceptionError) can come from any input.
      codes.add('invalid_value');
      if (mentions([r.body, r.query], hasProperty('paginationToken'))) codes.add('invalid_pagination_token');
      if (mentions(r.body, (o) => o.$id === 'WebhookConfiguration')) codes.add('url_not_allowed');
      break;
    case 401: codes.add('unauthorized'); break;
    case 402: codes.add('insufficient_credits'); break;
    case 403:
      if ((r.errors ?? []).includes(403)) codes.add('feature_not_available');
      if (startsJob(r)) codes.add('session_key_not_allowed');
      break;
    case 404: codes.add('not_found'); if (/\{\w+\}/.test(r.path)) codes.add('empty_path_parameter'); break;
    case 409:
      if (r.idempotent) codes.add('idempotency_request_in_progress');
      if (!own.length && (r.errors ?? []).includes(409)) codes.add('conflict');
      break;
    case 413: codes.add('payload_too_large'); break;
    case 415: codes.add('unsupported_media_type'); break;
    case 422: codes.add('query_too_expensive'); if (r.idempotent) codes.add('idempotency_key_reused'); break;
    case 429: codes.add('rate_limited'); break;
    case 500: codes.add('internal_error'); break;
    case 503:
      codes.add('service_unavailable');
      // Routes that move credits wait for the workspace's credit account.
      if ((r.errors ?? []).includes(402) || r.errorCodes?.includes('insufficient_credits')) codes.add('credits_busy');
      break;
  }
  for (const c of own) codes.add(c);
  return [...codes].sort();
}

const pascal = (s: string) => s.replace(/(^|_)([a-z0-9])/g, (_m, _u, c: string) => c.toUpperCase());
/**
 * The error envelope whose `code` is one of `codes`: a component per distinct list, named after
 * its status and codes (`Error409DefaultSegmentProtected`), so generated clients type the codes.
 */
const errorComponents = new Map<string, unknown>();
function errorComponent(status: number, codes: string[]): string {
  const name = `Error${status}${codes.map(pascal).join('Or')}`;
  if (!errorComponents.has(name)) {
    const envelope = closeResponseObjects({ ...ErrorEnvelopeSchema(), $id: undefined }) as { properties: { error: { properties: Record<string, unknown> } } };
    envelope.properties.error.properties.code = { type: 'string', enum: codes };
    envelope.properties.error.properties.status = { type: 'integer', const: status };
    errorComponents.set(name, { title: name, ...(toOpenApiSchema(envelope) as object) });
  }
  return name;
}
const ErrorEnvelopeSchema = () => JSON.parse(JSON.stringify(sharedSchemas.find((s) => s.$id === 'Error')));

/** Routes whose JSON body is read (api/app.ts reads one for every POST, PATCH and PUT). */
const readsJsonBody = (r: RouteDef) => r.contentType !== 'multipart/form-data' && (!!r.body || ['post', 'patch', 'put'].includes(r.method));

/** No body at all reads as `{}`, so a body is required only when its schema requires a property. */
/**
 * A body is required when the server would refuse its absence: a missing JSON body is read as `{}`,
 * so an object with required properties, a minimum property count or alternatives (`anyOf`) needs one.
 */
export const bodyRequired = (schema: TSchema | undefined) =>
  !!schema && (schema.type !== 'object' || (Array.isArray(schema.required) && schema.required.length > 0) || (schema.minProperties ?? 0) > 0 || Array.isArray(schema.anyOf));

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
    return nullableAsTypeList(out);
  };
  return walk(refShared(schema, false), true);
}

/**
 * `anyOf: [{type: 'string'}, {type: 'null'}]` (TypeBox's `Union([String(), Null()])`) published as
 * `type: ['string', 'null']`, the OpenAPI 3.1 way to say nullable that generators map to `T | null`.
 * Only members that are a bare `type` (plus format/annotations on the non-null one) are merged.
 */
function nullableAsTypeList(o: Record<string, unknown>): Record<string, unknown> {
  const members = o.anyOf;
  if (!Array.isArray(members) || members.length !== 2) return o;
  const isNull = (m: Record<string, unknown>) => m.type === 'null' && Object.keys(m).length === 1;
  const nul = members.find(isNull) as Record<string, unknown> | undefined;
  const other = members.find((m) => !isNull(m)) as Record<string, unknown> | undefined;
  if (!nul || !other || typeof other.type !== 'string' || other.type === 'object' || other.type === 'array') return o;
  if (!Object.keys(other).every((k) => ['type', 'format', 'description', 'minLength', 'maxLength', 'minimum', 'maximum', 'pattern'].includes(k))) return o;
  const { anyOf: _anyOf, ...rest } = o;
  return { ...rest, ...other, type: [other.type, 'null'] };
}

/**
 * Response objects are published closed (`additionalProperties: false` wherever the route's schema
 * leaves it open by default): a generated client then types exactly what the server sends, and
 * schemathesis' response_schema_conformance catches a field the document does not name.
 * An explicit `additionalProperties` is left as written; shared components (`$ref`s) are closed
 * where they are published.
 */
function closeResponseObjects(schema: unknown): unknown {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (!v || typeof v !== 'object') return v;
    const o = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(o)) out[k] = k === 'properties' && val && typeof val === 'object' ? Object.fromEntries(Object.entries(val).map(([pk, pv]) => [pk, walk(pv)])) : walk(val);
    if (o.type === 'object' && o.properties && !('additionalProperties' in o) && !('patternProperties' in o)) out.additionalProperties = false;
    return out;
  };
  return walk(schema);
}

/** Shared components that only ever describe responses (closed like the responses themselves). */
const RESPONSE_COMPONENTS = new Set(['PaginationMeta', 'JobAccepted', 'Error']);

function isSchema(v: unknown): v is TSchema {
  return !!v && typeof v === 'object' && !('description' in v && Object.keys(v).every((k) => k === 'description' || k === 'schema'));
}

const operationId = (r: RouteDef) => `${r.method}${r.path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;

/** The first 2xx response: its status and schema. */
function success(r: RouteDef): [string, TSchema] | undefined {
  for (const [status, spec] of Object.entries(r.responses)) {
    const schema = isSchema(spec) ? spec : (spec as { schema?: TSchema }).schema;
    if (status.startsWith('2') && schema) return [status, schema];
  }
  return undefined;
}

/** Where a response names the one object it created: `{data: {id}}`, or a top-level `…Id` (a job). */
function idPointer(schema: TSchema): { pointer: string; name: string } | undefined {
  const props = schema.properties as Record<string, TSchema> | undefined;
  const data = props?.data;
  if (data?.type === 'object' && (data.properties as Record<string, unknown> | undefined)?.id) return { pointer: '/data/id', name: 'id' };
  const idKey = Object.keys(props ?? {}).find((k) => /^[a-z]+Id$/.test(k));
  return idKey ? { pointer: `/${idKey}`, name: idKey } : undefined;
}

/**
 * OpenAPI links from each operation that creates an object to the operations that take its id,
 * so a stateful client (schemathesis) can walk create → read → update → delete. Derived, not
 * listed: a reader is `GET <collection>/{param}`; its creators are the other operations whose
 * success response has the reader's schema (or, for jobs, a top-level field named like the
 * reader's parameter); the id then feeds every `{id}` under `<collection>/` and every parameter
 * named after the collection (`segmentId` for `/segments`).
 */
function deriveLinks(routes: RouteDef[], published: Published): Map<RouteDef, Record<string, unknown>> {
  const links = new Map<RouteDef, Record<string, unknown>>();
  const pathParams = (r: RouteDef) => [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  for (const reader of routes) {
    const m = reader.method === 'get' ? /^([^{}]+)\/\{(\w+)\}$/.exec(reader.path) : null;
    const readerSuccess = m && success(reader);
    if (!m || !readerSuccess) continue;
    const [, collection, param] = m as unknown as [string, string, string];
    const singular = collection.split('/').pop()!.replace(/s$/, '');
    const consumers = routes.filter((c) => {
      const ps = pathParams(c);
      // `/contacts/{sourceId}` sits under `/contacts` but takes a source's id.
      return ps.length === 1 && (ps[0] === `${singular}Id` || (c.path.startsWith(`${collection}/`) && ps[0] === 'id'));
    });
    for (const creator of routes) {
      if (creator.method === 'get') continue;
      const made = success(creator);
      const id = made && idPointer(made[1]);
      if (!made || !id) continue;
      const sameObject = id.name === 'id' && JSON.stringify(made[1]) === JSON.stringify(readerSuccess[1]);
      if (!sameObject && !(id.name !== 'id' && id.name === param)) continue;
      const out = links.get(creator) ?? {};
      for (const c of consumers) {
        if (c === creator) continue;
        out[operationId(c)] = { operationId: operationId(c), parameters: { [docParam(published, c, pathParams(c)[0]!)]: `$response.body#${id.pointer}` } };
      }
      links.set(creator, out);
    }
  }
  return links;
}

/**
 * Where each route is published. OpenAPI forbids two templates that differ only in parameter
 * names (`/contacts/{id}` and `/contacts/{sourceId}` are one path to a client and to the router),
 * so a later route whose path matches an earlier one's is published under the earlier template,
 * its path parameters renamed by position (the server reads them by position too).
 */
function publishedPaths(routes: RouteDef[]): Map<RouteDef, { path: string; rename: Record<string, string> }> {
  const first = new Map<string, string>();
  const out = new Map<RouteDef, { path: string; rename: Record<string, string> }>();
  const names = (p: string) => [...p.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  for (const r of routes) {
    const shape = r.path.replace(/\{\w+\}/g, '{}');
    const path = first.get(shape) ?? r.path;
    first.set(shape, path);
    const theirs = names(path);
    out.set(r, { path, rename: Object.fromEntries(names(r.path).map((n, i) => [n, theirs[i]!]).filter(([n, t]) => n !== t)) });
  }
  return out;
}
// Worked out on first use: the route modules import this one (circular at load time).
type Published = ReturnType<typeof publishedPaths>;
const docParam = (published: Published, r: RouteDef, name: string) => published.get(r)?.rename[name] ?? name;

function withoutNulPattern(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutNulPattern);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).filter(([k, v]) => !(k === 'pattern' && v === NO_NUL)).map(([k, v]) => [k, withoutNulPattern(v)]));
}

/** The document of each set of route groups (the app's, or a test's), built once. */
const cached = new WeakMap<RouteDef[][], Record<string, unknown>>();

/**
 * Every JSON request body, success response and webhook payload carries an `example`: the route's
 * own (`examples` in its declaration), else one sampled from its schema by openapi-sampler, which
 * takes each property's `examples`, `default`, `const`, first `enum` value or `format`.
 */
function addSampledExamples(doc: Record<string, unknown>): void {
  const media = (content: unknown) => (content as Record<string, { schema?: unknown; example?: unknown }> | undefined)?.['application/json'];
  // Sampled as if the NUL exclusion were absent: from that pattern alone the sampler makes '', which a minLength refuses.
  const plain = withoutNulPattern(doc) as Record<string, unknown>;
  const fill = (m: { schema?: unknown; example?: unknown } | undefined) => {
    if (m?.schema && m.example === undefined) m.example = sample(withoutNulPattern(m.schema) as object, { skipReadOnly: true, quiet: true, enablePatterns: true }, plain);
  };
  for (const item of [...Object.values(doc.paths as object), ...Object.values(doc.webhooks as object)] as Record<string, Record<string, unknown>>[]) {
    for (const op of Object.values(item)) {
      fill(media((op.requestBody as { content?: unknown } | undefined)?.content));
      for (const [status, res] of Object.entries(op.responses as Record<string, { content?: unknown }>)) if (status.startsWith('2')) fill(media(res.content));
    }
  }
}

/**
 * The OpenAPI document of `routeGroups` (the app passes the groups it serves: this module
 * imports no route, so routes may serve the document without an import cycle).
 */
export function buildOpenApi(serverUrl: string, routeGroups: RouteDef[][]): Record<string, unknown> {
  const built = cached.get(routeGroups);
  if (built) return { ...built, servers: [{ url: serverUrl }] };
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  const published = publishedPaths(routeGroups.flat());
  const links = deriveLinks(routeGroups.flat(), published);
  for (const group of routeGroups) {
    for (const r of group) {
      tags.add(r.tag);
      const parameters: unknown[] = [];
      for (const [where, schema] of [['path', r.params], ['query', r.query]] as const) {
        const props = (schema as { properties?: Record<string, TSchema>; required?: string[] } | undefined)?.properties ?? {};
        for (const [name, s] of Object.entries(props)) {
          const docName = where === 'path' ? docParam(published, r, name) : name;
          const renamed = docName !== name ? { description: `The ${name} (this path's parameter is named \`${docName}\` for every operation on it)` } : {};
          parameters.push({ name: docName, in: where, required: where === 'path' || ((schema as { required?: string[] }).required ?? []).includes(name), ...renamed, schema: toOpenApiSchema(noNul(s)) });
        }
      }
      if (r.idempotent) parameters.push({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 }, description: 'Replays the first response for 24 h' });
      const responses: Record<string, unknown> = {};
      // Every response passes the rate limiter first, so each carries its headers.
      const headers = { ...RATE_LIMIT_HEADERS, ...REQUEST_ID_HEADER };
      for (const [status, spec] of Object.entries(r.responses)) {
        const schema = isSchema(spec) ? spec : (spec as { schema?: TSchema }).schema;
        const description = isSchema(spec) ? (Number(status) === 202 ? 'Accepted' : 'Success') : (spec as { description: string }).description;
        const ownLinks = status === success(r)?.[0] ? links.get(r) : undefined;
        const example = status === success(r)?.[0] && r.examples?.response !== undefined ? { example: r.examples.response } : {};
        responses[status] = { description, headers, ...(schema ? { content: { 'application/json': { schema: toOpenApiSchema(closeResponseObjects(schema)), ...example } } } : {}), ...(ownLinks ? { links: ownLinks } : {}) };
      }
      for (const status of errorStatuses(r)) {
        if (responses[String(status)]) continue;
        const extra = status === 429 ? { 'Retry-After': { description: 'Seconds to wait before retrying', required: true, schema: { type: 'integer', minimum: 0 } } } : {};
        const codes = errorCodesOf(r, status);
        const description = codes.length ? `${STATUS_TEXT[status] ?? 'Error'}. \`error.code\`: ${codes.map((c) => `\`${c}\``).join(', ')}` : (STATUS_TEXT[status] ?? 'Error');
        const schema = codes.length ? `#/components/schemas/${errorComponent(status, codes)}` : '#/components/schemas/Error';
        responses[String(status)] = { description, headers: { ...headers, ...extra }, content: { 'application/json': { schema: { $ref: schema } } } };
      }
      // Answered before any route runs (api/server.ts answerClientError), in the error envelope.
      const envelope = (status: number, code: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${errorComponent(status, [code])}` } } });
      responses['408'] ??= { description: '`request_timeout`: the request (headers and body) was not received within 300 s', content: envelope(408, 'request_timeout') };
      responses['414'] = { description: '`uri_too_long`: the request URL (path and query) is longer than 8 KiB', content: envelope(414, 'uri_too_long') };
      responses['431'] = { description: '`headers_too_large`: the request line or header fields are too large', content: envelope(431, 'headers_too_large') };
      const op: Record<string, unknown> = {
        operationId: operationId(r),
        tags: [r.tag],
        summary: r.summary,
        ...(r.description ? { description: r.description } : {}),
        ...(parameters.length ? { parameters } : {}),
        responses,
        ...(r.auth === false ? { security: [] } : {}),
      };
      if (r.body) op.requestBody = { required: bodyRequired(r.body), content: { 'application/json': { schema: toOpenApiSchema(noNul(r.body)), ...(r.examples?.request !== undefined ? { example: r.examples.request } : {}) } } };
      if (r.contentType === 'multipart/form-data') {
        const schema = { type: 'object', properties: { file: { type: 'string', contentMediaType: 'application/octet-stream', minLength: 1, description: 'The file (an empty part is refused as missing)' } }, required: ['file'] };
        const encoding = r.partTypes?.length ? { encoding: { file: { contentType: r.partTypes.join(', ') } } } : {};
        op.requestBody = { required: true, content: { 'multipart/form-data': { schema, ...encoding } } };
      }
      (paths[published.get(r)!.path] ??= {})[r.method] = op;
    }
  }
  const webhookEvent = toOpenApiSchema(closeResponseObjects(JobWebhookEvent));
  /** The Standard Webhooks headers every webhook (job or event) carries. */
  const signatureHeaders = (id: string, signature: string) => [
    { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' }, description: id },
    { name: 'webhook-timestamp', in: 'header', required: true, schema: { type: 'string', pattern: '^[0-9]+$' }, description: 'Unix seconds of this attempt' },
    { name: 'webhook-signature', in: 'header', required: true, schema: { type: 'string' }, description: signature },
  ];
  const webhook = (type: string, summary: string) => ({
    post: {
      operationId: `webhook${pascal(type.replace('.', '_'))}`,
      tags: ['Webhooks'],
      summary,
      description:
        'Sent to the `webhookConfiguration.url` of a job request when the job ends, as a JSON POST with the caller\'s `headers` and the ' +
        'Standard Webhooks signature headers (`webhook-id`, the same on every retry; `webhook-timestamp`; `webhook-signature`, HMAC-SHA256 with the ' +
        'workspace\'s webhook secret). Any 2xx acknowledges it; other answers and network errors are retried with backoff for 24 h, except 410 Gone ' +
        '(no retry). Every attempt is listed in the job\'s `webhookDeliveries`.',
      parameters: signatureHeaders('Message id (`msg_<job workflow id>`), the same on every retry: deduplicate on it', '`v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`'),
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/JobWebhookEvent' } } } },
      responses: { '200': { description: 'Any 2xx acknowledges the event' }, '410': { description: 'Gone: the receiver wants no more deliveries (not retried)' } },
    },
  });
  const eventWebhook = (schema: (typeof EVENT_BODIES)[number]) => ({
    post: {
      operationId: `event${pascal(String(schema.properties.type.const).replace('.', '_'))}`,
      tags: ['Webhooks'],
      summary: String(schema.description),
      description:
        'Sent to every active webhook subscription of the workspace that lists this event type (`POST /webhook-subscriptions`), as a JSON POST with the ' +
        'Standard Webhooks headers (`webhook-id` `msg_<event id>`, the same on every attempt and redelivery; `webhook-timestamp`; `webhook-signature`, ' +
        'HMAC-SHA256 with the subscription\'s secret, two space-separated signatures during a secret rotation). Any 2xx acknowledges it; other answers ' +
        'and network errors are retried with backoff for 24 h; 410 Gone disables the subscription. Every delivery is listed under ' +
        '`GET /webhook-subscriptions/{id}/deliveries` and can be re-sent.',
      parameters: signatureHeaders('`msg_<event id>`: deduplicate on it', 'One or more space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">`'),
      requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema.$id}` } } } },
      responses: { '200': { description: 'Any 2xx acknowledges the event' }, '410': { description: 'Gone: the subscription is disabled (`disabledReason` `receiver_gone`)' } },
    },
  });
  const webhooks = {
    'job.completed': webhook('job.completed', 'A job completed'),
    'job.failed': webhook('job.failed', 'A job failed'),
    ...Object.fromEntries(EVENT_BODIES.map((schema) => [String(schema.properties.type.const), eventWebhook(schema)])),
  };
  const doc: Record<string, unknown> = {
    openapi: '3.1.0',
    info: {
      title: 'Contact Data, Discovery and Social Publishing API',
      version: '1.0.0',
      description: 'Multi-tenant API for contact data, prospect discovery, asynchronous enrichment and scheduled social publishing. Authenticate with the `x-api-key` header (or `Authorization: Bearer`).',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    tags: [...tags, 'Webhooks'].map((name) => ({ name })),
    paths,
    webhooks,
    components: {
      schemas: {
        ...Object.fromEntries(sharedSchemas.map((s) => [s.$id as string, toOpenApiSchema(RESPONSE_COMPONENTS.has(s.$id!) ? closeResponseObjects({ ...s, $id: undefined }) : noNul({ ...s, $id: undefined }))])),
        ...Object.fromEntries(extraComponents),
        ...Object.fromEntries(errorComponents),
        JobWebhookEvent: webhookEvent,
        ...Object.fromEntries(EVENT_BODIES.map((schema) => [schema.$id!, toOpenApiSchema(closeResponseObjects({ ...schema, $id: undefined }))])),
      },
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        Bearer: { type: 'http', scheme: 'bearer' },
      },
    },
    security: [{ ApiKey: [] }, { Bearer: [] }],
  };
  const components = (doc.components as { schemas: Record<string, Record<string, unknown>> }).schemas;
  for (const [name, schema] of Object.entries(components)) components[name] = { title: name, ...schema };
  addSampledExamples(doc);
  cached.set(routeGroups, doc);
  return { ...doc, servers: [{ url: serverUrl }] };
}
