/**
 * The Koa application: request id, structured logs, the error envelope, and one mounting function
 * that turns each `defineRoute` into auth → rate limit → body parsing → input safety →
 * validation → idempotency → handler. Nothing reads a body before the caller is known, so a
 * keyless request with a broken or huge body is a 401 (or a 429), never a parse error.
 */
import { Type } from '@sinclair/typebox';
import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import coBody from 'co-body';
import secureJson from 'secure-json-parse';
import { ConflictError, CreditAccountBusyError, SearchUnavailableError, DomainError, InsufficientCreditsError, InvalidInputError, NotFoundError, TooLargeError, UnsupportedMediaTypeError, UrlNotAllowedError, ImportFailedError, ExtensionMismatchError, InvalidRequestError, TypeMismatchError, UnknownReferenceError, type InputField } from '../domain/errors.js';
import { ApiError, conflict, insufficientCredits, notFound, notFoundField, sessionKeyNotAllowed } from './errors.js';
import { isDatabaseUnavailable, isStatementTimeout } from '../db/pgErrors.js';
import { isTemporalUnavailable } from '../db/connect.js';
import type { AppDeps } from './deps.js';
import { DEFAULT_BODY_LIMIT, isReply, reply, startsJob, type RouteDef } from './route.js';
import { STRICT_UTF8, assertSafeInput, assertUncompressedBody, assertUtf8Query, validate } from './validation.js';
import { readKey, type AuthContext } from './middleware/auth.js';
import { createAnonymousLimiter, createKeyLimiter, enforceAnonymousLimit, enforceRateLimit, type AnonymousLimiter, type KeyLimiter } from './middleware/rateLimit.js';
import { SentJson, claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from './middleware/idempotency.js';
import { routeGroups } from './routes/index.js';
import { httpMetrics } from './middleware/metrics.js';
import { requestContext } from './middleware/requestContext.js';
import { inWorkspaceScope, useWorkspace } from '../db/tenancy.js';
import type { WorkspaceScope } from '../db/scope.js';
import { logContext } from '../telemetry/log.js';
import { uuidv7Pooled } from '../domain/ids.js';
import { audited, auditedAs, isAuditedRoute } from './audit.js';

export function errorBody(status: number, code: string, message: string, requestId: string, details?: unknown) {
  return { error: { status, code, message, ...(details ? { details } : {}), requestId } };
}

/** The query schema of an operation that takes no query string. */
const NO_QUERY = Type.Object({}, { additionalProperties: false });

/** `/contacts/{id}` → `/contacts/:id` */
export const koaPath = (p: string) => p.replace(/\{(\w+)\}/g, ':$1');

/** The labels of UTF-8 a `charset` parameter may carry (compared lower-cased); any other charset is a 415. */
const UTF8_LABELS = new Set(['utf-8', 'utf8']);

/**
 * Every `charset` parameter of a Content-Type header, unquoted. Read leniently on purpose: type-is
 * (`ctx.is`) accepts a header whose other parameters are malformed, which the content-type parser
 * behind `ctx.request.charset` refuses, answering "no charset".
 */
const declaredCharsets = (contentType: string) =>
  [...contentType.matchAll(/;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/gi)].map((m) => (m[1] ?? m[2] ?? '').trim());

/**
 * Where the first byte sequence that is not UTF-8 starts in `bytes` (called once strict decoding
 * failed). The lenient decoder puts a U+FFFD at each bad sequence and decodes everything before
 * the first one as sent, so its byte offset is that of the text before it; a U+FFFD that was sent
 * (EF BF BD) is skipped.
 */
function firstInvalidUtf8Offset(bytes: Buffer): number {
  const lenient = bytes.toString('utf8'); // keeps a BOM, so offsets count it
  let offset = 0;
  let from = 0;
  for (let i = lenient.indexOf('\uFFFD'); i >= 0; i = lenient.indexOf('\uFFFD', i + 1)) {
    offset += Buffer.byteLength(lenient.slice(from, i));
    from = i;
    if (bytes[offset] !== 0xef || bytes[offset + 1] !== 0xbf || bytes[offset + 2] !== 0xbd) return offset;
  }
  return bytes.length;
}

/**
 * Reads a JSON body within `limit` bytes (413 above it, before reading on to the end) and parses
 * it refusing prototype keys; every string is then checked for what PostgreSQL cannot store.
 * Only objects and arrays are accepted at the top; no body at all reads as `{}`.
 */
async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const headers = ctx.req.headers;
  if (headers['transfer-encoding'] === undefined && !(Number(headers['content-length']) > 0)) return {};
  if (!ctx.is('application/json', '+json')) throw new ApiError(415, 'unsupported_media_type', 'Send the request body as application/json');
  assertUncompressedBody(ctx.req);
  // JSON is UTF-8 (RFC 8259 §8.1): a body declared in another charset is refused, not decoded as if it were UTF-8.
  const charset = declaredCharsets(headers['content-type'] ?? '').find((c) => !UTF8_LABELS.has(c.toLowerCase()));
  if (charset !== undefined) throw new ApiError(415, 'unsupported_media_type', `Charset "${charset}" is not supported; send the JSON body as UTF-8 (charset=utf-8, or no charset)`);
  let bytes: Buffer;
  try {
    // The bytes as sent (`encoding: false`, which co-body's types do not spell): decoded below,
    // where a byte that is not UTF-8 is an error rather than a U+FFFD.
    bytes = await coBody.text(ctx, { limit, encoding: false as unknown as string });
  } catch (e) {
    // The reader stopped mid-body (over the limit, aborted …): drain the rest, or the next request
    // on this keep-alive connection would be parsed from the middle of this body.
    ctx.req.resume();
    throw e;
  }
  let text: string;
  try {
    // A leading UTF-8 BOM is accepted and dropped (TextDecoder's default).
    text = STRICT_UTF8.decode(bytes);
  } catch {
    throw new ApiError(400, 'invalid_json', `Request body is not valid JSON: it is not valid UTF-8 (byte offset ${firstInvalidUtf8Offset(bytes)})`);
  }
  // No body at all reads as `{}`; white space alone is a body, and not JSON (refused below).
  if (!text) return {};
  // made only when thrown: an Error captures its stack when constructed
  const invalidJson = () => new ApiError(400, 'invalid_json', 'Request body is not valid JSON (an object or an array)');
  if (!/^[\x20\x09\x0a\x0d]*[[{]/.test(text)) throw invalidJson();
  let parsed: unknown;
  let prototypeKey = false;
  try {
    parsed = secureJson.parse(text, null, { protoAction: 'error', constructorAction: 'error' });
  } catch (e) {
    if (!(e instanceof SyntaxError) || !/prototype/.test(e.message)) throw invalidJson();
    // Refused for a prototype key: plain JSON.parse (own properties only) finds its pointer below.
    prototypeKey = true;
    parsed = JSON.parse(text);
  }
  assertSafeInput(parsed, 'body');
  if (prototypeKey) throw new ApiError(400, 'validation_failed', 'Request body is invalid: a key reaches the object prototype');
  return parsed;
}

interface Limiters {
  keys: KeyLimiter;
  anonymous: AnonymousLimiter;
}

function mount(router: Router, def: RouteDef, deps: AppDeps, limiters: Limiters, routes: RouteDef[][]) {
  const method = def.method;
  // The operator's BODY_LIMIT_BYTES caps every route; bulk routes get all of it.
  const bodyLimit = Math.min(def.bodyLimit === 'bulk' ? Infinity : (def.bodyLimit ?? DEFAULT_BODY_LIMIT), deps.config.bodyLimitBytes);
  // The request's RequestContext fork, unless the route uses no entity manager.
  const routeMiddleware = def.orm === false ? [] : [requestContext(deps.orm)];
  const audit = isAuditedRoute(def) ? auditedAs(def) : undefined;
  router[method](koaPath(def.path), ...routeMiddleware, async (ctx: Context) => {
    let auth: AuthContext | undefined;
    if (def.auth !== false) {
      const key = readKey(ctx);
      // Without a key nothing is looked up: the per-IP limit comes first.
      if (!key) await enforceAnonymousLimit(limiters.anonymous, ctx);
      try {
        auth = await deps.apiKeys.authenticate(key);
      } catch (e) {
        // A wrong key counts against the IP; a failed lookup (database down) does not.
        if (key && e instanceof ApiError && e.status === 401) await enforceAnonymousLimit(limiters.anonymous, ctx);
        throw e;
      }
      ctx.state.workspaceId = auth.workspaceId;
      if (def.orm !== false) useWorkspace(deps.orm.em, auth.workspaceId);
      await enforceRateLimit(limiters.keys, ctx, auth.apiKeyId);
      if (auth.keyKind === 'session' && startsJob(def)) throw sessionKeyNotAllowed(def.path);
    } else if (def.rateLimited !== false) {
      await enforceAnonymousLimit(limiters.anonymous, ctx);
    }
    // Everything after authentication runs in the workspace's scope: the database admits its rows only (db/tenancy.ts).
    if (auth) await inWorkspaceScope(auth.workspaceId, () => serve(ctx, auth));
    else await serve(ctx, auth);
  });

  async function serve(ctx: Context, auth: AuthContext | undefined) {
    // The unit of work's one scope, made once here (inside `inWorkspaceScope`) and handed to the handler.
    const scope: WorkspaceScope | undefined = auth && { workspaceId: auth.workspaceId, em: deps.orm.em, db: deps.pool };
    // Path params and query strings are checked as a whole before any schema sees them.
    assertSafeInput(ctx.params, 'params');
    assertUtf8Query(ctx.querystring);
    assertSafeInput(ctx.query, 'query');
    const params = def.params ? validate(def.params, { ...ctx.params }, 'params') : { ...ctx.params };
    // An operation without a query schema takes no query string: its names are refused as any
    // schema's unknown properties are (NO_QUERY), not ignored.
    const query = def.query || ctx.querystring ? validate(def.query ?? NO_QUERY, { ...ctx.query }, 'query') : {};
    let body: unknown = undefined;
    if (def.contentType !== 'multipart/form-data' && (def.body || ['post', 'patch', 'put'].includes(method))) {
      body = await readJsonBody(ctx, bodyLimit);
      if (def.body) body = validate(def.body, body, 'body');
    }

    const idemKey = def.idempotent && auth ? ctx.get('idempotency-key') : '';
    /** The key this request holds once claimed: completed with the response, released on failure. */
    let claimedKey = '';
    const claimIdempotency = async (hashed: unknown) => {
      if (!idemKey) return null;
      const claim = await claimIdempotencyKey(deps.orm.em, auth!.workspaceId, idemKey, ctx.method, ctx.path, hashed);
      if (claim.kind === 'replay') {
        const { status, body: sent, headers } = claim.response;
        return reply(status, sent === null ? null : new SentJson(sent), { ...headers, 'Idempotent-Replayed': 'true' });
      }
      claimedKey = idemKey;
      return null;
    };
    // A streamed (multipart) body is hashed by its handler, which claims the key once it has read it.
    if (idemKey && def.contentType !== 'multipart/form-data') {
      const replayed = await claimIdempotency(body);
      if (replayed) {
        respond(ctx, replayed.status, replayed.body, replayed.headers ?? {});
        return;
      }
    }
    const handle = async () => {
      try {
        // `deps.orm.em` resolves to the request's RequestContext fork (requestContext middleware, unless `orm: false`).
        const result = await def.handler({ body, params, query, ctx, auth: auth!, deps, em: deps.orm.em, scope: scope!, claimIdempotency, routes } as never);
        const status = isReply(result) ? result.status : 200;
        const resBody = isReply(result) ? result.body : result;
        const headers = isReply(result) ? (result.headers ?? {}) : {};
        // With a key claimed, the body is sent as JSON text serialised once: what is stored is what was sent.
        const sent = respond(ctx, status, claimedKey && resBody != null && !(resBody instanceof SentJson) ? new SentJson(JSON.stringify(resBody)) : resBody, headers);
        if (claimedKey) await completeIdempotencyKey(deps.orm.em, auth!.workspaceId, claimedKey, { status, body: sent, headers });
        return resBody;
      } catch (e) {
        if (claimedKey) await releaseIdempotencyKey(deps.orm.em, auth!.workspaceId, claimedKey).catch(() => {});
        throw e;
      }
    };
    // Every write is recorded in the audit trail (api/audit.ts), its event committed before it runs.
    if (audit && auth) await audited(deps, ctx, auth, audit, params, handle, (e) => toApiError(e).status);
    else await handle();
  }
}

/**
 * Sets the response; returns the JSON text sent for a `SentJson` body (an `Idempotency-Key`
 * response: a first one serialised here, or a replay of one), else null. Such a body goes out as
 * that text with the JSON content type Koa gives an object body.
 */
function respond(ctx: Context, status: number, body: unknown, headers: Record<string, string>): string | null {
  ctx.status = status;
  for (const [k, v] of Object.entries(headers)) ctx.set(k, v);
  if (body instanceof SentJson) {
    if (!ctx.type) ctx.type = 'json';
    ctx.body = body.text;
    return body.text;
  }
  if (body !== undefined) ctx.body = body;
  return null;
}

/**
 * The longest request target (path and query) answered: a longer one is 414 `uri_too_long`,
 * whether Node's parser takes it (its limit, 16 KiB, counts the request line and the headers
 * together) or refuses it first (api/server.ts answerClientError).
 */
export const MAX_URL_BYTES = 8 * 1024;

export const uriTooLong = (headers?: Record<string, string>) =>
  new ApiError(414, 'uri_too_long', `The request URL is longer than ${MAX_URL_BYTES} bytes; send long values in a request body`, undefined, headers);

const uriLengthGate: Koa.Middleware = async (ctx, next) => {
  if (Buffer.byteLength(ctx.req.url ?? '') > MAX_URL_BYTES) throw uriTooLong({ Connection: 'close' });
  await next();
};

export function createApp(deps: AppDeps, groups: RouteDef[][] = routeGroups): Koa {
  const app = new Koa();
  app.proxy = process.env.TRUST_PROXY === '1';
  const router = new Router();
  const limiters = { keys: createKeyLimiter(deps.config.rateLimitPerMinute, () => deps.replicas?.count() ?? 1), anonymous: createAnonymousLimiter(deps.config.env) };
  for (const group of groups) for (const def of group) mount(router, def, deps, limiters, groups);
  matchOncePerRequest(router);

  app.use(httpMetrics());
  app.use(async (ctx, next) => {
    const requestId = (ctx.get('x-request-id') || '').slice(0, 100) || uuidv7Pooled();
    ctx.state.requestId = requestId;
    ctx.set('x-request-id', requestId);
    const started = performance.now();
    try {
      // Lines logged while serving it carry the request id; jobs it starts keep it in their memo.
      await logContext.run({ requestId }, next);
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = errorBody(404, 'route_not_found', `No route for ${ctx.method} ${ctx.path}`, requestId);
      }
    } catch (err) {
      const e = toApiError(err);
      ctx.status = e.status;
      if (e.headers) for (const [k, v] of Object.entries(e.headers)) ctx.set(k, v);
      ctx.body = errorBody(e.status, e.code, e.message, requestId, e.details);
      if (e.status >= 500) deps.log.error({ err, requestId, path: ctx.path }, 'request failed');
      // A data exception reaching here is input a check before SQL should have refused: kept visible.
      else if (e.code === 'invalid_value' && !(err instanceof ApiError)) deps.log.warn({ err, requestId, path: ctx.path }, 'database refused a value');
    } finally {
      const ms = performance.now() - started;
      const level = ctx.status >= 500 ? 'error' : 'info';
      if (ctx.path !== '/healthz') deps.log[level]({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10, workspaceId: ctx.state.workspaceId }, 'request');
    }
  });
  app.use(uriLengthGate);
  app.use(emptyParameterGate(router));
  app.use(methodGate(router));
  app.use(router.routes());
  return app;
}

/**
 * A path with an empty segment (`/jobs/`, `/contacts//bulk-upsert-contacts`) is usually a client's
 * unset variable (`curl "$API/jobs/$JOB_ID"`). When that segment is a parameter of a route this
 * method has, the answer is a 404 naming it, instead of whatever another route makes of the path
 * (`POST /contacts/by-segment/` would be an upsert into a source called "by-segment"). A trailing
 * slash on a path that has no parameter there (`/credits/balance/`) still reaches its route.
 */
function emptyParameterGate(router: Router): Koa.Middleware {
  return (ctx, next) => {
    const segments = ctx.path.split('/');
    for (let i = 1; i < segments.length; i++) {
      if (segments[i] !== '') continue;
      const probe = segments.map((s, k) => (k === i ? '_' : s)).join('/');
      const layer = router.match(probe, ctx.method).pathAndMethod.find((l) => String(l.path).split('/')[i]?.startsWith(':'));
      if (!layer) continue;
      const name = String(layer.path).split('/')[i]!.slice(1);
      const template = String(layer.path).replace(/:(\w+)/g, '{$1}');
      throw new ApiError(404, 'empty_path_parameter', `No route for ${ctx.method} ${ctx.path}: {${name}} is empty in ${ctx.method} ${template} (an unset variable?)`, [
        { path: `/${name}`, message: 'is empty' },
      ]);
    }
    return next();
  };
}

/**
 * Each request's path is matched against every route (a regular expression each, about 90) by
 * `methodGate` and then again, with the same path and method, by the router's own dispatch, which
 * Koa runs right after it in the same tick: the second asker takes the first one's result (once,
 * so a result handed to a request's `ctx.matched` is never handed out again). A match depends on
 * the path and method only; the routes are fixed once the app is built.
 */
function matchOncePerRequest(router: Router): void {
  const match = router.match.bind(router);
  let last: { path: string; method: string; result: ReturnType<Router['match']> } | undefined;
  router.match = (path, method) => {
    if (last && last.path === path && last.method === method) {
      const { result } = last;
      last = undefined;
      return result;
    }
    const result = match(path, method);
    last = { path, method, result };
    return result;
  };
}

/** Of route templates matching one path, the OpenAPI pick: a static segment beats a `:param`. */
function moreSpecific(a: string, b: string): boolean {
  const as = a.split('/');
  const bs = b.split('/');
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    const aParam = as[i]!.startsWith(':');
    if (aParam !== bs[i]!.startsWith(':')) return !aParam;
  }
  return false;
}

