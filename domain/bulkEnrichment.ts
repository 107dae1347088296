/**
 * Bulk enrichment rules (issue 32), as plain functions: what one contact row needs per slice
 * (fresh data already bought, no lookup the configured providers accept, or a waterfall to walk),
 * the dry-run estimate built from those, what a row's slice outcome costs and how it is traced.
 *
 * A row is planned with the single-row rules (`planEnrichment`, one slice at a time) so a bulk
 * job asks, tries and prices exactly what `POST /contacts/unified-data-api` would for the same
 * contact. Nothing here touches the network or the database.
 */
import { InvalidRequestError } from './errors.js';
import { ENRICHMENT_SLICES, providersTried, sliceStatus, slicePrice, type AttemptRecord, type EnrichmentLookup, type EnrichmentSlice, type SliceOutcome } from './enrichment.js';
import { planEnrichment, type PlannedProvider } from './enrichmentPlan.js';
import { type EnrichmentConfig } from './enrichmentConfig.js';
import { enrichmentSlicePrice } from './pricing.js';

/** Largest explicit `contactIds` list of one request. */
export const MAX_BULK_CONTACT_IDS = 100_000;
/** Default freshness window when the workspace set none. */
export const DEFAULT_FRESHNESS_DAYS = 30;

/** What a contact offers to look it up by (columns of the contact and its primary company). */
export interface RowLookupInput {
  pronet?: string | null;
  fullName?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  companyWebsite?: string | null;
}

/** Why a slice of a row is not bought: data younger than the freshness window, or no usable lookup. */
export type SliceSkip = 'fresh' | 'no_lookup';

export interface RowPlan {
  /** The lookup handed to providers (from the first slice that could be planned). */
  lookup: EnrichmentLookup | null;
  /** Slices to buy, with their planned waterfall. */
  slices: Partial<Record<EnrichmentSlice, PlannedProvider[]>>;
  skipped: Partial<Record<EnrichmentSlice, { reason: SliceSkip; code?: string }>>;
}

const present = (s: string | null | undefined) => (s && s.trim() ? s.trim() : undefined);

/**
 * Plans one row: each requested slice is planned alone by the single-row rules, so a slice the
 * contact cannot be looked up for (no pronet, an unusable website…) is skipped with the rule's
 * code instead of failing the row; slices in `fresh` are skipped unless `force`.
 */
export function planRow(input: RowLookupInput, slices: readonly EnrichmentSlice[], config: EnrichmentConfig, fresh: ReadonlySet<string>, force: boolean): RowPlan {
  const plan: RowPlan = { lookup: null, slices: {}, skipped: {} };
  const fullName = present(input.fullName);
  const firstName = present(input.firstName);
  const lastName = present(input.lastName);
  const req = {
    ...(present(input.pronet) ? { pronet: present(input.pronet) } : {}),
    ...(fullName ? { fullName } : firstName && lastName ? { firstName, lastName } : {}),
    ...(present(input.companyWebsite) ? { companyWebsite: present(input.companyWebsite) } : {}),
  };
  for (const slice of slices) {
    if (!force && fresh.has(slice)) {
      plan.skipped[slice] = { reason: 'fresh' };
      continue;
    }
    try {
      const p = planEnrichment({ ...req, fields: [slice] }, config);
      plan.slices[slice] = p.slices[slice]!;
      plan.lookup ??= p.lookup;
    } catch (e) {
      if (!(e instanceof InvalidRequestError)) throw e;
      // A website that is no domain still lets the profile-bound slices run without it.
      if (req.companyWebsite && e.details?.some((d) => d.path === '/companyWebsite')) {
        const { companyWebsite: _unusable, ...rest } = req;
        try {
          const p = planEnrichment({ ...rest, fields: [slice] }, config);
          plan.slices[slice] = p.slices[slice]!;
          plan.lookup ??= p.lookup;
          continue;
        } catch (e2) {
          if (!(e2 instanceof InvalidRequestError)) throw e2;
          plan.skipped[slice] = { reason: 'no_lookup', code: e2.code };
          continue;
        }
      }
      plan.skipped[slice] = { reason: 'no_lookup', code: e.code };
    }
  }
  return plan;
}

/** The dry run's answer: rows, what each slice would need, and the price range. */
export interface BulkEstimate {
  rows: number;
  /** Per requested slice: rows that would buy it, rows skipped as fresh, rows without a usable lookup. */
  slices: Partial<Record<EnrichmentSlice, { toBuy: number; fresh: number; noLookup: number; minCredits: number; maxCredits: number }>>;
  /** Rows with at least one slice to buy. */
  rowsToEnrich: number;
  /** What the job costs when every slice to buy is found by its first provider. */
  minCredits: number;
  /** What it costs when every slice to buy is found, each by its last provider: the most it can cost. */
  maxCredits: number;
}

