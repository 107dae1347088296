/**
 * What every scheduled-publish workflow shares: the handlers of the `reschedule` and `unschedule`
 * Updates and of the signals they replaced (their definitions are the contract,
 * ./contract/publishing.ts), the durable wait
 * until `scheduledTime` (restarted when a reschedule arrives, ended by an unschedule), the
 * activity proxies (provider calls on the network's own task queue) and the reading of typed
 * failures. Deterministic: only `@temporalio/workflow` and types.
 */
import { ActivityFailure, ApplicationFailure, condition, proxyActivities, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { RateLimitWait } from '../domain/publishing.js';
import type { PostError, Provider } from '../domain/social.js';
import { PUBLISH_FAILURE, SCHEDULE_REJECTION } from './contract/failures.js';
import {
  rescheduleUpdate,
  scheduleSignal,
  stateQuery,
  unscheduleSignal,
  unscheduleUpdate,
  type PublishResult,
  type PublishState,
  type PublishWorkflowInput,
  type ScheduleSignal,
} from './contract/publishing.js';

/**
 * The workflow wakes this long before `scheduledTime` to claim the row and hand the step to the
 * provider worker (media uploads included); the provider activity then holds the creating
 * request until `scheduledTime` (`notBefore`), so queueing latency does not make posts late.
 */
export const PUBLISH_LEAD_MS = 10_000;

/** Short database transitions run as local activities: fewer round trips through the cluster. */
export const db = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * Provider calls: typed failures decide. invalid_input, credentials_revoked and outcome_unknown
 * are final; rate_limited waits `Retry-After` (the failure's next retry delay); transient
 * retries with backoff.
 */
export function providerActivities(taskQueue: string, provider: Provider) {
  return proxyActivities<Activities>({
    taskQueue: `${taskQueue}-${provider === 'microblog' ? 'microblog' : 'pronet'}`,
    startToCloseTimeout: '10 minutes',
    // Longer than the wait for scheduledTime a step may do plus the SDK's heartbeat throttling.
    heartbeatTimeout: '30 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '2 minutes',
      maximumAttempts: 8,
      nonRetryableErrorTypes: [PUBLISH_FAILURE.invalidInput, PUBLISH_FAILURE.credentialsRevoked, PUBLISH_FAILURE.outcomeUnknown],
    },
  });
}

/**
 * Patch id: provider steps wait out a 429 on a workflow timer (`withRateLimitWaits`) instead of
 * the activity retry policy. Histories without its marker keep the old path.
 */
export const RATE_LIMIT_TIMER_PATCH = 'rate-limit-timer';

/** The wait a failed provider step carries when the network answered 429 (see `asActivityFailure`). */
function rateLimitWaitOf(err: unknown): RateLimitWait | null {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (!(cause instanceof ApplicationFailure) || cause.type !== PUBLISH_FAILURE.rateLimited) return null;
  const w = (cause.details?.[0] as { rateLimit?: RateLimitWait } | undefined)?.rateLimit;
  return w && typeof w.waitMs === 'number' && typeof w.maxWaitMs === 'number' && typeof w.retryAt === 'string' ? w : null;
}

/**
 * Runs a provider step that was started with `rateLimitTimer: true`. A 429 is not a failure: the
 * post shows when it will be retried (`show(retryAt)`, the network's own reset time), the
 * workflow waits that long on a durable timer and runs the step again (its exactly-once record
 * lets it send: the 429 was an answer). Once this step's waits would pass the configured cap
 * (`maxWaitMs`), the 429 becomes the step's failure, `provider_rate_limited`.
 */
export async function withRateLimitWaits<T>(run: () => Promise<T>, show: (retryAt: string) => Promise<void>): Promise<T> {
  let waitedMs = 0;
  for (;;) {
    try {
      return await run();
    } catch (err) {
      const wait = rateLimitWaitOf(err);
      if (!wait) throw err;
      if (waitedMs + wait.waitMs > wait.maxWaitMs) {
        const why = err instanceof ActivityFailure && err.cause ? err.cause.message : 'rate limited';
        throw ApplicationFailure.create({
          type: PUBLISH_FAILURE.rateLimited,
          message: `${why}; the network asks to wait until ${wait.retryAt}, beyond the ${Math.round(wait.maxWaitMs / 1000)} s this publish may wait in total`,
          nonRetryable: true,
          details: [{ code: 'provider_rate_limited' }],
        });
      }
      waitedMs += wait.waitMs;
      await show(wait.retryAt);
      await sleep(wait.waitMs);
    }
  }
}

/** The stored error of a failed provider step. */
export function publishError(err: unknown, provider: Provider): PostError {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const d = cause.details?.[0] as { code?: string } | undefined;
    return { code: d?.code ?? cause.type ?? 'publish_failed', message: cause.message, provider };
  }
  // Attempts spent on timeouts: the last attempt's outcome was looked up by the next, so the
  // network was unreachable throughout.
  const msg = cause instanceof Error ? cause.message : String(cause);
  return { code: 'provider_unavailable', message: msg, provider };
}

/**
 * Holds the latest schedule of this workflow and waits durably until it is due. Returns the
 * due schedule, or null once it was unscheduled.
 */