/**
 * Methods per resource, as the OpenAPI document states them: the path's most specific route
 * template (`/contacts/bulk-fetch` before `/contacts/{id}`) decides which methods exist. Any other
 * method (TRACE, QUERY, GET on a POST-only path …) is a 405 with `Allow` and the error envelope;
 * OPTIONS is a 204 with `Allow`. A path no route matches falls through to the 404.
 */
function methodGate(router: Router): Koa.Middleware {
  type Layer = ReturnType<Router['match']>['path'][number];
  // `/contacts/:id` and `/contacts/:sourceId` are one template: parameter names do not count.
  const shape = (l: Layer) => String(l.path).replace(/:\w+/g, ':');
  const allowedMethods = (layers: Layer[]) => {
    let best = shape(layers[0]!);
    for (const l of layers) if (moreSpecific(shape(l), best)) best = shape(l);
    return [...new Set(layers.filter((l) => shape(l) === best).flatMap((l) => l.methods))];
  };
  // The answer depends only on which route templates matched: worked out once per set of them.
  const allowedBySet = new Map<string, string[]>();
  return (ctx, next) => {
    const layers = router.match(ctx.path, ctx.method).path;
    if (!layers.length) return next();
    const set = layers.map((l) => l.path).join(' ');
    let allowed = allowedBySet.get(set);
    if (!allowed) allowedBySet.set(set, (allowed = allowedMethods(layers)));
    if (allowed.includes(ctx.method)) return next();
    const allow = allowed.join(', ');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Allow', allow);
      ctx.status = 204;
      return;
    }
    throw new ApiError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, undefined, { Allow: allow });
  };
}

