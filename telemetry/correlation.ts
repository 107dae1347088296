/**
 * The client side of request correlation (domain/correlation.ts): every workflow started (or
 * signalled-with-start, or updated-with-start) inside a request's or an activity's log context
 * carries its request id as a header; `requestIdOf` reads it back on the worker.
 */
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { REQUEST_ID_HEADER } from '../domain/correlation.js';
import { logContext } from './log.js';

function withRequestId(headers: Headers): Headers {
  const requestId = logContext.getStore()?.requestId;
  if (!requestId || headers[REQUEST_ID_HEADER]) return headers;
  return { ...headers, [REQUEST_ID_HEADER]: defaultPayloadConverter.toPayload(requestId) };
}

export const requestIdClientInterceptor: WorkflowClientInterceptor = {
  start: (input, next) => next({ ...input, headers: withRequestId(input.headers) }),
  startWithDetails: (input, next) => next({ ...input, headers: withRequestId(input.headers) }),
  signalWithStart: (input, next) => next({ ...input, headers: withRequestId(input.headers) }),
  startUpdateWithStart: (input, next) => next({ ...input, workflowStartHeaders: withRequestId(input.workflowStartHeaders) }),
};

/** The request id a Temporal header carries, if any. */
export function requestIdOf(headers: Headers | undefined): string | undefined {
  const payload = headers?.[REQUEST_ID_HEADER];
  if (!payload) return undefined;
  try {
    const v = defaultPayloadConverter.fromPayload<unknown>(payload);
    return typeof v === 'string' ? v.slice(0, 100) : undefined;
  } catch {
    return undefined;
  }
}
