/**
 * Verified-company import (job `import-verified-companies`): copies chosen verified ds_companies
 * into the workspace's companies (matched by website domain, else name — the identity keys of
 * domain/contactMapping.ts), and optionally ingests their verified people as contacts through the
 * workspace's importFromWebhook source `verified-discovery`, attached to a segment. Every step
 * is an upsert, so a retried activity repeats nothing. Companies are free (find-verified-companies
 * charged for them); each person imported costs the find-verified-contacts price, debited once
 * per (job, person) before the person is imported.
 */
import { ApplicationFailure } from '@temporalio/activity';
import { ingestContacts } from '../db/contactIngest.js';
import { debitEach } from '../db/credits.js';
import { attachSourceToSegment } from '../db/segmentLinks.js';
import { insertOrFindSource } from '../db/sources.js';
import { findVerifiedDsCompanies, upsertCompaniesFromDataset, verifiedPeopleOf, type DsCompanyRow, type DsPersonRow, type KeyedDsCompany } from '../db/verifiedImport.js';
import { companyKey, type ContactInput } from '../domain/contactMapping.js';
import { normalizeEmail, normalizeProfileUrl } from '../domain/identity.js';
import { VERIFIED_IMPORT_PERSON_PRICE, verifiedImportDebitKey } from '../domain/pricing.js';
import type { ActivityDeps } from './deps.js';
import { DATA_FAILURE } from '../workflows/contract/failures.js';

export const VERIFIED_IMPORT_SOURCE = 'verified-discovery';

/** How the source's rows map to contact paths (documents what the import writes). */
export const VERIFIED_IMPORT_FIELD_MAPPING = [
  { sourceFieldName: 'firstName', targetFieldName: 'contact.firstName' },
  { sourceFieldName: 'lastName', targetFieldName: 'contact.lastName' },
  { sourceFieldName: 'fullName', targetFieldName: 'contact.fullName' },
  { sourceFieldName: 'title', targetFieldName: 'contact.jobTitle' },
  { sourceFieldName: 'pronet', targetFieldName: 'contact.pronet' },
  { sourceFieldName: 'email', targetFieldName: 'contact.workEmail' },
  { sourceFieldName: 'companyName', targetFieldName: 'company.companyName' },
  { sourceFieldName: 'companyWebsite', targetFieldName: 'company.companyWebsite' },
  { sourceFieldName: 'companyIndustry', targetFieldName: 'company.companyIndustry' },
  { sourceFieldName: 'companyHeadcount', targetFieldName: 'company.companyHeadcount' },
];

export interface VerifiedBatchInput {
  workspaceId: string;
  companyIds: string[];
  /** Set when people are imported too. */
  sourceId: string | null;
  contactsPerCompany: number;
  /** Keys the per-person debits (absent in jobs started before people were charged). */
  jobId?: string;
  /** True for workspace and user keys: each imported person is charged. */
  billable?: boolean;
}

export interface VerifiedBatchResult {
  imported: number;
  created: number;
  updated: number;
  notFound: string[];
  contacts: { imported: number; created: number; updated: number };
  /** Credits charged by this batch (people imported, once per (job, person)). */
  creditsCharged?: number;
  /** The balance ran out: the people after the last one paid for were not imported. */
  exhausted?: boolean;
}

/** A verified dataset person → the contact input of the ingest path (row key = profile key). */
function personToContactInput(p: DsPersonRow): ContactInput {
  const pronetKey = normalizeProfileUrl(p.member_pronet_url)!;
  const emails = (p.member_emails ?? [])
    .filter((e) => e.status !== 'invalid')
    .map((e) => normalizeEmail(e.email))
    .filter((e): e is string => !!e);
  return {
    rowKey: `p:${pronetKey}`,
    origin: VERIFIED_IMPORT_SOURCE,
    firstName: p.member_first_name ?? undefined,
    lastName: p.member_last_name ?? undefined,
    fullName: p.member_full_name ?? undefined,
    title: p.member_job_title ?? undefined,
    pronet: `https://${pronetKey}`,
    pronetKey,
    emails,
    workEmail: emails[0],
    company: {
      companyName: p.company_name ?? undefined,
      companyWebsite: p.company_website ?? undefined,
      companyIndustry: p.industry ?? undefined,
      companyHeadcount: p.size_range ?? undefined,
      companyPronet: p.company_pronet_url ? `https://${p.company_pronet_url}` : undefined,
    },
  };
}

