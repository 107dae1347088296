/**
 * Bulk enrichment storage (issue 32, Migration20261128500000_bulk_enrichment):
 *
 * - `bulk_enrichment_jobs`: the job's settings (slices, the waterfall configuration fixed at
 *   acceptance, budget, freshness, force) and its control state. Every settlement locks this row
 *   and checks `state` and `generation`, so once a pause or cancel committed no further row is
 *   charged or written, and the rows done are exact.
 * - `bulk_enrichment_rows`: one row per contact of the job, in a fixed order (`seq`), with its
 *   status and trace. The workflow carries only the job id and counts (claim check, issue 30).
 * - `contact_enrichments`: per (contact, slice) the data found, the contact fields written from
 *   it, the provider, the time and the job: the provenance read by `GET /contacts/{id}/enrichment`
 *   and the freshness window's clock. Deleted with the contact.
 * - `workspace_enrichment_settings`: the workspace's default freshness window.
 *
 * Raw SQL over pg clients, each in the workspace's scope (`inWorkspaceTransaction`, the request's
 * or the activity's): row-level security keeps every statement to the workspace's rows and the
 * column default fills the workspace in; `assertWorkspaceScope` refuses a call from another scope.
 */
import { defineEntity, p } from '@mikro-orm/core';
import { sql, type RawBuilder } from 'kysely';
import type { EnrichmentSlice } from '../domain/enrichment.js';
import type { BulkEnrichmentSummary, BulkStop, RowLookupInput, RowSliceTrace, RowTrace } from '../domain/bulkEnrichment.js';
import { ENRICHMENT_SLICES } from '../domain/pricing.js';
import { COMPANY_JOIN, joinSql } from './contactColumns.js';
import { normalizeEmail } from '../domain/identity.js';
import { workspaceId } from './platform.js';
import { Contact } from './contacts.js';
import { assertWorkspaceScope, inWorkspaceTransaction, workspaceOwned } from './tenancy.js';
import type { Pool, Queryable } from './pool.js';
import type { WorkspaceScope } from './scope.js';
import { compileSql } from './sqlFragments.js';
import { lockForEmailWrite, logEmailWrite } from './identityLog.js';
import { settleJobCredits, type ChargeInput } from './credits.js';
import { InsufficientCreditsError } from '../domain/errors.js';

export const BULK_JOB_STATES = ['running', 'paused', 'cancelled', 'finished'] as const;
export type BulkJobState = (typeof BULK_JOB_STATES)[number];
export const BULK_ROW_STATUSES = ['pending', 'done', 'not_reached', 'cancelled'] as const;
export type BulkRowStatus = (typeof BULK_ROW_STATUSES)[number];

