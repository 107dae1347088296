/**
 * `POST /discovery-search/import-verified-companies` (job type `import-verified-companies`):
 * prepares the workspace's `verified-discovery` source when people go into a segment, then
 * imports the companies in batches (one idempotent activity per batch), reporting progress.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { runJob, type JobInput, type JobResult } from './job.js';

export const VERIFIED_IMPORT_BATCH = 100;

export interface ImportVerifiedCompaniesInput {
  companyIds: string[];
  segmentId: string | null;
  contactsPerCompany: number;
}

export interface ImportVerifiedCompaniesResult {
  companies: { requested: number; imported: number; created: number; updated: number; notFound: string[] };
  contacts: { imported: number; created: number; updated: number };
  segmentId: string | null;
  sourceId: string | null;
}

const acts = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5, nonRetryableErrorTypes: ['segment_not_found'] },
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
    };
    for (let i = 0; i < total; i += VERIFIED_IMPORT_BATCH) {
      const batch = input.companyIds.slice(i, i + VERIFIED_IMPORT_BATCH);
      const r = await acts.importVerifiedCompanyBatch({ workspaceId: input.workspaceId, companyIds: batch, sourceId, contactsPerCompany: input.contactsPerCompany });
      out.companies.imported += r.imported;
      out.companies.created += r.created;
      out.companies.updated += r.updated;
      out.companies.notFound.push(...r.notFound);
      out.contacts.imported += r.contacts.imported;
      out.contacts.created += r.contacts.created;
      out.contacts.updated += r.contacts.updated;
      job.setProgress(Math.min(total, i + batch.length), total);
    }
    return out;
  });
}