/** What the client gets told for a PostgreSQL data exception (SQLSTATE class 22): no SQL internals. */
const DATA_EXCEPTION_REASONS: Record<string, string> = {
  '22001': 'a value is longer than its field allows',
  '22003': 'a number is out of range for its field',
  '22007': 'a date or time is malformed',
  '22008': 'a date or time is out of range',
  '22012': 'a value leads to a division by zero',
  '22021': 'a text value holds a character that cannot be stored',
  '22P05': 'a text value holds a character that cannot be stored',
  '22025': 'a pattern holds an invalid escape (a trailing backslash?)',
  '2201B': 'a pattern is not a valid regular expression',
  '22P02': 'a value is malformed for its field (not a number, UUID, date … as required)',
  // Class 54 (program limit exceeded) only where a value's size is the cause.
  '54000': 'a value is too large to store or index',
  '54001': 'a value is nested or composed too deeply',
};

/**
 * A PostgreSQL data exception (from `pg`, or wrapped by MikroORM, which copies `code`) → 400;
 * likewise a value too large to store (54000/54001).
 */
function dataExceptionError(err: unknown): ApiError | undefined {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, i = 0; e && i < 3; e = e.cause as typeof e, i++) {
    if (typeof e.code === 'string' && (/^22[0-9A-Z]{3}$/.test(e.code) || e.code === '54000' || e.code === '54001')) {
      const reason = DATA_EXCEPTION_REASONS[e.code] ?? 'a value is invalid for its field';
      return new ApiError(400, 'invalid_value', `A value in the request was refused: ${reason}`);
    }
  }
  return undefined;
}