export const BulkEnrichmentJob = defineEntity({
  name: 'BulkEnrichmentJob',
  tableName: 'bulk_enrichment_jobs',
  filters: workspaceOwned,
  properties: {
    jobId: p.uuid().primary(),
    workspaceId: workspaceId('bulk_enrichment_jobs', { indexed: true }),
    state: p.text().$type<BulkJobState>().default('running'),
    generation: p.integer().default(0),
    slices: p.array().columnType('text[]'),
    plan: p.json<unknown>(),
    maxCredits: p.integer().nullable(),
    creditsSpent: p.integer().default(0),
    freshnessDays: p.integer(),
    force: p.boolean().default(false),
    billable: p.boolean().default(true),
    total: p.integer(),
    stoppedBy: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  checks: [{ name: 'bulk_enrichment_jobs_state_check', expression: `state in ('running','paused','cancelled','finished')` }],
});

export const BulkEnrichmentRow = defineEntity({
  name: 'BulkEnrichmentRow',
  tableName: 'bulk_enrichment_rows',
  filters: workspaceOwned,
  properties: {
    jobId: p.manyToOne(BulkEnrichmentJob).mapToPk().fieldName('job_id').deleteRule('cascade').foreignKeyName('bulk_enrichment_rows_job_id_fkey').primary(),
    seq: p.integer().primary(),
    workspaceId: workspaceId('bulk_enrichment_rows', { indexed: true }),
    contactId: p.uuid(),
    status: p.text().$type<BulkRowStatus>().default('pending'),
    credits: p.integer().default(0),
    trace: p.json<RowTrace>().nullable(),
    settledAt: p.datetime().nullable(),
  },
  checks: [{ name: 'bulk_enrichment_rows_status_check', expression: `status in ('pending','done','not_reached','cancelled')` }],
});

export const ContactEnrichment = defineEntity({
  name: 'ContactEnrichment',
  tableName: 'contact_enrichments',
  filters: workspaceOwned,
  properties: {
    contactId: p.manyToOne(Contact).mapToPk().fieldName('contact_id').deleteRule('cascade').foreignKeyName('contact_enrichments_contact_id_fkey').primary(),
    slice: p.text().primary(),
    workspaceId: workspaceId('contact_enrichments', { indexed: true }),
    provider: p.text(),
    jobId: p.uuid().nullable(),
    enrichedAt: p.datetime(),
    fields: p.array().columnType('text[]').default([]),
    data: p.json<unknown>(),
  },
});

export const WorkspaceEnrichmentSettings = defineEntity({
  name: 'WorkspaceEnrichmentSettings',
  tableName: 'workspace_enrichment_settings',
  filters: workspaceOwned,
  properties: {
    workspaceId: workspaceId('workspace_enrichment_settings').primary(),
    freshnessDays: p.integer(),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
});

// ---------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------

export async function readFreshnessDays({ db, workspaceId }: WorkspaceScope): Promise<number | null> {
  assertWorkspaceScope(workspaceId);
  // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
  const r = await db.query<{ freshness_days: number }>(`select freshness_days from workspace_enrichment_settings`);
  return r.rows[0]?.freshness_days ?? null;
}

export async function writeFreshnessDays({ db, workspaceId }: WorkspaceScope, days: number): Promise<void> {
  await inWorkspaceTransaction(db, workspaceId, (c) =>
    // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
    c.query(
      `insert into workspace_enrichment_settings (freshness_days) values ($1)
       on conflict (workspace_id) do update set freshness_days = excluded.freshness_days, updated_at = now()`,
      [days],
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Selection: which contacts a request names
// ---------------------------------------------------------------------------------------------

/** The contacts of a request, as a where-clause over `contacts c` (plus the joins it needs) or an id list. */
export type Selection = { wheres: RawBuilder<unknown>[]; joinKeys: Iterable<string> } | { contactIds: string[] };

/** A contact row as the planner needs it. */
export interface SelectedContact extends RowLookupInput {
  contactId: string;
  /** Slices whose data is younger than the freshness window. */
  fresh: string[];
}

const lookupColumns = (freshnessDays: number) => sql`c.pronet, c.full_name as "fullName", c.first_name as "firstName", c.last_name as "lastName",
  coalesce(co.company_website, co.company_domain) as "companyWebsite",
  coalesce((select array_agg(e.slice) from contact_enrichments e where e.contact_id = c.id and e.enriched_at > now() - make_interval(days => ${Math.trunc(freshnessDays)}::int)), '{}') as fresh`;

function selectionSql(sel: Selection, columns: RawBuilder<unknown>): RawBuilder<unknown> {
  if ('contactIds' in sel) {
    return sql`select ${columns} from unnest(${sel.contactIds}::uuid[]) with ordinality as ids(id, ord)
      join contacts c on c.id = ids.id and c.status = 'active'
      left join companies co on co.id = c.primary_company_id
      order by ids.ord`;
  }
  // The company join (alias `co`) is one the conditions may need too: joined once.
  return sql`select ${columns} from contacts c ${sql.raw(joinSql([...sel.joinKeys, COMPANY_JOIN]))}
    where c.status = 'active' and ${sql.join(sel.wheres.map((w) => sql`(${w})`), sql` and `)}
    order by c.id`;
}

/** Contact ids of a list that name no active contact of the workspace (first `limit`). */
export async function missingContactIds({ db, workspaceId }: WorkspaceScope, ids: string[], limit = 10): Promise<string[]> {
  assertWorkspaceScope(workspaceId);
  // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
  const r = await db.query<{ id: string }>(
    `select ids.id from unnest($1::uuid[]) with ordinality as ids(id, ord)
     where not exists (select 1 from contacts c where c.id = ids.id and c.status = 'active')
     order by ids.ord limit $2`,
    [ids, limit],
  );
  return r.rows.map((x) => x.id);
}

/** Reads the selected contacts with their lookup columns and fresh slices (the dry run). */
export async function readSelection({ db, workspaceId }: WorkspaceScope, sel: Selection, freshnessDays: number): Promise<SelectedContact[]> {
  assertWorkspaceScope(workspaceId);
  const q = compileSql(selectionSql(sel, sql`c.id as "contactId", ${lookupColumns(freshnessDays)}`));
  // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
  const r = await db.query<SelectedContact>(q.text, q.values);
  return r.rows;
}

export interface NewBulkJob {
  jobId: string;
  slices: EnrichmentSlice[];
  plan: unknown;
  maxCredits: number | null;
  freshnessDays: number;
  force: boolean;
  billable: boolean;
}

/** Records the job and its rows (one per selected contact, in selection order); returns the row count. */
export async function createBulkJob({ db, workspaceId }: WorkspaceScope, job: NewBulkJob, sel: Selection): Promise<number> {
  return inWorkspaceTransaction(db, workspaceId, async (c) => {
    // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
    await c.query(
      `insert into bulk_enrichment_jobs (job_id, slices, plan, max_credits, freshness_days, force, billable, total)
       values ($1, $2, $3, $4, $5, $6, $7, 0)`,
      [job.jobId, job.slices, JSON.stringify(job.plan), job.maxCredits, job.freshnessDays, job.force, job.billable],
    );
    const q = compileSql(
      sql`insert into bulk_enrichment_rows (job_id, seq, contact_id)
        select ${job.jobId}::uuid, (row_number() over ()) - 1, s.id from (${selectionSql(sel, sql`c.id`)}) s`,
    );
    // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
    const inserted = await c.query(q.text, q.values);
    const total = inserted.rowCount ?? 0;
    // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
    await c.query(`update bulk_enrichment_jobs set total = $2 where job_id = $1`, [job.jobId, total]);
    return total;
  });
}

/** Drops a job whose workflow could not be started. */
export async function deleteBulkJob({ db, workspaceId }: WorkspaceScope, jobId: string): Promise<void> {
  // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
  await inWorkspaceTransaction(db, workspaceId, (c) => c.query(`delete from bulk_enrichment_jobs where job_id = $1`, [jobId]));
}

// ---------------------------------------------------------------------------------------------
// The worker's side
// ---------------------------------------------------------------------------------------------

export interface BulkJobSettings {
  jobId: string;
  workspaceId: string;
  state: BulkJobState;
  generation: number;
  slices: EnrichmentSlice[];
  plan: unknown;
  maxCredits: number | null;
  creditsSpent: number;
  freshnessDays: number;
  force: boolean;
  billable: boolean;
  total: number;
}

const JOB_COLUMNS = `job_id as "jobId", workspace_id as "workspaceId", state, generation, slices, plan, max_credits as "maxCredits",
  credits_spent as "creditsSpent", freshness_days as "freshnessDays", force, billable, total`;

export async function readBulkJob(db: Queryable, workspaceId: string, jobId: string): Promise<BulkJobSettings | null> {
  assertWorkspaceScope(workspaceId);
  // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
  const r = await db.query<BulkJobSettings>(`select ${JOB_COLUMNS} from bulk_enrichment_jobs where job_id = $1`, [jobId]);
  return r.rows[0] ?? null;
}

export interface PendingRow extends SelectedContact {
  seq: number;
}

/** Pending rows `from <= seq < to` with their contact's lookup columns and fresh slices. */
export async function pendingRows(db: Queryable, job: BulkJobSettings, from: number, to: number): Promise<PendingRow[]> {
  const q = compileSql(sql`select r.seq, r.contact_id as "contactId", ${lookupColumns(job.freshnessDays)}
    from bulk_enrichment_rows r
    left join contacts c on c.id = r.contact_id and c.status = 'active'
    left join companies co on co.id = c.primary_company_id
    where r.job_id = ${job.jobId}::uuid and r.seq >= ${from} and r.seq < ${to} and r.status = 'pending'
    order by r.seq`);
  // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
  const r = await db.query<PendingRow>(q.text, q.values);
  return r.rows;
}

/** What a settled row writes: its trace, its charges, the contact fields and the slices' data. */
export interface RowSettlement {
  seq: number;
  contactId: string;
  trace: RowTrace;
  charges: (ChargeInput & { slice: EnrichmentSlice })[];
  found: { slice: EnrichmentSlice; provider: string; data: unknown }[];
}

export type SettleOutcome =
  | { settled: number; stoppedBy: null | 'max_credits' | 'insufficient_credits'; credits: number }
  | { settled: 0; stoppedBy: 'paused' | 'cancelled' | 'superseded'; credits: 0 };

/** Contact columns written from `basic_contact_data` (provider field → column). */
const CONTACT_COLUMNS: Record<string, string> = { fullName: 'full_name', firstName: 'first_name', lastName: 'last_name', title: 'title' };

function contactWrites(found: RowSettlement['found']): { columns: Record<string, string>; emails: string[]; fields: Map<EnrichmentSlice, string[]> } {
  const columns: Record<string, string> = {};
  const emails: string[] = [];
  const fields = new Map<EnrichmentSlice, string[]>();
  for (const f of found) {
    const written: string[] = [];
    if (f.slice === 'basic_contact_data') {
      const contact = (f.data as { contact: Record<string, unknown> }).contact;
      for (const [k, col] of Object.entries(CONTACT_COLUMNS)) {
        const v = contact[k];
        if (typeof v === 'string' && v.trim()) {
          columns[col] = v.trim();
          written.push(k);
        }
      }
    } else if (f.slice === 'emails') {
      for (const e of (f.data as { emails: { email: string }[] }).emails) {
        const n = normalizeEmail(e.email);
        if (n && !emails.includes(n)) emails.push(n);
      }
      if (emails.length) written.push('emails');
    }
    fields.set(f.slice, written);
  }
  return { columns, emails, fields };
}

/**
 * Settles rows of one chunk, in `seq` order, in one transaction under the job row's lock: skips
 * rows already settled (an earlier attempt of the activity), stops when the job is no longer
 * running under `generation` (paused, cancelled, or a newer run), stops at the first row whose
 * charges would take the job past `maxCredits` or the balance below zero (that row and every
 * pending one after it become `not_reached`), writes the found data onto the contacts with its
 * provenance, marks the rows done with their trace, and debits every charge under its own key
 * (`bulk-enrich:<job>:<contact>:<slice>`) last, so the credit account's lock is held only for
 * the commit.
 */
export async function settleRows(pool: Pool, job: BulkJobSettings, generation: number, rows: RowSettlement[]): Promise<SettleOutcome> {
  let limit = rows.length;
  let insufficient = false;
  for (;;) {
    const outcome: SettleOutcome | { redoBefore: number } = await inWorkspaceTransaction(pool, job.workspaceId, async (c): Promise<SettleOutcome> => {
      // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
      const locked = (await c.query<{ state: BulkJobState; generation: number; credits_spent: number; max_credits: number | null }>(
        `select state, generation, credits_spent, max_credits from bulk_enrichment_jobs where job_id = $1 for update`,
        [job.jobId],
      )).rows[0];
      if (!locked) return { settled: 0, stoppedBy: 'cancelled', credits: 0 };
      if (locked.state !== 'running') return { settled: 0, stoppedBy: locked.state === 'paused' ? 'paused' : 'cancelled', credits: 0 };
      if (locked.generation !== generation) return { settled: 0, stoppedBy: 'superseded', credits: 0 };
      const pending = new Set(
        // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
        (await c.query<{ seq: number }>(`select seq from bulk_enrichment_rows where job_id = $1 and seq = any($2::int[]) and status = 'pending'`, [job.jobId, rows.map((r) => r.seq)])).rows.map(
          (r) => r.seq,
        ),
      );
      let spent = locked.credits_spent;
      let stoppedBy: 'max_credits' | 'insufficient_credits' | null = insufficient ? 'insufficient_credits' : null;
      const accepted: RowSettlement[] = [];
      let stopSeq: number | null = insufficient && limit < rows.length ? rows[limit]!.seq : null;
      for (const [i, row] of rows.entries()) {
        if (i >= limit) break;
        if (!pending.has(row.seq)) continue;
        const price = job.billable ? row.trace.credits : 0;
        if (locked.max_credits !== null && spent + price > locked.max_credits) {
          stoppedBy = 'max_credits';
          stopSeq = row.seq;
          break;
        }
        spent += price;
        accepted.push(row);
      }
      const now = new Date();
      // Contacts: the basic data's name and title columns, new emails appended (work email kept).
      const writes = accepted.map((r) => ({ r, w: contactWrites(r.found) }));
      const contactUpdates = writes.filter(({ w }) => Object.keys(w.columns).length || w.emails.length);
      const newEmails = contactUpdates.flatMap(({ w }) => w.emails);
      if (newEmails.length) await lockForEmailWrite(c, job.workspaceId);
      if (contactUpdates.length) {
        // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
        await c.query(
          `update contacts c set
             full_name = coalesce(x.full_name, c.full_name), first_name = coalesce(x.first_name, c.first_name),
             last_name = coalesce(x.last_name, c.last_name), title = coalesce(x.title, c.title),
             emails = c.emails || array(select e from unnest(coalesce(x.emails, '{}')) e where e <> all(c.emails)),
             work_email = coalesce(c.work_email, x.emails[1]),
             updated_at = now()
           from jsonb_to_recordset($1::jsonb) as x(id uuid, full_name text, first_name text, last_name text, title text, emails text[])
           where c.id = x.id`,
          [JSON.stringify(contactUpdates.map(({ r, w }) => ({ id: r.contactId, ...w.columns, emails: w.emails })))],
        );
      }
      if (newEmails.length) await logEmailWrite(c, job.workspaceId, newEmails);
      const enrichments = writes.flatMap(({ r, w }) => r.found.map((f) => ({ contact_id: r.contactId, slice: f.slice, provider: f.provider, fields: w.fields.get(f.slice) ?? [], data: f.data })));
      if (enrichments.length) {
        // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
        await c.query(
          `insert into contact_enrichments (contact_id, slice, provider, job_id, enriched_at, fields, data)
           select x.contact_id, x.slice, x.provider, $1, $2, x.fields, x.data
           from jsonb_to_recordset($3::jsonb) as x(contact_id uuid, slice text, provider text, fields text[], data jsonb)
           join contacts c on c.id = x.contact_id
           on conflict (contact_id, slice) do update set provider = excluded.provider, job_id = excluded.job_id,
             enriched_at = excluded.enriched_at, fields = excluded.fields, data = excluded.data`,
          [job.jobId, now, JSON.stringify(enrichments)],
        );
      }
      if (accepted.length) {
        // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
        await c.query(
          `update bulk_enrichment_rows r set status = 'done', credits = x.credits, trace = x.trace, settled_at = $2
           from jsonb_to_recordset($3::jsonb) as x(seq int, credits int, trace jsonb)
           where r.job_id = $1 and r.seq = x.seq`,
          [job.jobId, now, JSON.stringify(accepted.map((r) => ({ seq: r.seq, credits: job.billable ? r.trace.credits : 0, trace: r.trace })))],
        );
      }
      if (stopSeq !== null) {
        // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
        await c.query(`update bulk_enrichment_rows set status = 'not_reached' where job_id = $1 and status = 'pending' and seq >= $2`, [job.jobId, stopSeq]);
        // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
        await c.query(`update bulk_enrichment_jobs set state = 'finished', stopped_by = $2 where job_id = $1`, [job.jobId, stoppedBy]);
      }
      const credits = spent - locked.credits_spent;
      // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
      await c.query(`update bulk_enrichment_jobs set credits_spent = $2 where job_id = $1`, [job.jobId, spent]);
      const charges = accepted.flatMap((r) => r.charges);
      if (charges.length && job.billable) {
        const results = await settleJobCredits(c, { workspaceId: job.workspaceId, jobId: job.jobId, billable: job.billable, charges });
        const short = results.findIndex((x) => x instanceof InsufficientCreditsError);
        if (short !== -1) {
          // The balance ran out at this charge: settle again up to the row before it.
          const key = charges[short]!.idempotencyKey;
          throw new Redo(rows.findIndex((r) => r.charges.some((ch) => ch.idempotencyKey === key)));
        }
      }
      return { settled: accepted.length, stoppedBy: stopSeq !== null ? stoppedBy : null, credits };
    }).catch((e) => {
      if (e instanceof Redo) return { redoBefore: e.index };
      throw e;
    });
    if ('redoBefore' in outcome) {
      limit = outcome.redoBefore;
      insufficient = true;
      continue;
    }
    return outcome;
  }
}

/** Rolls the settlement transaction back (thrown inside it) so that it can run again with fewer rows. */
class Redo extends Error {
  constructor(readonly index: number) {
    super('redo');
  }
}

/**
 * Moves the job to `state` under its lock and bumps its generation, so an activity still running
 * under the old one settles nothing more. `cancelled` also marks every pending row cancelled.
 * Returns the new generation.
 */
export async function setBulkJobState(pool: Pool, workspaceId: string, jobId: string, state: 'running' | 'paused' | 'cancelled' | 'finished'): Promise<number> {
  return inWorkspaceTransaction(pool, workspaceId, async (c) => {
    // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
    const r = await c.query<{ generation: number; state: BulkJobState }>(`select generation, state from bulk_enrichment_jobs where job_id = $1 for update`, [jobId]);
    const cur = r.rows[0];
    if (!cur) return 0;
    // A job that stopped on its budget stays finished.
    if (cur.state === 'finished' || cur.state === 'cancelled') return cur.generation;
    const generation = cur.generation + 1;
    // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
    await c.query(`update bulk_enrichment_jobs set state = $2, generation = $3, stopped_by = case when $2 = 'cancelled' then 'cancelled' else stopped_by end where job_id = $1`, [
      jobId,
      state,
      generation,
    ]);
    // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
    if (state === 'cancelled') await c.query(`update bulk_enrichment_rows set status = 'cancelled' where job_id = $1 and status = 'pending'`, [jobId]);
    return generation;
  });
}

/** Counts of the job's rows by status, credits and per-slice outcomes (the job's result). */
export async function bulkJobSummary(db: Queryable, workspaceId: string, jobId: string): Promise<BulkEnrichmentSummary | null> {
  const job = await readBulkJob(db, workspaceId, jobId);
  if (!job) return null;
  // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
  const counts = await db.query<{ status: string; n: number; credits: number }>(
    `select status, count(*)::int as n, coalesce(sum(credits), 0)::int as credits from bulk_enrichment_rows where job_id = $1 group by status`,
    [jobId],
  );
  // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
  const slices = await db.query<{ slice: EnrichmentSlice; status: RowSliceTrace['status']; n: number }>(
    `select s.key as slice, s.value->>'status' as status, count(*)::int as n
     from bulk_enrichment_rows r, jsonb_each(r.trace->'slices') s
     where r.job_id = $1 and r.status = 'done' group by 1, 2`,
    [jobId],
  );
  const by = new Map(counts.rows.map((r) => [r.status, r]));
  const summary: BulkEnrichmentSummary = {
    rows: job.total,
    done: by.get('done')?.n ?? 0,
    pending: by.get('pending')?.n ?? 0,
    notReached: by.get('not_reached')?.n ?? 0,
    cancelled: by.get('cancelled')?.n ?? 0,
    creditsCharged: by.get('done')?.credits ?? 0,
    slices: {},
    // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
    stoppedBy: (await db.query<{ stopped_by: BulkStop | null }>(`select stopped_by from bulk_enrichment_jobs where job_id = $1`, [jobId])).rows[0]?.stopped_by ?? null,
    state: job.state,
  };
  for (const s of job.slices) summary.slices[s] = { found: 0, not_found: 0, failed: 0, fresh: 0, no_lookup: 0 };
  for (const r of slices.rows) if (summary.slices[r.slice]) summary.slices[r.slice]![r.status] = r.n;
  return summary;
}

export interface BulkRowView {
  seq: number;
  contactId: string;
  status: BulkRowStatus;
  credits: number;
  trace: RowTrace | null;
  settledAt: string | null;
}

/** One page of the job's rows after `afterSeq`, in row order. */
export async function bulkJobRows({ db, workspaceId }: WorkspaceScope, jobId: string, afterSeq: number, limit: number, status?: BulkRowStatus): Promise<BulkRowView[]> {
  assertWorkspaceScope(workspaceId);
  // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
  const r = await db.query<BulkRowView & { settledAt: Date | null }>(
    `select seq, contact_id as "contactId", status, credits, trace, settled_at as "settledAt" from bulk_enrichment_rows
     where job_id = $1 and seq > $2 and ($4::text is null or status = $4) order by seq limit $3`,
    [jobId, afterSeq, limit, status ?? null],
  );
  return r.rows.map((x) => ({ ...x, settledAt: x.settledAt ? new Date(x.settledAt).toISOString() : null }));
}

export interface ContactEnrichmentView {
  slice: EnrichmentSlice;
  provider: string;
  jobId: string | null;
  enrichedAt: string;
  fields: string[];
  data: unknown;
}

/** What enrichment wrote on a contact, per slice, with its provenance (slice order). */
export async function contactEnrichments({ db, workspaceId }: WorkspaceScope, contactId: string): Promise<ContactEnrichmentView[]> {
  assertWorkspaceScope(workspaceId);
  // Raw SQL: a set-based statement (arrays, jsonb_to_recordset, row locks) on the scoped client.
  const r = await db.query<Omit<ContactEnrichmentView, 'enrichedAt'> & { enrichedAt: Date }>(
    `select slice, provider, job_id as "jobId", enriched_at as "enrichedAt", fields, data from contact_enrichments where contact_id = $1`,
    [contactId],
  );
  const order = (s: string) => ENRICHMENT_SLICES.indexOf(s as EnrichmentSlice);
  return r.rows.sort((a, b) => order(a.slice) - order(b.slice)).map((x) => ({ ...x, enrichedAt: new Date(x.enrichedAt).toISOString() }));
}
