/**
 * The one walker of a Temporal failure's cause chain, for workflows and the API alike
 * (deterministic, no Node APIs). Temporal wraps what went wrong: a `WorkflowFailedError` or an
 * `ActivityFailure` (or a `TimeoutFailure` once retries are spent) carries it as its `cause`.
 */
import { ApplicationFailure } from '@temporalio/workflow';

/** The first `ApplicationFailure` on `err`'s cause chain (what the failing code said), else the innermost cause. */
export function rootCause(err: unknown): unknown {
  let e = err;
  while (e && !(e instanceof ApplicationFailure) && (e as { cause?: unknown }).cause) e = (e as { cause: unknown }).cause;
  return e;
}