export function emptyEstimate(slices: readonly EnrichmentSlice[]): BulkEstimate {
  const e: BulkEstimate = { rows: 0, slices: {}, rowsToEnrich: 0, minCredits: 0, maxCredits: 0 };
  for (const s of slices) e.slices[s] = { toBuy: 0, fresh: 0, noLookup: 0, minCredits: 0, maxCredits: 0 };
  return e;
}

/** Adds one planned row to an estimate. */
export function addToEstimate(e: BulkEstimate, plan: RowPlan): void {
  e.rows++;
  let any = false;
  for (const [slice, providers] of Object.entries(plan.slices) as [EnrichmentSlice, PlannedProvider[]][]) {
    const s = e.slices[slice]!;
    const min = enrichmentSlicePrice(slice, 1);
    const max = enrichmentSlicePrice(slice, providers.length);
    s.toBuy++;
    s.minCredits += min;
    s.maxCredits += max;
    e.minCredits += min;
    e.maxCredits += max;
    any = true;
  }
  for (const [slice, skip] of Object.entries(plan.skipped) as [EnrichmentSlice, { reason: SliceSkip }][]) {
    if (skip.reason === 'fresh') e.slices[slice]!.fresh++;
    else e.slices[slice]!.noLookup++;
  }
  if (any) e.rowsToEnrich++;
}

/** One slice of a row's trace (`GET /contacts/bulk-enrichment/{jobId}/rows`). */
export interface RowSliceTrace {
  status: 'found' | 'not_found' | 'failed' | 'fresh' | 'no_lookup';
  provider: string | null;
  credits: number;
  attempts: { provider: string; outcome: AttemptRecord['outcome']; rateLimitedWaits?: number; error?: string }[];
  code?: string;
}

export interface RowTrace {
  slices: Partial<Record<EnrichmentSlice, RowSliceTrace>>;
  credits: number;
}

/** A tried slice's outcome, with the 429 waits of each attempt (they slow the job, never fail it). */
export interface BulkSliceOutcome extends SliceOutcome {
  rateLimitedWaits: number[];
}

/** The price of a row: each slice found, priced by the providers tried (as a single-row request). */
export function rowPrice(outcomes: readonly BulkSliceOutcome[]): number {
  return outcomes.reduce((sum, o) => sum + slicePrice(o), 0);
}

export function rowTrace(plan: RowPlan, outcomes: readonly BulkSliceOutcome[], charged: boolean): RowTrace {
  const trace: RowTrace = { slices: {}, credits: 0 };
  for (const slice of ENRICHMENT_SLICES) {
    const skip = plan.skipped[slice];
    if (skip) trace.slices[slice] = { status: skip.reason, provider: null, credits: 0, attempts: [], ...(skip.code ? { code: skip.code } : {}) };
  }
  for (const o of outcomes) {
    const status = sliceStatus(o);
    const credits = charged ? slicePrice(o) : 0;
    trace.credits += credits;
    trace.slices[o.slice] = {
      status,
      provider: status === 'found' ? o.attempts[providersTried(o) - 1]!.provider : null,
      credits,
      attempts: o.attempts.map((a, i) => ({
        provider: a.provider,
        outcome: a.outcome,
        ...(o.rateLimitedWaits[i] ? { rateLimitedWaits: o.rateLimitedWaits[i] } : {}),
        ...(a.error ? { error: a.error } : {}),
      })),
    };
  }
  return trace;
}

/** Idempotency key of one charge: once per (job, row, slice), whatever retries or restarts. */
export const bulkDebitKey = (jobId: string, contactId: string, slice: EnrichmentSlice) => `bulk-enrich:${jobId}:${contactId}:${slice}`;

/** Why a job stopped before its last row. */
export type BulkStop = 'max_credits' | 'insufficient_credits' | 'cancelled';

/** The job's result (`jobResponsePayload`): counts only (claim check: the rows live in PostgreSQL). */
export interface BulkEnrichmentSummary {
  rows: number;
  done: number;
  pending: number;
  notReached: number;
  cancelled: number;
  creditsCharged: number;
  /** Per slice: rows where it was found, not found, failed, skipped as fresh, or had no lookup. */
  slices: Partial<Record<EnrichmentSlice, Record<RowSliceTrace['status'], number>>>;
  stoppedBy: BulkStop | null;
  state: 'running' | 'paused' | 'cancelled' | 'finished';
}
