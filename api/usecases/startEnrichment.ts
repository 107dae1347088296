/**
 * `POST /contacts/unified-data-api` as one use case: plans the request against the enrichment
 * rules and the configured waterfall, refuses a suppressed person, reserves the request's maximum
 * price as a hold and starts the enrichment job, which settles the real price and releases the
 * rest. The route only adapts HTTP to it; every statement goes through the request's `scope`.
 */
import { v7 as uuidv7 } from 'uuid';
import type { WorkspaceScope } from '../../db/scope.js';
import { holdCredits, releaseHold } from '../../db/credits.js';
import { isSuppressed, suppressionKey } from '../../db/privacy.js';
import { planEnrichment } from '../../domain/enrichmentPlan.js';
import { loadEnrichmentConfig } from '../../infra/enrichmentConfigFile.js';
import type { EnrichmentWorkflowInput } from '../../workflows/contract/enrichment.js';
import type { AppDeps } from '../deps.js';
import { unprocessable } from '../errors.js';
import { startJob, type JobAcceptedBody } from '../jobs.js';
import type { AuthContext } from '../middleware/auth.js';
import { assertWebhookConfiguration } from '../outboundUrls.js';
import type { UnifiedDataBody } from '../schemas/enrichment.js';

export async function startEnrichment(scope: WorkspaceScope, deps: AppDeps, auth: AuthContext, body: UnifiedDataBody): Promise<JobAcceptedBody> {
  const plan = planEnrichment(body, loadEnrichmentConfig(deps.config.rootDir, deps.config.env));
  await assertWebhookConfiguration(body.webhookConfiguration, deps.config.outboundAllowList);
  // A person on the suppression list is refused before any hold or provider call: it costs nothing.
  if (await isSuppressed(scope.db, scope.workspaceId, { profileUrl: plan.lookup.pronet }, suppressionKey(deps.config.serverSecret)))
    throw unprocessable('person_suppressed', 'The person named by pronet is on the workspace suppression list (docs/PRIVACY.md); nothing was charged');
  const jobId = uuidv7();
  await holdCredits(scope.db, { workspaceId: scope.workspaceId, jobId, amount: plan.maxCredits, reason: 'enrichment hold (maximum price)', billable: auth.billable });
  const args: EnrichmentWorkflowInput = { plan, billable: auth.billable };
  try {
    return await startJob(deps, {
      workspaceId: scope.workspaceId,
      job: 'enrichment',
      jobId,
      args,
      webhook: body.webhookConfiguration ?? null,
      message: `Enrichment of ${Object.keys(plan.slices).join(', ')} accepted; poll jobStatusEndpoint for the result`,
    });
  } catch (e) {
    // No job runs: nothing will settle the hold.
    await releaseHold(scope.db, scope.workspaceId, jobId);
    throw e;
  }
}
