/**
 * Bulk enrichment activities (issue 32; workflow: workflows/bulkEnrichment.ts):
 *
 * - `bulkEnrichBatch`: enriches the pending rows `from <= seq < to` of a job, CHUNK rows at a
 *   time: each row is planned with the single-row rules against the configuration fixed at
 *   acceptance, its slices walk their waterfalls through the same provider adapters as
 *   `enrichmentAttempt` (ROW_CONCURRENCY rows at once), then the chunk is settled in one
 *   transaction (db/bulkEnrichment.ts settleRows: charges once per (job, contact, slice), contact
 *   writes with provenance, row traces, budget and pause/cancel checks under the job's lock).
 *   A retried batch (a worker killed mid-batch) finds the settled rows done and redoes only the
 *   pending ones, so nothing is charged or written twice.
 * - A provider's 429 blocks that provider for its `Retry-After` (bounded by `maxRetryAfterMs`)
 *   for every row of the batch, and the call is retried: it slows the job and never fails a row.
 *   5xx and timeouts are retried `maxAttempts` times, then the provider is skipped, as for a
 *   single row.
 * - `bulkEnrichControl` moves the job's state (pause, resume, cancel) under its lock;
 *   `bulkEnrichSummary` counts the rows (the job's result: counts only).
 *
 * Inputs and results carry ids and counts only: contact data stays in PostgreSQL.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import { bulkJobSummary, pendingRows, readBulkJob, setBulkJobState, settleRows, type BulkJobSettings, type PendingRow, type RowSettlement } from '../../db/bulkEnrichment.js';
import { bulkDebitKey, planRow, rowTrace, type BulkEnrichmentSummary, type BulkSliceOutcome } from '../../domain/bulkEnrichment.js';
import { providersTried, sliceDataHasContent, slicePrice, sliceStatus, type AttemptRecord, type EnrichmentLookup, type EnrichmentSlice } from '../../domain/enrichment.js';
import { type EnrichmentConfig } from '../../domain/enrichmentConfig.js';
import { type PlannedProvider } from '../../domain/enrichmentPlan.js';
import type { ActivityDeps } from '../deps.js';
import { createEnrichmentProvider } from './enrichment.js';
import { EnrichmentProviderError, type EnrichmentProvider } from './enrichmentProvider.js';
import { DATA_FAILURE } from '../../workflows/contract/failures.js';

/** Rows settled per transaction. */
export const CHUNK = 100;
/** Rows whose providers are asked at once. */
export const ROW_CONCURRENCY = 16;
/** 429 answers one call waits out before its provider counts as unavailable for that slice. */
const MAX_RATE_LIMIT_WAITS = 50;

export interface BulkBatchInput {
  workspaceId: string;
  jobId: string;
  from: number;
  to: number;
  /** The job's generation this run works under (bumped by pause/resume/cancel). */
  generation: number;
}

export interface BulkBatchResult {
  settled: number;
  credits: number;
  stoppedBy: null | 'max_credits' | 'insufficient_credits' | 'paused' | 'cancelled' | 'superseded';
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
  });

/** Per provider, the time before which nobody calls it (set by a 429's Retry-After). */
class RateGate {
  private readonly until = new Map<string, number>();
  block(provider: string, ms: number): void {
    this.until.set(provider, Math.max(this.until.get(provider) ?? 0, Date.now() + ms));
  }
  async pass(provider: string, signal: AbortSignal): Promise<void> {
    for (let wait = (this.until.get(provider) ?? 0) - Date.now(); wait > 0 && !signal.aborted; wait = (this.until.get(provider) ?? 0) - Date.now()) await sleep(wait, signal);
  }
}

/** Runs `fn` over `items`, at most `limit` at once, results in order. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

export function createBulkEnrichmentActivities(deps: ActivityDeps) {
  return {
    async bulkEnrichBatch(input: BulkBatchInput): Promise<BulkBatchResult> {
      const ctx = Context.current();
      const job = await readBulkJob(deps.pool, input.workspaceId, input.jobId);
      if (!job) throw ApplicationFailure.nonRetryable(`Bulk enrichment job ${input.jobId} no longer exists`, DATA_FAILURE.bulkJobNotFound);
      const run = new BatchRun(deps, job, ctx.cancellationSignal);
      let cursor = input.from;
      const beat = setInterval(() => ctx.heartbeat(cursor), 1000);
      const result: BulkBatchResult = { settled: 0, credits: 0, stoppedBy: null };
      try {
        for (; cursor < input.to; cursor += CHUNK) {
          if (ctx.cancellationSignal.aborted) return { ...result, stoppedBy: 'cancelled' };
          const rows = await pendingRows(deps.pool, job, cursor, Math.min(cursor + CHUNK, input.to));
          if (!rows.length) continue;
          const settlements = await mapLimit(rows, ROW_CONCURRENCY, (row) => run.enrichRow(row));
          if (ctx.cancellationSignal.aborted) return { ...result, stoppedBy: 'cancelled' };
          const out = await settleRows(deps.pool, job, input.generation, settlements);
          result.settled += out.settled;
          result.credits += out.credits;
          ctx.heartbeat(cursor + CHUNK);
          if (out.stoppedBy) return { ...result, stoppedBy: out.stoppedBy };
        }
        return result;
      } finally {
        clearInterval(beat);
      }
    },

    async bulkEnrichControl(input: { workspaceId: string; jobId: string; state: 'running' | 'paused' | 'cancelled' | 'finished' }): Promise<number> {
      return setBulkJobState(deps.pool, input.workspaceId, input.jobId, input.state);
    },

    async bulkEnrichSummary(input: { workspaceId: string; jobId: string }): Promise<BulkEnrichmentSummary> {
      const s = await bulkJobSummary(deps.pool, input.workspaceId, input.jobId);
      if (!s) throw ApplicationFailure.nonRetryable(`Bulk enrichment job ${input.jobId} no longer exists`, DATA_FAILURE.bulkJobNotFound);
      return s;
    },
  };
}

/** One batch's providers and rate gate, shared by its rows. */
class BatchRun {
  private readonly config: EnrichmentConfig;
  private readonly providers = new Map<string, EnrichmentProvider>();
  private readonly gate = new RateGate();

