/**
 * `POST /discovery-search/import-verified-companies` (job type `import-verified-companies`):
 * prepares the workspace's `verified-discovery` source when people go into a segment, then
 * imports the companies in batches (one idempotent activity per batch), reporting progress. Each
 * person imported is charged once per (job, person) inside the batch activity; when the balance
 * runs out the job fails with `insufficient_credits` and the partial result.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { jobFailure, runJob } from './job.js';
import { DATA_FAILURE } from './contract/failures.js';
import type { ImportVerifiedCompaniesInput } from './contract/discovery.js';
import type { JobInput, JobResult } from './contract/jobs.js';

export const VERIFIED_IMPORT_BATCH = 100;

export interface ImportVerifiedCompaniesResult {
  companies: { requested: number; imported: number; created: number; updated: number; notFound: string[] };
  contacts: { imported: number; created: number; updated: number };
  segmentId: string | null;
  sourceId: string | null;
  /** Credits charged: 4 per person imported as a contact. */
  creditsCharged: number;
}

const acts = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5, nonRetryableErrorTypes: [DATA_FAILURE.segmentNotFound] },
});

export async function importVerifiedCompaniesWorkflow(input: ImportVerifiedCompaniesInput & JobInput): Promise<JobResult<ImportVerifiedCompaniesResult>> {
  return runJob(input, async (job) => {
    const total = input.companyIds.length;
    job.setProgress(0, total);
    const sourceId = input.segmentId ? (await acts.prepareVerifiedImportSource({ workspaceId: input.workspaceId, segmentId: input.segmentId })).sourceId : null;
    const out: ImportVerifiedCompaniesResult = {
      companies: { requested: total, imported: 0, created: 0, updated: 0, notFound: [] },
      contacts: { imported: 0, created: 0, updated: 0 },
      segmentId: input.segmentId,
      sourceId,
      creditsCharged: 0,
    };
    for (let i = 0; i < total; i += VERIFIED_IMPORT_BATCH) {
      const batch = input.companyIds.slice(i, i + VERIFIED_IMPORT_BATCH);
      const r = await acts.importVerifiedCompanyBatch({
        workspaceId: input.workspaceId,
        companyIds: batch,
        sourceId,
        contactsPerCompany: input.contactsPerCompany,
        jobId: input.jobId,
        billable: input.billable === true,
      });
      out.companies.imported += r.imported;
      out.companies.created += r.created;
      out.companies.updated += r.updated;
      out.companies.notFound.push(...r.notFound);
      out.contacts.imported += r.contacts.imported;
      out.contacts.created += r.contacts.created;
      out.contacts.updated += r.contacts.updated;
      out.creditsCharged += r.creditsCharged ?? 0;
      job.setProgress(Math.min(total, i + batch.length), total);
      // Only a charged import can run out (older jobs never report it): stop with what was paid for.
      if (r.exhausted) {
        job.setPartial(out);
        throw jobFailure(
          'insufficient_credits',
          `The balance ran out after ${out.contacts.imported} people were imported (${out.creditsCharged} credits); companies up to #${i + batch.length} were imported`,
        );
      }
    }
    return out;
  });
}
