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

/** Foreign and missing resources look the same: 404, never 403. */
export const notFound = (what: string, id?: string) => new ApiError(404, 'not_found', id ? `${what} ${id} was not found` : `${what} was not found`);

export const conflict = (message: string, code = 'conflict') => new ApiError(409, code, message);

export const unprocessable = (code: string, message: string) => new ApiError(422, code, message);