export class ScheduleBox {
  current: ScheduleSignal | undefined;
  cancelled = false;
  /** Set once the wait is over (row claimed, or the workflow is ending): later Updates are refused. */
  closed = false;

  constructor(readonly state: PublishState) {
    setHandler(scheduleSignal, (s) => this.schedule(s));
    setHandler(unscheduleSignal, ({ scheduleId }) => this.unschedule(scheduleId));
    setHandler(rescheduleUpdate, (s) => this.schedule(s), {
      validator: (s) => {
        if (typeof s?.scheduleId !== 'string' || Number.isNaN(Date.parse(s.scheduledTime))) reject(SCHEDULE_REJECTION.invalid, 'a reschedule needs scheduleId and an ISO scheduledTime');
        this.refuseWhenClosed();
        if (this.current && s.scheduleId < this.current.scheduleId) reject(SCHEDULE_REJECTION.stale, `row ${s.scheduleId} was replaced by ${this.current.scheduleId}`);
      },
    });
    setHandler(unscheduleUpdate, ({ scheduleId }) => this.unschedule(scheduleId), {
      validator: (u) => {
        if (typeof u?.scheduleId !== 'string') reject(SCHEDULE_REJECTION.invalid, 'an unschedule needs scheduleId');
        this.refuseWhenClosed();
        if (this.current?.scheduleId !== u.scheduleId) reject(SCHEDULE_REJECTION.notCurrent, `row ${u.scheduleId} is not the row this workflow waits for`);
      },
    });
    setHandler(stateQuery, () => state);
  }

  private refuseWhenClosed(): void {
    if (this.closed) reject(SCHEDULE_REJECTION.notWaiting, `the workflow no longer waits (${this.state.phase})`);
  }

  private schedule(s: ScheduleSignal): void {
    if (!this.current || s.scheduleId > this.current.scheduleId) {
      this.current = s;
      this.cancelled = false;
      this.state.scheduleId = s.scheduleId;
      this.state.scheduledTime = s.scheduledTime;
      this.state.phase = 'waiting';
    } else if (s.scheduleId === this.current.scheduleId) {
      this.current = { ...this.current, scheduledTime: s.scheduledTime };
      this.state.scheduledTime = s.scheduledTime;
    }
  }

  private unschedule(scheduleId: string): void {
    if (this.current?.scheduleId === scheduleId) this.cancelled = true;
  }

  /** Moves the due time of the current schedule (the database said later than the signal). */
  setTime(scheduleId: string, scheduledTime: string): void {
    if (this.current?.scheduleId === scheduleId) {
      this.current = { scheduleId, scheduledTime };
      this.state.scheduledTime = scheduledTime;
    }
  }

  async waitUntilDue(): Promise<ScheduleSignal | null> {
    for (;;) {
      await condition(() => this.current !== undefined || this.cancelled);
      if (this.cancelled) return null;
      const target = this.current!;
      const ms = Date.parse(target.scheduledTime) - PUBLISH_LEAD_MS - Date.now();
      if (ms <= 0) return target;
      const changed = await condition(() => this.current !== target || this.cancelled, ms);
      if (!changed) return target;
    }
  }

  /** True when a newer schedule arrived after `s` was taken. */
  replaced(s: ScheduleSignal): boolean {
    return this.current !== undefined && this.current.scheduleId !== s.scheduleId;
  }
}

function reject(type: string, message: string): never {
  throw ApplicationFailure.create({ type, message, nonRetryable: true });
}

export function initialState(): PublishState {
  return { phase: 'waiting', scheduleId: null, scheduledTime: null, externalId: null, threadExternalIds: [], error: null };
}

export const resultOf = (s: PublishState): PublishResult => ({ phase: s.phase, externalId: s.externalId, threadExternalIds: s.threadExternalIds, error: s.error });

type Claimed = Extract<Awaited<ReturnType<typeof db.claimSchedule>>, { status: 'claimed' }>;

/**
 * The start every scheduled publish shares: wait until the row is due, then claim it in the
 * database (exactly once). Returns the due schedule and its publish plan with the state set to
 * `publishing`, or null when the workflow is done (unscheduled, superseded, already handled).
 */
export async function claimWhenDue(input: PublishWorkflowInput, state: PublishState): Promise<{ due: ScheduleSignal; plan: Claimed['plan'] } | null> {
  const box = new ScheduleBox(state);
  const exit = <T>(r: T): T => {
    box.closed = true;
    return r;
  };
  for (;;) {
    const due = await box.waitUntilDue();
    if (!due) {
      state.phase = 'cancelled';
      return exit(null);
    }
    const claim = await db.claimSchedule({ scheduleId: due.scheduleId, postId: input.postId, n: input.n });
    if (claim.status === 'not_due') {
      box.setTime(due.scheduleId, claim.scheduledTime);
      continue;
    }
    if (claim.status !== 'claimed') {
      // Replaced by a newer row whose signal may already be here: go on with that one.
      if (box.replaced(due)) continue;
      state.phase = claim.status === 'superseded' ? 'superseded' : claim.status === 'done' ? state.phase : 'cancelled';
      return exit(null);
    }
    state.phase = 'publishing';
    return exit({ due, plan: claim.plan });
  }
}

