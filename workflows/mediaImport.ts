/**
 * `POST /v1/media/import-from-url`: the download runs on the worker, not in the API process; the
 * API starts this workflow and waits for its result within the request's deadline. A refusal
 * (URL not allowed, too large, type not allowed, download failed) is the activity's
 * non-retryable `DomainError` failure, which the API answers as a 4xx (api/mediaWorkflows.ts).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { StoredMedia } from '../db/media.js';
import type { ImportMediaInput } from './contract/media.js';

const { importMediaFromUrl } = proxyActivities<Activities>({
  // The download's own deadline (IMPORT_TIMEOUT_MS, 60 s) plus storing ≤ 50 MiB.
  startToCloseTimeout: '2 minutes',
  // Retried only for object store or database failures; a refusal is final.
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

export async function mediaImportWorkflow(input: ImportMediaInput): Promise<StoredMedia> {
  return importMediaFromUrl(input);
}
