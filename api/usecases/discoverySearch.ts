/**
 * Discovery search as use cases: a v2 search, a verified search (each paid for as the route
 * group's header says: payment decided before the search, the rows returned debited after it)
 * and the start of the verified-company import. The routes (api/routes/discovery.ts) only adapt
 * HTTP to these; every statement goes through the request's `scope`.
 */
import { v7 as uuidv7 } from 'uuid';
import type { WorkspaceScope } from '../../db/scope.js';
import { debitCredits, findCreditAccount, getBalance } from '../../db/credits.js';
import { V2_DEFAULT_LIMIT, searchV2, type SearchPage } from '../../db/discoverySearch.js';
import { searchVerified, verifiedPageRows } from '../../db/verifiedSearch.js';
import { assertSegment } from '../../db/segmentLinks.js';
import { VERIFIED_MAX_LIMIT, parseVerifiedInput, type DiscoveryEntity } from '../../domain/discoveryCatalog.js';
import { discoveryCharge, VERIFIED_IMPORT_PERSON_PRICE, type DiscoveryOperation } from '../../domain/pricing.js';
import { SESSION_PREVIEW_ROWS, previewPage } from '../../domain/sessionPreview.js';
import type { ImportVerifiedCompaniesInput } from '../../workflows/contract/discovery.js';
import type { AppDeps } from '../deps.js';
import { insufficientCredits, notFound } from '../errors.js';
import { startJob, type JobAcceptedBody } from '../jobs.js';
import type { AuthContext } from '../middleware/auth.js';
import { assertWebhookConfiguration } from '../outboundUrls.js';
import type { ImportVerifiedCompaniesBody, V2SearchBody, VerifiedBody } from '../schemas/discovery.js';

/**
 * Decides payment before searching: a billable key whose balance cannot cover the most the page
 * can cost (price × rows it may hold) is a 402 whatever the query matches, so a refusal tells
 * nothing about the dataset. Rows actually returned are what `charge` then debits.
 */
async function assertCanPay(scope: WorkspaceScope, auth: AuthContext, op: DiscoveryOperation, maxRows: number): Promise<void> {
  const most = discoveryCharge(op, maxRows);
  if (most === 0 || !auth.billable) return;
  const balance = (await findCreditAccount(scope.db, scope.workspaceId))?.balance ?? 0;
  if (balance < most) throw insufficientCredits(most, balance);
}

async function charge(scope: WorkspaceScope, auth: AuthContext, op: DiscoveryOperation, page: SearchPage): Promise<void> {
  const amount = discoveryCharge(op, page.data.length);
  if (amount === 0 || !auth.billable) return;
  await debitCredits(scope.db, {
    workspaceId: scope.workspaceId,
    amount,
    idempotencyKey: `${op}:${uuidv7()}`,
    reason: op,
    metadata: { rows: page.data.length, totalRecords: page.meta.totalRecords },
    billable: auth.billable,
  });
}

/** A session key (unbilled preview) searches at most SESSION_PREVIEW_ROWS rows (domain/sessionPreview.ts). */
const previewLimit = (auth: AuthContext, limit: number) => (auth.keyKind === 'session' ? Math.min(limit, SESSION_PREVIEW_ROWS) : limit);
const asSeenBy = <P extends SearchPage>(auth: AuthContext, page: P): P => (auth.keyKind === 'session' ? previewPage(page) : page);

/** One page of a v2 search of people or companies, paid for. */
export async function searchV2Page(scope: WorkspaceScope, deps: AppDeps, auth: AuthContext, entity: DiscoveryEntity, body: V2SearchBody) {
  const op: DiscoveryOperation = entity === 'company' ? 'find-companies-v2' : 'find-contacts-v2';
  const limit = previewLimit(auth, body.limit ?? V2_DEFAULT_LIMIT);
  await assertCanPay(scope, auth, op, limit);
  const page = await searchV2(scope.db, deps.config.serverSecret, entity, { ...body, limit }, deps.config.discovery);
  await charge(scope, auth, op, page);
  return asSeenBy(auth, page);
}

/** One ranked page of a verified search, paid for. */
export async function searchVerifiedPage(scope: WorkspaceScope, deps: AppDeps, auth: AuthContext, entity: DiscoveryEntity, body: VerifiedBody) {
  const op: DiscoveryOperation = entity === 'company' ? 'find-verified-companies' : 'find-verified-contacts';
  const filters = parseVerifiedInput(entity, body.inputFieldMapping);
  const pageNumber = body.page ?? 1;
  const limit = previewLimit(auth, body.limit ?? VERIFIED_MAX_LIMIT);
  await assertCanPay(scope, auth, op, verifiedPageRows(pageNumber, limit, filters.pull));
  const page = await searchVerified(scope.db, entity, { page: pageNumber, limit, fields: body.fields, filters }, deps.config.discovery);
  await charge(scope, auth, op, page);
  return asSeenBy(auth, { data: page.data, meta: page.meta });
}

/** Checks the segment, the webhook and (importing people) the balance, then starts the import job. */
export async function importVerifiedCompanies(scope: WorkspaceScope, deps: AppDeps, auth: AuthContext, body: ImportVerifiedCompaniesBody): Promise<JobAcceptedBody> {
  if (body.segmentId) {
    try {
      await assertSegment(scope.em, body.segmentId);
    } catch {
      throw notFound('Segment', body.segmentId);
    }
  }
  await assertWebhookConfiguration(body.webhookConfiguration, deps.config.outboundAllowList);
  if (body.segmentId && auth.billable) {
    const balance = await getBalance(scope.em, scope.workspaceId);
    if (balance < VERIFIED_IMPORT_PERSON_PRICE) throw insufficientCredits(VERIFIED_IMPORT_PERSON_PRICE, balance);
  }
  const args: ImportVerifiedCompaniesInput = {
    companyIds: body.companyIds,
    segmentId: body.segmentId ?? null,
    contactsPerCompany: body.contactsPerCompany ?? 10,
    billable: auth.billable,
  };
  return startJob(deps, {
    workspaceId: scope.workspaceId,
    job: 'import-verified-companies',
    args,
    webhook: body.webhookConfiguration ?? null,
    message: `Import of ${body.companyIds.length} verified companies accepted; poll jobStatusEndpoint for the result`,
  });
}
