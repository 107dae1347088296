/**
 * `ApiError` is the one type the API turns into the error envelope of DESIGN §3:
 * {"error":{"status","code","message","details","requestId"}}; codes are stable snake_case.
 * Thrown by `api/` itself; the domain's errors (`domain/errors.ts`) become one in `toApiError`.
 */
import type { ErrorDetail } from '../domain/errors.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const unauthorized = (message = 'Missing or invalid API key') => new ApiError(401, 'unauthorized', message);

export const insufficientCredits = (needed: number, balance: number) =>
  new ApiError(402, 'insufficient_credits', `This request needs ${needed} credits; the balance is ${balance}`);

export const featureNotAvailable = (message: string) => new ApiError(403, 'feature_not_available', message);

export const sessionKeyNotAllowed = (path: string) =>
  new ApiError(403, 'session_key_not_allowed', `${path} starts a job: session keys preview data only; use a workspace or user API key`);

/** Foreign and missing resources look the same: 404, never 403. */
export const notFound = (what: string, id?: string) => new ApiError(404, 'not_found', id ? `${what} ${id} was not found` : `${what} was not found`);

/**
 * A well-formed reference in the body (a source, post, integration or uploaded file id) to
 * something the workspace does not have: 404 like a missing path resource, naming the field.
 */
export const notFoundField = (path: string, message: string) => new ApiError(404, 'not_found', `${path}: ${message}`, [{ path, message }]);

export const conflict = (message: string, code = 'conflict') => new ApiError(409, code, message);
/** A valid field the stored state refuses (409 `code`, naming the field as a 400 would). */
export const conflictField = (code: string, path: string, message: string) => new ApiError(409, code, `${path}: ${message}`, [{ path, message }]);

export const unprocessable = (code: string, message: string) => new ApiError(422, code, message);

/**
 * Error codes that only some routes answer, with their status: a route lists the ones it can
 * answer in its `errorCodes` (api/route.ts), and the OpenAPI document publishes each status's
 * `error.code` as an enum per operation. The codes every route of a kind answers (validation,
 * auth, rate limits…) are derived in api/openapi.ts (`errorCodesOf`).
 */
export const ROUTE_ERROR_CODES = {
  insufficient_credits: 402,
  feature_not_available: 403,
  session_key_not_allowed: 403,
  invalid_pagination_token: 400,
  pronet_required: 400,
  slice_not_available: 400,
  invalid_multipart: 400,
  file_type_not_allowed: 400,
  file_extension_mismatch: 400,
  file_type_mismatch: 400,
  url_not_allowed: 400,
  import_failed: 400,
  source_not_pullable: 409,
  run_frequency_incomplete: 409,
  conflict: 409,
  source_exists: 409,
  default_segment_protected: 409,
  default_segment_not_cloneable: 409,
  invalid_post_state: 409,
  post_not_editable: 409,
  post_publishing: 409,
  job_not_running: 409,
  subscription_disabled: 409,
  credits_busy: 503,
  search_unavailable: 503,
  media_deadline_exceeded: 504,
  oauth_state_invalid: 400,
  oauth_denied: 400,
  oauth_app_not_configured: 400,
  oauth_scope_missing: 400,
  selection_required: 400,
  selection_conflict: 400,
  contacts_not_found: 404,
  company_conflict: 409,
  contact_suppressed: 422,
  person_suppressed: 422,
} as const satisfies Record<string, number>;
export type RouteErrorCode = keyof typeof ROUTE_ERROR_CODES;
