/** The enrichment jobs (workflows/enrichment.ts, workflows/bulkEnrichment.ts): inputs and the bulk job's signals. */
import { defineSignal } from '@temporalio/workflow';
import type { EnrichmentPlan } from '../../domain/enrichmentPlan.js';

export interface EnrichmentWorkflowInput {
  plan: EnrichmentPlan;
  /** False for session keys: nothing is checked or charged. */
  billable: boolean;
}

export interface BulkEnrichmentInput {
  /** Rows of the job (`bulk_enrichment_rows.seq` 0 … total-1). */
  total: number;
  batchRows?: number;
  batchesPerRun?: number;
  /** Set when continuing as new. */
  resume?: { from: number; generation: number };
}

/** Sent by `POST /contacts/bulk-enrichment/{jobId}/pause|resume`. */
export const bulkEnrichmentPauseSignal = defineSignal('pause');
export const bulkEnrichmentResumeSignal = defineSignal('resume');
