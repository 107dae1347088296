/**
 * Starts a privacy job (erasure, subject access) on the claim-check pattern: the person's
 * identifiers are sealed (keyring, `context`) into the job's request row, written by `insert`
 * through the request's `scope`, and the workflow's input is the request id only — so no
 * personal data lands in a workflow history.
 */
import { v7 as uuidv7 } from 'uuid';
import type { PersonIdentifiers } from '../../db/privacy.js';
import type { WorkspaceScope } from '../../db/scope.js';
import { keyringOf } from '../../domain/keyring.js';
import type { WebhookTarget } from '../../workflows/contract/jobs.js';
import type { AppDeps } from '../deps.js';
import { startJob } from '../jobs.js';
import { assertWebhookConfiguration } from '../outboundUrls.js';

export async function startSealedRequestJob(
  scope: WorkspaceScope,
  deps: AppDeps,
  o: {
    ids: PersonIdentifiers;
    context: string;
    insert: (scope: WorkspaceScope, jobId: string, sealed: string) => Promise<void>;
    job: 'erasure' | 'subject-access';
    webhook: WebhookTarget | null | undefined;
    message: string;
  },
) {
  await assertWebhookConfiguration(o.webhook ?? undefined, deps.config.outboundAllowList);
  const jobId = uuidv7();
  const sealed = keyringOf(deps.config).encryptText(JSON.stringify(o.ids), o.context);
  await o.insert(scope, jobId, sealed);
  return startJob(deps, { workspaceId: scope.workspaceId, job: o.job, jobId, args: { requestId: jobId }, webhook: o.webhook ?? null, message: o.message });
}