/** An input field as the JSON pointer the error names (segments joined as written: no `~` escapes). */
const pointer = (field: InputField) => `/${field.join('/')}`;

/** A request the domain refused as it was asked: 400 with the domain's code and field pointers (404 for `not_found`: a reference to something the workspace does not have). */
const invalidRequest = (err: InvalidRequestError) => new ApiError(err.code === 'not_found' ? 404 : 400, err.code, err.message, err.details);

/** A 400 naming one field of the input: `/path: problem`, with the field's pointer in the details. */
function fieldError(code: string, field: InputField, problem: string, detail = problem): ApiError {
  const path = pointer(field);
  return new ApiError(400, code, `${path}: ${problem}`, [{ path, message: detail }]);
}

/** The HTTP answer to each domain error `db/` throws (the only place they meet HTTP). */
function fromDomainError(err: DomainError): ApiError | undefined {
  if (err instanceof NotFoundError) return notFound(err.label, err.id);
  if (err instanceof InvalidInputError) return fieldError('validation_failed', err.field, err.problem);
  if (err instanceof UnknownReferenceError) return notFoundField(pointer(err.field), err.problem);
  if (err instanceof ConflictError) return conflict(err.message, err.code);
  if (err instanceof InsufficientCreditsError) return insufficientCredits(err.needed, err.balance);
  if (err instanceof UnsupportedMediaTypeError) return fieldError('file_type_not_allowed', err.field, `${err.message}; allowed types are ${err.allowed.join(', ')}`, err.message);
  if (err instanceof TypeMismatchError) return fieldError('file_type_mismatch', err.field, err.message, `is ${err.detected}, not ${err.declared} as declared`);
  if (err instanceof TooLargeError) return new ApiError(413, 'payload_too_large', err.message);
  if (err instanceof UrlNotAllowedError) return fieldError('url_not_allowed', err.field, err.reason);
  if (err instanceof ImportFailedError) return fieldError('import_failed', err.field, err.reason);
  if (err instanceof ExtensionMismatchError) return fieldError('file_extension_mismatch', err.field, err.message, `does not match the detected type ${err.detected}`);
  if (err instanceof CreditAccountBusyError) return new ApiError(503, 'credits_busy', err.message, undefined, { 'Retry-After': String(err.retryAfterSeconds) });
  if (err instanceof SearchUnavailableError) return new ApiError(503, 'search_unavailable', err.message, undefined, { 'Retry-After': String(err.retryAfterSeconds) });
  return undefined;
}