/** The chosen companies that are verified dataset companies, in input order, and the ids that are not. */
async function chosenCompanies(deps: ActivityDeps, companyIds: string[]): Promise<{ rows: DsCompanyRow[]; notFound: string[] }> {
  const byId = new Map((await findVerifiedDsCompanies(deps.pool, companyIds)).map((r) => [r.id, r]));
  return {
    notFound: companyIds.filter((id) => !byId.has(id)),
    rows: companyIds.map((id) => byId.get(id)).filter((r): r is DsCompanyRow => !!r),
  };
}

/** Copies the companies into the workspace (matched by identity key); companies without one are skipped. */
async function importCompanies(deps: ActivityDeps, workspaceId: string, rows: DsCompanyRow[]): Promise<{ imported: number; created: number; updated: number }> {
  const keyed = rows
    .map((r) => ({ r, key: companyKey({ companyName: r.company_name ?? undefined, companyWebsite: r.company_website ?? undefined }) }))
    .filter((x): x is KeyedDsCompany => x.key !== null);
  const { created, updated } = await upsertCompaniesFromDataset(deps.pool, workspaceId, keyed);
  return { imported: created + updated, created, updated };
}

/**
 * Each person is paid for (once per job and person) before being imported; when the balance
 * runs out only the people paid for are imported. Unbilled (or pre-charging) jobs import all.
 */
async function payForPeople(
  deps: ActivityDeps,
  input: VerifiedBatchInput,
  inputs: ContactInput[],
): Promise<{ paid: ContactInput[]; creditsCharged?: number; exhausted?: boolean }> {
  if (!input.billable || !input.jobId) return { paid: inputs };
  const keyOf = (i: ContactInput) => verifiedImportDebitKey(input.jobId!, i.pronetKey!);
  const debit = await debitEach(deps.pool, {
    workspaceId: input.workspaceId,
    jobId: input.jobId,
    billable: true,
    unitPrice: VERIFIED_IMPORT_PERSON_PRICE,
    keys: inputs.map(keyOf),
    reason: 'import-verified-companies person',
  });
  const paidKeys = new Set(debit.paid);
  const paid = inputs.filter((i) => paidKeys.has(keyOf(i)));
  return { paid, creditsCharged: paid.length * VERIFIED_IMPORT_PERSON_PRICE, exhausted: debit.exhausted };
}

/** Imports the top verified people of the companies as contacts of the source, paid for first. */
async function importPeople(
  deps: ActivityDeps,
  input: VerifiedBatchInput & { sourceId: string },
  companies: DsCompanyRow[],
): Promise<Pick<VerifiedBatchResult, 'contacts' | 'creditsCharged' | 'exhausted'>> {
  const people = await verifiedPeopleOf(deps.pool, companies.map((r) => r.id), input.contactsPerCompany);
  const { paid, ...charge } = await payForPeople(deps, input, people.map(personToContactInput));
  let contacts = { imported: 0, created: 0, updated: 0 };
  if (paid.length) {
    const r = await ingestContacts(deps.pool, paid, { workspaceId: input.workspaceId, sourceId: input.sourceId, mode: 'automated' });
    contacts = { imported: r.created + r.updated, created: r.created, updated: r.updated };
  }
  return { contacts, ...charge };
}

export function createDiscoveryActivities(deps: ActivityDeps) {
  return {
    /** The workspace's `verified-discovery` importFromWebhook source, attached to the segment. */
    async prepareVerifiedImportSource(input: { workspaceId: string; segmentId: string }): Promise<{ sourceId: string }> {
      const sourceMeta = { sourceName: 'Verified discovery import', config: { fieldMapping: VERIFIED_IMPORT_FIELD_MAPPING } };
      const { row } = await insertOrFindSource(
        deps.pool,
        input.workspaceId,
        { sourceType: 'importFromWebhook', sourceIdentifier: VERIFIED_IMPORT_SOURCE, identityKey: VERIFIED_IMPORT_SOURCE, sourceMeta },
        null,
      );
      const ok = await attachSourceToSegment(deps.pool, input.segmentId, row.id);
      if (!ok) throw ApplicationFailure.nonRetryable(`Segment ${input.segmentId} was not found`, DATA_FAILURE.segmentNotFound);
      return { sourceId: row.id };
    },

    /** One batch: the chosen verified companies, then (when a source is set) their people. */
    async importVerifiedCompanyBatch(input: VerifiedBatchInput): Promise<VerifiedBatchResult> {
      const { rows, notFound } = await chosenCompanies(deps, input.companyIds);
      const companies = rows.length ? await importCompanies(deps, input.workspaceId, rows) : { imported: 0, created: 0, updated: 0 };
      const result: VerifiedBatchResult = { ...companies, notFound, contacts: { imported: 0, created: 0, updated: 0 } };
      if (input.sourceId && rows.length) Object.assign(result, await importPeople(deps, { ...input, sourceId: input.sourceId }, rows));
      return result;
    },
  };
}
