/**
 * Media import and chunk assembly run as workflows on the worker (downloads and object-store work
 * stay out of the API process); the route starts one and waits for its result within
 * `MEDIA_REQUEST_DEADLINE_MS`, so the HTTP contract stays synchronous: 200 with the media
 * object, or the 4xx of the activity's refusal (a domain error carried by a non-retryable
 * `DomainError` failure, rebuilt here and mapped by `toApiError` like one thrown in the API).
 *
 * When the deadline passes first the answer is 504 `media_deadline_exceeded`, and the workflow
 * is not cancelled: it finishes on its own. With an `Idempotency-Key` the workflow id is derived
 * from the workspace, the key and the request hash, so the same request sent again with that key
 * attaches to that workflow (running: waits for it; completed: answers its result) instead of
 * importing twice; a run that failed is started afresh, as a failed request may be retried.
 * Without a key nothing can find the result again: what it stored is an upload nobody references,
 * removed by the retention sweep.
 */
import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, isGrpcDeadlineError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure, TypedSearchAttributes, WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { Context } from 'koa';
import { DOMAIN_ERROR_FAILURE, domainErrorFromData, type DomainErrorData } from '../domain/errors.js';
import { ApiError } from './errors.js';
import { SA } from '../domain/searchAttributes.js';
import type { StoredMedia } from '../db/media.js';
import { rootCause } from '../workflows/contract/failures.js';
import { MEDIA_WORKFLOWS, type AssembleMediaInput, type ImportMediaInput } from '../workflows/contract/media.js';
import { logContext } from '../telemetry/log.js';
import type { AppDeps } from './deps.js';
import { requestHash } from './middleware/idempotency.js';

/** The input of each media workflow the API runs; each carries its workspace and the id of the media it creates. */
interface MediaWorkflowArgs {
  import: ImportMediaInput;
  assembly: AssembleMediaInput;
}
type MediaWorkflow<K extends keyof MediaWorkflowArgs> = (input: MediaWorkflowArgs[K]) => Promise<StoredMedia>;

export interface RunMediaWorkflowOptions<K extends keyof MediaWorkflowArgs> {
  /** `import` or `assembly`: the workflow to run (`MEDIA_WORKFLOWS`) and the workflow id prefix `media-<kind>-`. */
  kind: K;
  args: MediaWorkflowArgs[K];
  /** The request (its `Idempotency-Key`, method, path) and its parsed body. */
  ctx: Context;
  body: unknown;
}

function workflowIdOf(ctx: Context, kind: string, workspaceId: string, id: string, body: unknown): string {
  const key = ctx.get('idempotency-key');
  if (!key) return `media-${kind}-${id}`;
  const hash = createHash('sha256').update(`${workspaceId}\n${key}\n${requestHash(ctx.method, ctx.path, body)}`).digest('hex').slice(0, 40);
  return `media-${kind}-${hash}`;
}

export async function runMediaWorkflow<K extends keyof MediaWorkflowArgs>(deps: AppDeps, opts: RunMediaWorkflowOptions<K>): Promise<StoredMedia> {
  const { workspaceId, id } = opts.args;
  const deadline = Date.now() + deps.config.media.requestDeadlineMs;
  const workflowId = workflowIdOf(opts.ctx, opts.kind, workspaceId, id, opts.body);
  const requestId = logContext.getStore()?.requestId;
  let handle: WorkflowHandle<MediaWorkflow<K>>;
  try {
    handle = await deps.temporal.workflow.start<MediaWorkflow<K>>(MEDIA_WORKFLOWS[opts.kind], {
      workflowId,
      taskQueue: deps.config.temporal.taskQueue,
      args: [opts.args],
      // Running: attach to it; completed: answered below; failed: run again.
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
      typedSearchAttributes: new TypedSearchAttributes([{ key: SA.WorkspaceId, value: workspaceId }]),
      memo: { workspaceId, ...(requestId ? { requestId } : {}) },
    });
  } catch (e) {
    if (!(e instanceof WorkflowExecutionAlreadyStartedError)) throw e;
    handle = deps.temporal.workflow.getHandle<MediaWorkflow<K>>(workflowId);
  }
  try {
    return await deps.temporal.connection.withDeadline(deadline, () => handle.result());
  } catch (e) {
    const cause = rootCause(e);
    if (cause instanceof ApplicationFailure && cause.type === DOMAIN_ERROR_FAILURE) throw domainErrorFromData(cause.details?.[0] as DomainErrorData);
    if (isGrpcDeadlineError(e) || Date.now() >= deadline) throw deadlineExceeded(deps, opts.kind, !!opts.ctx.get('idempotency-key'));
    throw e;
  }
}

function deadlineExceeded(deps: AppDeps, kind: string, keyed: boolean): ApiError {
  const secs = Math.round(deps.config.media.requestDeadlineMs / 1000);
  const what = kind === 'import' ? 'The import' : 'The assembly';
  const message = keyed
    ? `${what} did not finish within ${secs} s; it goes on: send the same request with the same Idempotency-Key to receive its result`
    : `${what} did not finish within ${secs} s; it goes on, but without an Idempotency-Key its result cannot be fetched: send one to be able to retry for it`;
  return new ApiError(504, 'media_deadline_exceeded', message, undefined, keyed ? { 'Retry-After': '5' } : undefined);
}
