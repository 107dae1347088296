/**
 * Publishing side effects: one remote create per activity (`publishStep`, run on the network's
 * own task queue so its worker bounds the concurrency per network), and the dispatcher that
 * starts (or re-signals) one publish workflow per schedule row of a bulk-schedule batch.
 *
 * Exactly once: before the creating request is sent, `publish_attempts` records the step as
 * `sending`. A retry that finds `sending` (the previous attempt timed out, or its worker died)
 * does not send again: it looks the object up on the network and either adopts it or ends with
 * `outcome_unknown`. A definite failure (an HTTP answer) marks the step `failed`, so the retry
 * may send. A `done` step answers from the record.
 */
import { Context } from '@temporalio/activity';
import { WithStartWorkflowOperation, WorkflowIdReusePolicy } from '@temporalio/client';
import { ApplicationFailure, TypedSearchAttributes } from '@temporalio/common';
import pLimit from 'p-limit';
import { SA } from '../domain/searchAttributes.js';
import type { ActivityDeps } from './deps.js';
import { DISPATCH_HORIZON_MS, FAILURE_CODES, networkOf, publishWorkflowId, rateLimitMaxWaitMs, rateLimitWait, type RateLimitWait } from '../domain/publishing.js';
import type { externalReplyWorkflow } from '../workflows/externalReply.js';
import type { publishPostWorkflow } from '../workflows/publishPost.js';
import { SCHEDULE_REJECTION, rootCause } from '../workflows/contract/failures.js';
import { PUBLISH_WORKFLOWS, rescheduleUpdate, type DispatchInput } from '../workflows/contract/publishing.js';
import { parsePronetPostUrl } from '../domain/pronetUrls.js';
import type { MediaRef, Provider } from '../domain/social.js';
import { publishingAccount } from '../db/integrations.js';
import { mediaToPublish } from '../db/media.js';
import { postToPublish, repostParent } from '../db/posts.js';
import { findPublishAttempt, markPublishAttemptDone, markPublishAttemptFailed, markPublishAttemptSending, takeOverPublishAttempt } from '../db/publishAttempts.js';
import { dispatchableRows, firstUndispatchedTime, markRowsDispatched, scheduleRowProviderId } from '../db/schedules.js';
import { providerBaseUrlAllowed, providerBaseUrlAllowList } from '../infra/outbound.js';
import { microblogAdapter } from './providers/microblog.js';
import { freshAccessToken, reauthRequired } from './oauthTokens.js';
import { dispatchEventDeliveries } from './eventDeliveries.js';
import type { DeliveryRef } from '../db/events.js';
import { activityScope, type WorkspaceScope } from '../db/scope.js';
import { publishOutcomes } from '../telemetry/metrics.js';
import { pronetAdapter } from './providers/pronet.js';
import { ProviderFailure, createOnce, reconcile, type CreateOp, type MediaSource, type Published, type SocialAccount, type SocialAdapter } from './providers/social.js';

export type PublishStep =
  /** The post itself, or for an external post the comment on the external thread. */
  | { kind: 'main'; scheduleId: string }
  /** Thread item `index`, answering `parentExternalId` (microblog: previous tweet; pronet: the post). */
  | { kind: 'thread'; scheduleId: string; index: number; parentExternalId: string }
  /** A repost child resharing its parent. */
  | { kind: 'reshare' };

export interface PublishStepInput {
  workspaceId: string;
  postId: string;
  step: PublishStep;
  /** The creating request is held until this time (ISO 8601); media uploads happen before. */
  notBefore?: string;
  /**
   * Set by workflows that wait out a 429 on their own timer (patch `rate-limit-timer`): the 429
   * fails the activity at once (non-retryable `rate_limited` carrying a `RateLimitWait`) instead
   * of being retried by the activity retry policy.
   */
  rateLimitTimer?: boolean;
}

const DISPATCH_CONCURRENCY = 32;
const DISPATCH_CHUNK = 1000;

const adapters: Record<'microblog' | 'pronet', SocialAdapter> = { microblog: microblogAdapter, pronet: pronetAdapter };

/**
 * Network calls in flight per network and worker process. The provider task queues' slot count
 * is higher because a step mostly waits for `notBefore`; this bounds what the network sees.
 */
export const MAX_CALLS_PER_NETWORK = 20;

class Limiter {
  private active = 0;
  private waiting: Array<() => void> = [];
  constructor(private readonly max: number) {}
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}
const PERMANENT = new Set(['invalid_input', 'credentials_revoked', 'outcome_unknown']);

