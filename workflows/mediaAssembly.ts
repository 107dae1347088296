/**
 * `POST /v1/media/assemble-chunks` and `POST /contact-files/assemble-chunks`: server-side concatenation of uploaded chunks in the object
 * store, on the worker; the API checked the chunks, starts this workflow and waits for its
 * result within the request's deadline. The activity claims the chunks in the transaction that
 * records the result, so concurrent assemblies of the same chunks build one file. A refusal (type
 * not allowed or not matching the extension, a chunk claimed by another assembly or consumed
 * meanwhile) is the activity's non-retryable `DomainError` failure.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { StoredMedia } from '../db/media.js';
import type { AssembleMediaInput } from './contract/media.js';

const { assembleMediaChunks } = proxyActivities<Activities>({
  // A server-side copy of up to 1 GiB.
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

export async function mediaAssemblyWorkflow(input: AssembleMediaInput): Promise<StoredMedia> {
  return assembleMediaChunks(input);
}
