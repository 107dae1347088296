/** `rootCause`: what a failed job or activity reports is found under Temporal's wrappers. */
import { describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { rootCause } from '../../workflows/contract/failures.js';

describe('rootCause', () => {
  it('finds the application failure under a workflow failure and an activity failure', () => {
    const app = ApplicationFailure.create({ type: 'insufficient_credits', message: 'balance ran out', nonRetryable: true });
    const activity = new ActivityFailure('activity failed', 'debitCredits', '1', RetryState.NON_RETRYABLE_FAILURE, undefined, app);
    const workflow = new WorkflowFailedError('workflow failed', activity, RetryState.NON_RETRYABLE_FAILURE);
    expect(rootCause(workflow)).toBe(app);
    expect(rootCause(activity)).toBe(app);
    expect(rootCause(app)).toBe(app);
  });

  it('stops at the first application failure, not at its own cause', () => {
    const inner = ApplicationFailure.create({ type: 'Error', message: 'connect ECONNREFUSED' });
    const outer = ApplicationFailure.create({ type: 'TypeError', message: 'fetch failed', cause: inner });
    expect(rootCause(new ActivityFailure('activity failed', 'a', '1', RetryState.MAXIMUM_ATTEMPTS_REACHED, undefined, outer))).toBe(outer);
  });

  it('returns the innermost cause when no application failure is on the chain', () => {
    const timeout = new TimeoutFailure('activity StartToClose timeout', undefined, TimeoutType.START_TO_CLOSE);
    expect(rootCause(new ActivityFailure('activity failed', 'a', '1', RetryState.MAXIMUM_ATTEMPTS_REACHED, undefined, timeout))).toBe(timeout);
    expect(rootCause('not an error')).toBe('not an error');
    expect(rootCause(undefined)).toBeUndefined();
  });
});