/**
 * A typed provider failure as the Temporal failure the workflow decides on (by `type` alone). A
 * 429 for a workflow that waits on its own timer (`rateLimitTimer`) is final for the activity and
 * carries the wait (`details[0].rateLimit`, a `RateLimitWait`).
 */
function asActivityFailure(e: unknown, provider: Provider | null, rateLimitTimer: { maxWaitMs: number } | null): unknown {
  if (!(e instanceof ProviderFailure)) return e;
  const code = e.opts.code ?? FAILURE_CODES[e.kind] ?? e.kind;
  if (e.kind === 'rate_limited' && rateLimitTimer) {
    const rateLimit: RateLimitWait = rateLimitWait(e.opts.rateLimitWaitMs ?? e.opts.retryAfterMs ?? 60_000, rateLimitTimer.maxWaitMs);
    return ApplicationFailure.create({ type: e.kind, message: e.message, nonRetryable: true, details: [{ code, status: e.opts.status ?? null, provider, rateLimit }] });
  }
  return ApplicationFailure.create({
    type: e.kind,
    message: e.message,
    nonRetryable: PERMANENT.has(e.kind),
    ...(e.opts.retryAfterMs ? { nextRetryDelay: e.opts.retryAfterMs } : {}),
    details: [{ code, status: e.opts.status ?? null, provider }],
  });
}

interface StepContext {
  account: SocialAccount;
  op: CreateOp;
  /** The integration `account` is (its token is refreshed again right before sending, and after a 401). */
  integrationId: string;
}

