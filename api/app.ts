/**
 * The Koa application: request id, structured logs, the error envelope, body parsing, and one
 * mounting function that turns each `defineRoute` into auth → rate limit → validation →
 * idempotency → handler.
 */
import Koa, { type Context } from 'koa';
import Router from '@koa/router';
import { koaBody, HttpMethodEnum } from 'koa-body';
import { v7 as uuidv7 } from 'uuid';
import { ApiError } from '../domain/errors.js';
import type { AppDeps } from './deps.js';
import { isReply, type RouteDef } from './route.js';
import { validate } from './validation.js';
import { authenticate, readKey, type AuthContext } from './middleware/auth.js';
import { enforceRateLimit } from './middleware/rateLimit.js';
import { claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey } from './middleware/idempotency.js';
import { routeGroups } from './routes/index.js';

export function errorBody(status: number, code: string, message: string, requestId: string, details?: unknown) {
  return { error: { status, code, message, ...(details ? { details } : {}), requestId } };
}

/** `/contacts/{id}` → `/contacts/:id` */
export const koaPath = (p: string) => p.replace(/\{(\w+)\}/g, ':$1');

function mount(router: Router, def: RouteDef, deps: AppDeps) {
  const method = def.method;
  router[method](koaPath(def.path), async (ctx: Context) => {
    let auth: AuthContext | undefined;
    if (def.auth !== false) {
      auth = await authenticate(deps.pool, readKey(ctx));
      ctx.state.workspaceId = auth.workspaceId;
      await enforceRateLimit(deps.pool, ctx, auth.apiKeyId, deps.config.rateLimitPerMinute);
    }
    const params = def.params ? validate(def.params, { ...ctx.params }, 'params') : { ...ctx.params };
    const query = def.query ? validate(def.query, { ...ctx.query }, 'query') : { ...ctx.query };
    let body: unknown = undefined;
    if (def.contentType !== 'multipart/form-data' && (def.body || ['post', 'patch', 'put'].includes(method))) {
      body = (ctx.request as unknown as { body?: unknown }).body ?? {};
      if (def.body) body = validate(def.body, body, 'body');
    }

    const idemKey = def.idempotent && auth ? ctx.get('idempotency-key') : '';
    if (idemKey) {
      const claim = await claimIdempotencyKey(deps.pool, auth!.workspaceId, idemKey, ctx.method, ctx.path, body);
      if (claim.kind === 'replay') {
        ctx.status = claim.response.status;
        for (const [k, v] of Object.entries(claim.response.headers)) ctx.set(k, v);
        ctx.set('Idempotent-Replayed', 'true');
        ctx.body = claim.response.body;
        return;
      }
    }
    try {
      const em = deps.orm.em.fork();
      const result = await def.handler({ body, params, query, ctx, auth: auth!, em: em as never, deps } as never);
      const status = isReply(result) ? result.status : 200;
      const resBody = isReply(result) ? result.body : result;
      const headers = isReply(result) ? (result.headers ?? {}) : {};
      ctx.status = status;
      for (const [k, v] of Object.entries(headers)) ctx.set(k, v);
      if (resBody !== undefined) ctx.body = resBody;
      if (idemKey) await completeIdempotencyKey(deps.pool, auth!.workspaceId, idemKey, { status, body: resBody, headers });
    } catch (e) {
      if (idemKey) await releaseIdempotencyKey(deps.pool, auth!.workspaceId, idemKey).catch(() => {});
      throw e;
    }
  });
}

export function createApp(deps: AppDeps, groups: RouteDef[][] = routeGroups): Koa {
  const app = new Koa();
  app.proxy = process.env.TRUST_PROXY === '1';
  const router = new Router();
  for (const group of groups) for (const def of group) mount(router, def, deps);

  app.use(async (ctx, next) => {
    const requestId = (ctx.get('x-request-id') || '').slice(0, 100) || uuidv7();
    ctx.state.requestId = requestId;
    ctx.set('x-request-id', requestId);
    const started = performance.now();
    try {
      await next();
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
    } finally {
      const ms = performance.now() - started;
      const level = ctx.status >= 500 ? 'error' : 'info';
      if (ctx.path !== '/healthz') deps.log[level]({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(ms * 10) / 10, workspaceId: ctx.state.workspaceId }, 'request');
    }
  });
  app.use(
    koaBody({
      json: true,
      multipart: false,
      urlencoded: false,
      text: false,
      jsonLimit: deps.config.bodyLimitBytes,
      jsonStrict: true,
      parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
      onError: (err) => {
        throw err;
      },
    }),
  );
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  return app;
}

/** Maps anything thrown into the API's error type; unknown errors are a 500 without details. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
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
