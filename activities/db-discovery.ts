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
import { v7 as uuidv7 } from 'uuid';
import { ingestContacts } from '../db/contactIngest.js';
import { debitEach } from '../db/credits.js';
import { attachSourceToSegment } from '../db/segmentLinks.js';
import { companyKey, type ContactInput } from '../domain/contactMapping.js';
import { SENIORITY_RANK_SQL } from '../domain/discoveryCatalog.js';
import { normalizeEmail, normalizeProfileUrl } from '../domain/identity.js';
import { VERIFIED_IMPORT_PERSON_PRICE, verifiedImportDebitKey } from '../domain/pricing.js';
import type { ActivityDeps } from './deps.js';

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

interface DsCompanyRow {
  id: string;
  company_name: string | null;
  company_website: string | null;
  company_domain: string | null;
  industry: string | null;
  size_range: string | null;
  company_pronet_url: string | null;
}

export function createDiscoveryActivities(deps: ActivityDeps) {
  return {
    /** The workspace's `verified-discovery` importFromWebhook source, attached to the segment. */
    async prepareVerifiedImportSource(input: { workspaceId: string; segmentId: string }): Promise<{ sourceId: string }> {
      const meta = { sourceName: 'Verified discovery import', config: { fieldMapping: VERIFIED_IMPORT_FIELD_MAPPING } };
      const r = await deps.pool.query<{ id: string }>(
        `insert into sources (id, workspace_id, source_type, source_identifier, normalised_identifier, source_meta)
         values ($1, $2, 'importFromWebhook', $3, $3, $4)
         on conflict (workspace_id, source_type, normalised_identifier) do update set updated_at = sources.updated_at
         returning id`,
        [uuidv7(), input.workspaceId, VERIFIED_IMPORT_SOURCE, meta],
      );
      const sourceId = r.rows[0]!.id;
      const ok = await attachSourceToSegment(deps.pool, input.workspaceId, input.segmentId, sourceId);
      if (!ok) throw ApplicationFailure.nonRetryable(`Segment ${input.segmentId} was not found`, 'segment_not_found');
      return { sourceId };
    },

    async importVerifiedCompanyBatch(input: VerifiedBatchInput): Promise<VerifiedBatchResult> {
      const found = await deps.pool.query<DsCompanyRow>(
        `select id, company_name, company_website, company_domain, industry, size_range, company_pronet_url
           from ds_companies where id = any($1::uuid[]) and verified`,
        [input.companyIds],
      );
      const byId = new Map(found.rows.map((r) => [r.id, r]));
      const notFound = input.companyIds.filter((id) => !byId.has(id));
      const rows = input.companyIds.map((id) => byId.get(id)).filter((r): r is DsCompanyRow => !!r);
      const result: VerifiedBatchResult = { imported: 0, created: 0, updated: 0, notFound, contacts: { imported: 0, created: 0, updated: 0 } };
      if (rows.length) {
        const keyed = rows
          .map((r) => ({ r, key: companyKey({ companyName: r.company_name ?? undefined, companyWebsite: r.company_website ?? undefined }) }))
          .filter((x): x is { r: DsCompanyRow; key: string } => x.key !== null);
        const client = await deps.pool.connect();
        try {
          await client.query('begin');
          // a company first known by name only takes the domain key now
          await client.query(
            `update companies c set company_key = t.key, updated_at = now()
               from unnest($2::text[], $3::text[]) as t(key, lname)
              where c.workspace_id = $1 and c.company_key = 'n:' || t.lname and t.key like 'd:%'
                and not exists (select 1 from companies d where d.workspace_id = $1 and d.company_key = t.key)`,
            [input.workspaceId, keyed.map((k) => k.key), keyed.map((k) => (k.r.company_name ?? '').trim().toLowerCase())],
          );
          const up = await client.query<{ created: boolean }>(
            `insert into companies (id, workspace_id, company_key, company_name, company_website, company_domain, company_industry, company_headcount, company_pronet, created_at, updated_at)
             select t.id, $1, t.k, t.n, t.w, t.d, t.i, t.h, t.p, now(), now()
               from unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]) as t(id, k, n, w, d, i, h, p)
             on conflict (workspace_id, company_key) do update set
               company_name = excluded.company_name, company_website = excluded.company_website, company_domain = excluded.company_domain,
               company_industry = excluded.company_industry, company_headcount = excluded.company_headcount, company_pronet = excluded.company_pronet,
               updated_at = now()
             returning (xmax = 0) as created`,
            [
              input.workspaceId,
              keyed.map(() => uuidv7()),
              keyed.map((k) => k.key),
              keyed.map((k) => k.r.company_name),
              keyed.map((k) => k.r.company_website),
              keyed.map((k) => (k.key.startsWith('d:') ? k.key.slice(2) : null)),
              keyed.map((k) => k.r.industry),
              keyed.map((k) => k.r.size_range),
              keyed.map((k) => (k.r.company_pronet_url ? `https://${k.r.company_pronet_url}` : null)),
            ],
          );
          await client.query('commit');
          result.imported = up.rows.length;
          result.created = up.rows.filter((r) => r.created).length;
          result.updated = result.imported - result.created;
        } catch (e) {
          await client.query('rollback').catch(() => {});
          throw e;
        } finally {
          client.release();
        }
      }
      if (input.sourceId && rows.length) {
        const people = await deps.pool.query(
          `select p.member_pronet_url, p.member_first_name, p.member_last_name, p.member_full_name, p.member_job_title, p.member_emails,
                  c.company_name, c.company_website, c.industry, c.size_range, c.company_pronet_url
             from ds_companies c
             cross join lateral (
               select * from ds_people p where p.company_id = c.id and p.verified
                order by ${SENIORITY_RANK_SQL}, p.member_years_experience desc nulls last, p.id limit $2) p
            where c.id = any($1::uuid[])`,
          [rows.map((r) => r.id), input.contactsPerCompany],
        );
        const inputs: ContactInput[] = people.rows.map((p) => {
          const pronetKey = normalizeProfileUrl(p.member_pronet_url)!;
          const emails = ((p.member_emails ?? []) as { email: string; status: string | null }[])
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
        });
        // Each person is paid for (once per job and person) before being imported; when the
        // balance runs out only the people paid for are imported.
        let paid = inputs;
        if (input.billable && input.jobId) {
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
          paid = inputs.filter((i) => paidKeys.has(keyOf(i)));
          result.creditsCharged = paid.length * VERIFIED_IMPORT_PERSON_PRICE;
          result.exhausted = debit.exhausted;
        }
        if (paid.length) {
          const r = await ingestContacts(deps.pool, paid, { workspaceId: input.workspaceId, sourceId: input.sourceId, mode: 'automated' });
          result.contacts = { imported: r.created + r.updated, created: r.created, updated: r.updated };
        }
      }
      return result;
    },
  };
}
