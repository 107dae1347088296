/**
 * A route is declared once: its JSON Schemas (TypeBox) are what ajv validates, what the handler's
 * TypeScript types are derived from, and what /openapi.json publishes.
 */
import type { Static, TSchema } from '@sinclair/typebox';
import type { Context } from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppDeps } from './deps.js';
import type { AuthContext } from './middleware/auth.js';
import type { RouteErrorCode } from './errors.js';
import type { WorkspaceScope } from '../db/scope.js';

export type HttpMethod = 'get' | 'post' | 'patch' | 'put' | 'delete';

/** Body size limit of a route that declares none: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

type StaticOr<T, F> = T extends TSchema ? Static<T> : F;

export interface RouteInput<B, P, Q> {
  body: B;
  params: P;
  query: Q;
  ctx: Context;
  auth: AuthContext;
  /** The request's MikroORM entity manager (its RequestContext fork, scoped to `auth.workspaceId`). */
  em: EntityManager;
  /**
   * The request's unit of work (authenticated routes): its workspace, entity manager (`em`) and the
   * pool its statements run on in the workspace's row-level security scope. A converted route hands
   * this on to `db/` and `usecases/` and touches no pool itself (test/unit/layering.test.ts).
   */
  scope: WorkspaceScope;
  deps: AppDeps;
  /**
   * Idempotent multipart routes only (their body is streamed, not parsed up front): claims the
   * request's `Idempotency-Key` for `hashed` (what identifies the body, e.g. the file's SHA-256).
   * Returns the first response to replay, or null to go on (also without a key).
   */
  claimIdempotency: (hashed: unknown) => Promise<ReturnType<typeof reply> | null>;
  /** The route groups the app serves (what `/openapi.json` documents). */
  routes: RouteDef[][];
}

/** What a handler returns: the JSON body (status 200) or an explicit status/body/headers. */
export type RouteResult = unknown | { status: number; body: unknown; headers?: Record<string, string> };

export interface RouteDef<B extends TSchema | undefined = any, P extends TSchema | undefined = any, Q extends TSchema | undefined = any> {
  method: HttpMethod;
  /** OpenAPI-style path, e.g. `/contacts/{id}`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  body?: B;
  params?: P;
  query?: Q;
  /** Response schemas by status; the first 2xx is the documented success. */
  responses: Record<number, TSchema | { description: string; schema?: TSchema }>;
  /** Error statuses this route can answer with (documented with the shared error schema). */
  errors?: number[];
  /**
   * Error codes this route answers beyond the ones every route of its kind does (those
   * {@link errorStatuses} and {@link errorCodesOf} in api/openapi.ts derive): each must be in
   * `ROUTE_ERROR_CODES` (api/errors.ts), which gives its status. The document publishes the
   * `error.code` of each status as an enum of exactly these, so a code the route answers but
   * does not declare fails schemathesis' response_schema_conformance.
   */
  errorCodes?: RouteErrorCode[];
  /**
   * Examples published with the operation (validated against its schemas by
   * test/integration/openapi.test.ts). Without one the document samples the schema
   * (openapi-sampler, which uses each property's `examples`/`default`/`format`).
   */
  examples?: { request?: StaticOr<B, unknown>; response?: unknown };
  /** Unauthenticated routes (health, docs) set this to false. */
  auth?: boolean;
  /**
   * False for the health probes (`/healthz`, `/readyz`, unauthenticated): never counted in nor
   * refused by the per-IP limit, so bad keys from behind the same proxy cannot make a load
   * balancer's probes answer 429.
   */
  rateLimited?: boolean;
  /** Requests with a non-JSON body (multipart uploads) validate themselves. */
  contentType?: 'application/json' | 'multipart/form-data';
  /**
   * Multipart: the types the `file` part may declare, published as its `encoding.contentType`
   * (a client, or a fuzzer, then sends one of them rather than no type or any type).
   */
  partTypes?: readonly string[];
  /**
   * Largest JSON body in bytes (413 `payload_too_large` above it): {@link DEFAULT_BODY_LIMIT}
   * unless the route needs more; `'bulk'` is the operator's `BODY_LIMIT_BYTES` (bulk imports),
   * which also caps every other route.
   */
  bodyLimit?: number | 'bulk';
  /** POSTs that create something or start a job honour `Idempotency-Key`. */
  idempotent?: boolean;
  /**
   * False for a handler that uses no entity manager (its statements go through `scope.db`): the request
   * gets no RequestContext fork, a cost the hot reads skip. `em` is then the global manager, and
   * any use of it throws (`allowGlobalContext: false`).
   */
  orm?: boolean;
  /** Answers the request: the JSON body (status 200), or `reply(status, body, headers)`. */
  handler: (input: RouteInput<StaticOr<B, undefined>, StaticOr<P, Record<string, string>>, StaticOr<Q, Record<string, unknown>>>) => Promise<RouteResult> | RouteResult;
}

/** Identity function that gives a route literal its inferred types. */
export function defineRoute<B extends TSchema | undefined = undefined, P extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined>(
  def: RouteDef<B, P, Q>,
): RouteDef<B, P, Q> {
  return def;
}

/** Handlers return `reply(202, body)` to pick a status other than 200. */
/** A route that answers 202 starts a job: session keys (unbilled previews) may not (api/app.ts). */
export const startsJob = (def: Pick<RouteDef, 'responses' | 'auth'>) => def.auth !== false && 202 in def.responses;

export function reply(status: number, body: unknown, headers?: Record<string, string>) {
  return { [REPLY]: true, status, body, headers } as const;
}
export const REPLY = Symbol('reply');
export function isReply(v: unknown): v is { status: number; body: unknown; headers?: Record<string, string> } {
  return typeof v === 'object' && v !== null && REPLY in v;
}