/** Maps anything thrown into the API's error type; unknown errors are a 500 without details. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof InvalidRequestError) return invalidRequest(err);
  const domain = err instanceof DomainError ? fromDomainError(err) : undefined;
  if (domain) return domain;
  const dataException = dataExceptionError(err);
  if (dataException) return dataException;
  // The API's statement_timeout bounds the database work one request may cause.
  if (isStatementTimeout(err)) return new ApiError(422, 'query_too_expensive', 'The request needed more database time than the API allows; narrow its conditions');
  if (isDatabaseUnavailable(err)) return new ApiError(503, 'service_unavailable', 'The database is unavailable; retry shortly', undefined, { 'Retry-After': '5' });
  if (isTemporalUnavailable(err)) return new ApiError(503, 'service_unavailable', 'The job service is unavailable; retry shortly', undefined, { 'Retry-After': '5' });
  const e = err as { status?: number; statusCode?: number; type?: string; message?: string; expose?: boolean };
  const status = e?.status ?? e?.statusCode;
  if (status === 413 || e?.type === 'entity.too.large') return new ApiError(413, 'payload_too_large', 'Request body is too large');
  if (status === 415) return new ApiError(415, 'unsupported_media_type', e.message ?? 'Unsupported content type');
  if (status === 400 && (e?.type === 'entity.parse.failed' || /JSON|Unexpected/i.test(e?.message ?? ''))) {
    return new ApiError(400, 'invalid_json', 'Request body is not valid JSON');
  }
  if (status && status >= 400 && status < 500 && e.expose) return new ApiError(status, 'bad_request', e.message ?? 'Bad request');
  return new ApiError(500, 'internal_error', 'Internal server error');
}