export function createPublishingActivities(deps: ActivityDeps) {
  const { storage, config } = deps;
  const limiters = { microblog: new Limiter(MAX_CALLS_PER_NETWORK), pronet: new Limiter(MAX_CALLS_PER_NETWORK) };
  /** Starts the deliveries of an `integration.reauth_required` event a token refresh recorded. */
  const dispatch = (deliveries: DeliveryRef[]) => dispatchEventDeliveries(deps, deliveries);

  function mediaSource(fileName: string, contentType: string, size: number): MediaSource {
    return {
      fileName,
      contentType,
      size,
      async read(offset, length) {
        const stream = await storage.client.getPartialObject(storage.bucket, fileName, offset, length);
        const chunks: Buffer[] = [];
        for await (const c of stream) chunks.push(c as Buffer);
        return Buffer.concat(chunks);
      },
    };
  }

  async function loadMedia(scope: WorkspaceScope, refs: MediaRef[]): Promise<MediaSource[]> {
    if (!refs.length) return [];
    const byName = await mediaToPublish(scope.db, scope.workspaceId, refs.map((m) => m.fileName));
    return refs.map((ref) => {
      const m = byName.get(ref.fileName);
      if (!m) throw new ProviderFailure('invalid_input', `media ${ref.fileName} no longer exists`);
      return mediaSource(ref.fileName, m.contentType, m.sizeBytes);
    });
  }

  /**
   * The integration (of the activity's workspace: the entity manager's filter) a step sends with,
   * its access token refreshed first when it ends soon (activities/oauthTokens.ts).
   */
  async function account(scope: WorkspaceScope, integrationId: string): Promise<SocialAccount> {
    const i = await publishingAccount(scope.em, integrationId);
    if (!i || i.status === 'disconnected' || !i.credentialsEncrypted) {
      throw new ProviderFailure('credentials_revoked', `integration ${integrationId} is disconnected`);
    }
    if (i.status === 'reauth_required') throw reauthRequired(integrationId, 'the network ended its grant');
    // A base URL stored before the operator narrowed the allow-list is not called with the token.
    if (i.apiBaseUrl && !providerBaseUrlAllowed(i.apiBaseUrl, providerBaseUrlAllowList(config.env))) {
      throw new ProviderFailure('invalid_input', `integration ${integrationId}: its apiBaseUrl is not allowed by this service`, { code: 'provider_address_not_allowed' });
    }
    const token = await freshAccessToken(scope, config, integrationId, { dispatch });
    return { provider: i.provider, externalAccountId: i.externalAccountId, accessToken: token, apiBaseUrl: i.apiBaseUrl ?? null, allowList: config.outboundAllowList };
  }

  async function stepContext(scope: WorkspaceScope, input: PublishStepInput): Promise<StepContext> {
    const { db } = scope;
    const post = await postToPublish(db, scope.workspaceId, input.postId);
    if (!post) throw new ProviderFailure('invalid_input', `post ${input.postId} no longer exists`);
    const step = input.step;
    if (step.kind === 'reshare') {
      const par = await repostParent(db, post.parent_post_id);
      if (!par?.external_id) throw new ProviderFailure('invalid_input', 'the parent post has not been published');
      const acct = await account(scope, post.provider_id);
      if (networkOf(acct.provider) !== networkOf(par.provider)) throw new ProviderFailure('invalid_input', `a ${acct.provider} account cannot reshare a ${par.provider} post`);
      return { account: acct, integrationId: post.provider_id, op: { type: 'reshare', text: post.content, media: [], parentExternalId: par.external_id } };
    }
    const rowProviderId = await scheduleRowProviderId(db, step.scheduleId);
    if (!rowProviderId) throw new ProviderFailure('invalid_input', `schedule row ${step.scheduleId} no longer exists`);
    const acct = await account(scope, rowProviderId);
    if (step.kind === 'main') {
      if (post.external_post) {
        const thread = parsePronetPostUrl(post.external_post_url ?? '');
        if (!thread) throw new ProviderFailure('invalid_input', `cannot resolve the thread of ${post.external_post_url}`);
        return { account: acct, integrationId: rowProviderId, op: { type: 'comment', text: post.content, media: await loadMedia(scope, post.media), parentExternalId: thread.urn } };
      }
      return { account: acct, integrationId: rowProviderId, op: { type: 'post', text: post.content, media: await loadMedia(scope, post.media) } };
    }
    const item = post.thread_items[step.index];
    if (!item) throw new ProviderFailure('invalid_input', `thread item ${step.index} no longer exists`);
    return {
      account: acct,
      integrationId: rowProviderId,
      op: { type: 'reply', text: item.content, media: await loadMedia(scope, item.media ?? []), parentExternalId: step.parentExternalId },
    };
  }

  const stepKey = (input: PublishStepInput) =>
    input.step.kind === 'reshare' ? `${input.postId}:reshare` : input.step.kind === 'main' ? `${input.step.scheduleId}:main` : `${input.step.scheduleId}:thread:${input.step.index}`;

  return {
    /** One remote create, exactly once (see the file comment). */
    async publishStep(input: PublishStepInput): Promise<Published> {
      const key = stepKey(input);
      const scope = activityScope();
      const { db } = scope;
      let provider: Provider | null = null;
      // Heartbeats let Temporal notice a dead worker within the heartbeat timeout, not the 10-minute call limit.
      const ctx = Context.current();
      const beat = setInterval(() => ctx.heartbeat(), 2000);
      try {
        const rec = await findPublishAttempt(db, key);
        if (rec?.state === 'done') return { externalId: rec.external_id!, externalUrl: rec.external_url! };
        const { account: acct, op, integrationId } = await stepContext(scope, input);
        provider = acct.provider;
        const adapter = adapters[networkOf(acct.provider)];
        const attempt = ctx.info.attempt;
        const done = async (res: Published) => {
          publishOutcomes.inc({ provider: acct.provider, outcome: 'published' });
          await markPublishAttemptDone(db, key, res.externalId, res.externalUrl);
          return res;
        };
        // This attempt takes the step over; an older attempt still running will not send.
        const cur = await takeOverPublishAttempt(db, { stepKey: key, workspaceId: scope.workspaceId, postId: input.postId, attempt });
        if (!cur) {
          const d = (await findPublishAttempt(db, key))!;
          return { externalId: d.external_id!, externalUrl: d.external_url! };
        }
        const limiter = limiters[networkOf(acct.provider)];
        if (cur.state === 'sending') {
          return await done(await limiter.run(() => reconcile(adapter, acct, op, cur.started_at, 'a previous attempt ended without an answer')));
        }
        let sent = false;
        op.beforeSend = async () => {
          const wait = input.notBefore ? Date.parse(input.notBefore) - Date.now() : 0;
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          // The token read before the wait may have ended during it: refreshed just in time.
          acct.accessToken = await freshAccessToken(scope, config, integrationId, { dispatch });
          if (!(await markPublishAttemptSending(db, key, attempt))) throw new ProviderFailure('transient', 'a newer attempt took this step over; not sending');
          sent = true;
        };
        try {
          // Wait for `notBefore` outside the limiter: only the network calls count against it.
          const wait = input.notBefore ? Date.parse(input.notBefore) - Date.now() : 0;
          if (wait > 0 && op.media.length === 0) await new Promise((r) => setTimeout(r, wait));
          return await done(await limiter.run(() => createOnce(adapter, acct, op, new Date())));
        } catch (e) {
          // An answer from the network means nothing was created: a retry may send again.
          if (sent && e instanceof ProviderFailure && e.kind !== 'outcome_unknown') {
            await markPublishAttemptFailed(db, key, attempt);
          }
          // 401 to a token believed valid (revoked or ended early): refresh it once; a grant that
          // is gone turns into integration_reauth_required, a refreshed token is retried.
          if (e instanceof ProviderFailure && e.kind === 'credentials_revoked' && e.opts.status === 401) {
            const now = await freshAccessToken(scope, config, integrationId, { rejected: acct.accessToken, dispatch });
            if (now !== acct.accessToken) throw new ProviderFailure('transient', 'the access token was refreshed after a 401; retrying with it');
          }
          throw e;
        }
      } catch (e) {
        publishOutcomes.inc({ provider: provider ?? 'unknown', outcome: e instanceof ProviderFailure ? e.kind : 'error' });
        throw asActivityFailure(e, provider, input.rateLimitTimer ? { maxWaitMs: rateLimitMaxWaitMs(config.env) } : null);
      } finally {
        clearInterval(beat);
      }
    },

    /**
     * Starts, or re-signals, the publish workflow of every row of a batch that is due within the
     * dispatch horizon and has none yet, earliest first, with bounded parallelism. Rows further
     * out wait in the table (the batch workflow comes back for them), so a large far-future
     * batch does not load the cluster with sleeping workflows. Update-with-start (the
     * `reschedule` Update) makes this idempotent and acknowledged: a running workflow of the
     * row's id takes the new schedule, a closed or missing one is started with it;
     * `dispatched_at` marks the rows done.
     */
    async dispatchScheduleBatch(input: DispatchInput): Promise<{ dispatched: number; nextDispatchAt: string | null }> {
      const ctx = Context.current();
      const c = deps.temporal;
      const { db, workspaceId } = activityScope();
      let dispatched = 0;
      for (;;) {
        const list = await dispatchableRows(db, input.batchId, DISPATCH_HORIZON_MS, DISPATCH_CHUNK);
        if (!list.length) break;
        const limit = pLimit(DISPATCH_CONCURRENCY);
        await Promise.all(
          list.map((r, i) =>
            limit(async () => {
              // A cancelled dispatch (worker shutting down, batch terminated) stops; the retry resumes from the marks.
              if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason ?? new Error('dispatch cancelled');
              // Both take a PublishWorkflowInput and return a PublishResult.
              const workflowType = r.external_post ? PUBLISH_WORKFLOWS.externalReply : PUBLISH_WORKFLOWS.post;
              const startWorkflowOperation = new WithStartWorkflowOperation<typeof publishPostWorkflow | typeof externalReplyWorkflow>(workflowType, {
                workflowId: publishWorkflowId(r.post_id, r.n),
                taskQueue: input.taskQueue,
                args: [{ workspaceId, postId: r.post_id, n: r.n, taskQueue: input.taskQueue }],
                workflowIdConflictPolicy: 'USE_EXISTING',
                workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
                typedSearchAttributes: new TypedSearchAttributes([
                  { key: SA.WorkspaceId, value: workspaceId },
                  { key: SA.PostId, value: r.post_id },
                  { key: SA.JobType, value: r.external_post ? 'external-reply' : 'publish' },
                ]),
                memo: { workspaceId, postId: r.post_id, n: r.n },
              });
              await c.workflow
                .executeUpdateWithStart(rescheduleUpdate, { args: [{ scheduleId: r.id, scheduledTime: r.scheduled_time.toISOString() }], startWorkflowOperation })
                .catch((err: unknown) => {
                  // A newer row already holds the workflow: this one was replaced. Any other refusal
                  // (the workflow is ending) or error fails the attempt; the retry finds it closed and starts anew.
                  const cause = rootCause(err);
                  if (cause instanceof ApplicationFailure && cause.type === SCHEDULE_REJECTION.stale) return;
                  throw err;
                });
              ctx.heartbeat(dispatched + i);
            }),
          ),
        );
        await markRowsDispatched(db, list.map((r) => r.id));
        dispatched += list.length;
      }
      const first = await firstUndispatchedTime(db, input.batchId);
      return { dispatched, nextDispatchAt: first ? new Date(first.getTime() - DISPATCH_HORIZON_MS).toISOString() : null };
    },
  };
}