  constructor(
    private readonly deps: ActivityDeps,
    private readonly job: BulkJobSettings,
    private readonly signal: AbortSignal,
  ) {
    this.config = job.plan as EnrichmentConfig;
  }

  private provider(name: string): EnrichmentProvider | undefined {
    let p = this.providers.get(name);
    const cfg = this.config.providers[name];
    if (!p && cfg) this.providers.set(name, (p = createEnrichmentProvider(cfg, this.deps, this.config.retry.maxRetryAfterMs)));
    return p;
  }

  async enrichRow(row: PendingRow): Promise<RowSettlement> {
    const plan = planRow(row, this.job.slices, this.config, new Set(row.fresh), this.job.force);
    const outcomes = await Promise.all(
      (Object.entries(plan.slices) as [EnrichmentSlice, PlannedProvider[]][]).map(([slice, providers]) => this.runSlice(row, plan.lookup!, slice, providers)),
    );
    const trace = rowTrace(plan, outcomes, this.job.billable);
    const found = outcomes.filter((o) => sliceStatus(o) === 'found');
    return {
      seq: row.seq,
      contactId: row.contactId,
      trace,
      charges: found.map((o) => ({
        slice: o.slice,
        amount: slicePrice(o),
        idempotencyKey: bulkDebitKey(this.job.jobId, row.contactId, o.slice),
        reason: `bulk enrichment ${o.slice}`,
        metadata: { slice: o.slice, contactId: row.contactId, provider: o.attempts[providersTried(o) - 1]!.provider, providersTried: providersTried(o) },
      })),
      found: found.map((o) => ({ slice: o.slice, provider: o.attempts[providersTried(o) - 1]!.provider, data: o.data })),
    };
  }

  /** A slice's waterfall for one row, as a single-row job walks it. */
  private async runSlice(row: PendingRow, lookup: EnrichmentLookup, slice: EnrichmentSlice, planned: PlannedProvider[]): Promise<BulkSliceOutcome> {
    const attempts: AttemptRecord[] = [];
    const rateLimitedWaits: number[] = [];
    for (const p of planned) {
      const started = Date.now();
      const r = await this.call(p, slice, lookup, `${this.job.jobId}:${row.contactId}:${slice}`);
      attempts.push({ provider: p.provider, outcome: r.outcome, durationMs: Date.now() - started, ...(r.error ? { error: r.error } : {}) });
      rateLimitedWaits.push(r.waits);
      if (r.outcome === 'found') return { slice, attempts, rateLimitedWaits, data: r.data };
    }
    return { slice, attempts, rateLimitedWaits };
  }

  private async call(p: PlannedProvider, slice: EnrichmentSlice, lookup: EnrichmentLookup, requestId: string) {
    const provider = this.provider(p.provider);
    if (!provider) return { outcome: 'rejected' as const, waits: 0, error: `provider_unknown: ${p.provider} is not configured` };
    const retry = this.config.retry;
    let failures = 0;
    let waits = 0;
    for (;;) {
      await this.gate.pass(p.provider, this.signal);
      try {
        const data = await provider.find(slice, lookup, { requestId, timeoutMs: p.timeoutMs, postsLimit: this.config.postsLimit });
        return sliceDataHasContent(slice, data) ? { outcome: 'found' as const, data: data!, waits } : { outcome: 'not_found' as const, waits };
      } catch (e) {
        const err = e instanceof EnrichmentProviderError ? e : new EnrichmentProviderError('unavailable', (e as Error).message);
        if (err.kind === 'rejected' || err.kind === 'bad_response') return { outcome: 'rejected' as const, waits, error: `provider_${err.kind}: ${err.message}` };
        if (err.kind === 'rate_limited' && waits < MAX_RATE_LIMIT_WAITS) {
          waits++;
          this.gate.block(p.provider, Math.min(err.retryAfterMs ?? backoff(retry.initialIntervalMs, retry.maxIntervalMs, waits), retry.maxRetryAfterMs));
          continue;
        }
        if (++failures >= retry.maxAttempts || this.signal.aborted) return { outcome: 'unavailable' as const, waits, error: `provider_${err.kind}: ${err.message}` };
        await sleep(backoff(retry.initialIntervalMs, retry.maxIntervalMs, failures), this.signal);
      }
    }
  }
}

const backoff = (initial: number, max: number, n: number) => Math.min(max, initial * 2 ** (n - 1));
