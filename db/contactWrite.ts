/**
 * Direct edits of one contact: partial update (PATCH: only the given properties change) and
 * soft delete. Ingestion from sources is db/contactIngest.ts.
 */
import { ConflictError, InvalidInputError, NotFoundError, type InputField } from '../domain/errors.js';
import { normalizeDomain, normalizeEmail, normalizeProfileUrl } from '../domain/identity.js';
import { COMPANY_INPUT_COLUMNS, COMPANY_INPUT_FIELDS, companyKey, customValue, derivedFullName, headcountRangeError, type CompanyInput } from '../domain/contactMapping.js';
import { customFieldPath, type ContactCatalog } from '../domain/contactCatalog.js';
import type { ContactTextKey, WritableCompanyKey } from '../domain/contactShape.js';
import { isUuid } from '../domain/ids.js';
import { linkCompany } from './companyResolution.js';
import { lockForEmailWrite, logEmailWrite } from './identityLog.js';
import { withTransaction, type Pool, type PoolClient } from './pool.js';
import { compileSql, runQuery, typedQueries } from './sqlFragments.js';
import { sql, type RawBuilder } from 'kysely';
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import { Company, Contact } from './contacts.js';

const db = typedQueries<InferKyselyDB<typeof Contact | typeof Company>>();

/** A PATCH of the Contact's written properties (domain/contactShape.ts); null clears one. */
export interface ContactPatch extends Partial<Record<ContactTextKey, string | null>> {
  emails?: string[];
  company?: Partial<Record<WritableCompanyKey, string | null>>;
  customFields?: Record<string, unknown>;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const email = (raw: string, field: InputField) => {
  const e = normalizeEmail(raw);
  if (!e || !EMAIL.test(e)) throw new InvalidInputError(field, `${raw} is not an email address`);
  return e;
};

/** A PATCH checked against the catalog: what changes, as values (the company is resolved later, in the transaction). */
interface CheckedPatch {
  /** Plain column values (names, title, pronet and its key). */
  columns: [column: string, value: unknown][];
  /** Every email of the contact, when `emails` was sent (with the work email first if sent too). */
  emails?: string[];
  /** `workEmail` as sent (normalised); null clears it. */
  work?: string | null;
  custom?: { merge: Record<string, unknown>; remove: string[] };
}

/** The 400s of a PATCH, before anything is written: a 400 changes nothing. */
function checkPatch(patch: ContactPatch, catalog: ContactCatalog): CheckedPatch {
  const out: CheckedPatch = { columns: [] };
  for (const [key, col] of [['firstName', 'first_name'], ['lastName', 'last_name'], ['fullName', 'full_name'], ['title', 'title']] as const) {
    if (patch[key] !== undefined) out.columns.push([col, patch[key]?.trim() || null]);
  }
  if (patch.pronet !== undefined) {
    const key = patch.pronet ? normalizeProfileUrl(patch.pronet) : null;
    if (patch.pronet && !key) throw new InvalidInputError(['pronet'], 'must be a profile URL');
    out.columns.push(['pronet', patch.pronet?.trim() || null], ['pronet_key', key]);
  }
  const emails = patch.emails?.map((e, i) => email(e, ['emails', i]));
  if (emails) out.emails = [...new Set(emails)];
  // white space only clears it, as the schema's EMAIL_OR_BLANK_PATTERN says (JavaScript's `trim` set)
  const work = patch.workEmail?.trim() === '' ? null : patch.workEmail;
  out.work = work ? email(work, ['workEmail']) : work;
  if (patch.customFields) out.custom = checkCustomFields(patch.customFields, catalog);
  if (patch.company?.companyWebsite && !normalizeDomain(patch.company.companyWebsite)) throw new InvalidInputError(['company', 'companyWebsite'], 'must be a website URL or domain');
  const headcountError = patch.company?.companyHeadcount ? headcountRangeError(patch.company.companyHeadcount.trim()) : null;
  if (headcountError) throw new InvalidInputError(['company', 'companyHeadcount'], headcountError);
  return out;
}

/** Custom field values checked by their definition; null removes a value. */
function checkCustomFields(fields: Record<string, unknown>, catalog: ContactCatalog): { merge: Record<string, unknown>; remove: string[] } {
  const custom = { merge: {} as Record<string, unknown>, remove: [] as string[] };
  for (const [fid, v] of Object.entries(fields)) {
    const at: InputField = ['customFields', fid];
    const field = catalog.get(customFieldPath(fid));
    if (!field || field.write?.kind !== 'custom') throw new InvalidInputError(at, `unknown custom field ${fid}; see GET /schema/contact`);
    if (v === null) {
      custom.remove.push(fid);
      continue;
    }
    const checked = customValue(field.write, v);
    if (typeof checked === 'object' && checked !== null && 'error' in checked) throw new InvalidInputError(at, String((checked as { error: unknown }).error));
    custom.merge[fid] = checked;
  }
  return custom;
}

/**
 * The contact's company after the patch: the company record its merged fields match (same
 * matching as ingestion), or a new record. A company record is shared by every contact of that
 * company, so a PATCH of one contact links it and never edits the record: a field the patch gives
 * that the matched record holds otherwise is a 409 naming it, and nothing is written.
 */
async function patchedCompany(client: PoolClient, workspaceId: string, currentId: string | null, patch: NonNullable<ContactPatch['company']>): Promise<string | null> {
  const [prev] = currentId ? await runQuery(client, db.selectFrom('companies').select(['company_key', ...STORED_COMPANY_COLUMNS]).where('id', '=', currentId)) : [];
  const merged: CompanyInput = {};
  for (const f of COMPANY_INPUT_FIELDS) merged[f] = prev?.[COMPANY_INPUT_COLUMNS[f]] ?? undefined;
  for (const [k, v] of Object.entries(patch) as [keyof CompanyInput, string | null | undefined][]) if (v !== undefined) merged[k] = v?.trim() || undefined;
  // Another company (its website or name changed): the previous one's other fields are not carried over.
  if (prev && companyKey(merged) !== prev.company_key) for (const f of ['companyIndustry', 'companyHeadcount', 'companyPronet'] as const) if (patch[f] === undefined) delete merged[f];
  const companyId = await linkCompany(client, workspaceId, merged);
  if (!companyId) {
    const given = Object.entries(patch).find(([, v]) => v?.trim());
    if (given) throw new InvalidInputError(['company', given[0]], 'needs companyName or companyWebsite: a company is identified by them');
    return null;
  }
  const [stored] = await runQuery(client, db.selectFrom('companies').select(STORED_COMPANY_COLUMNS).where('id', '=', companyId));
  for (const [k, v] of Object.entries(patch) as [keyof CompanyInput, string | null | undefined][]) {
    if (v === undefined) continue;
    const given = v?.trim() || null;
    const held = stored![COMPANY_INPUT_COLUMNS[k]];
    const same = given === held || (k === 'companyWebsite' && !!given && !!held && normalizeDomain(given) === normalizeDomain(held));
    if (!same) {
      throw new ConflictError(
        `company.${k}: the company record ${stored!.company_name ?? stored!.company_website} is shared by the workspace's contacts and has ${k} ` +
          `${held === null ? 'unset' : JSON.stringify(held)}; a PATCH of a contact links it to a company record and never edits one. ` +
          'Send the values of that company, or another company (companyName and companyWebsite)',
        'company_conflict',
      );
    }
  }
  return companyId;
}

const STORED_COMPANY_COLUMNS = Object.values(COMPANY_INPUT_COLUMNS);

/**
 * The `set` list of the contact's update, as SQL fragments (values bound, compiled in
 * db/sqlFragments.ts). Raw SQL: the statement shares its transaction with the workspace's ingest
 * lock and the company resolution of db/contactIngest.ts (pg client), and its array/jsonb merges
 * are computed by PostgreSQL.
 */
function contactUpdate(c: CheckedPatch, company: { id: string | null } | null): RawBuilder<unknown>[] {
  const sets: RawBuilder<unknown>[] = [];
  const set = (col: string, v: unknown, cast = '') => sets.push(sql`${sql.ref(col)} = ${v}${sql.raw(cast)}`);
  for (const [col, v] of c.columns) set(col, v);
  if (c.emails !== undefined) {
    const list = c.work ? [...new Set([c.work, ...c.emails])] : c.emails;
    set('emails', list, '::text[]');
    set('work_email', c.work !== undefined ? c.work : (list[0] ?? null));
  } else if (c.work !== undefined) {
    set('work_email', c.work);
    if (c.work) sets.push(sql`emails = case when ${c.work}::text = any(emails) then emails else array_prepend(${c.work}::text, emails) end`);
  }
  if (c.custom) sets.push(sql`custom_fields = (custom_fields || ${JSON.stringify(c.custom.merge)}::jsonb) - ${c.custom.remove}::text[]`);
  if (company) {
    sets.push(sql`primary_company_id = ${company.id}::uuid`);
    sets.push(sql`company_ids = case when ${company.id}::uuid is null or ${company.id}::uuid = any(company_ids) then company_ids else company_ids || ${company.id}::uuid end`);
  }
  return sets;
}

/** PATCH of one contact: checks (400s), then in one transaction the row lock, the company, the email log and the update. */
export async function patchContact(pool: Pool, workspaceId: string, id: string, patch: ContactPatch, catalog: ContactCatalog): Promise<void> {
  if (!isUuid(id)) throw new NotFoundError('Contact', id);
  const checked = checkPatch(patch, catalog);
  const emailsChange = checked.emails !== undefined || !!checked.work;
  await withTransaction(pool, async (client) => {
    // An ingest in flight that looked up an email this write adds or removes is redone (db/contactIngest.ts).
    if (emailsChange) await lockForEmailWrite(client, workspaceId);
    const [cur] = await runQuery(
      client,
      db.selectFrom('contacts').select(['primary_company_id', 'emails', 'first_name', 'last_name']).where('id', '=', id).where('status', '=', 'active').forUpdate(),
    );
    if (!cur) throw new NotFoundError('Contact', id);
    const company = patch.company ? { id: await patchedCompany(client, workspaceId, cur.primary_company_id, patch.company) } : null;
    // A name changed alone re-derives the full name from the names after the patch (a fullName sent with it wins).
    if ((patch.firstName !== undefined || patch.lastName !== undefined) && patch.fullName === undefined) {
      const name = (key: 'firstName' | 'lastName', stored: string | null) => (patch[key] !== undefined ? patch[key]?.trim() || null : stored);
      checked.columns.push(['full_name', derivedFullName(name('firstName', cur.first_name), name('lastName', cur.last_name))]);
    }
    const sets = contactUpdate(checked, company);
    if (!sets.length) return;
    if (emailsChange) await logEmailWrite(client, workspaceId, [...new Set([...cur.emails, ...(checked.emails ?? []), ...(checked.work ? [checked.work] : [])])]);
    try {
      // raw SQL: the dynamic SET of contactUpdate (array/jsonb merges computed by PostgreSQL, see there).
      await client.query(compileSql(sql`update contacts set ${sql.join(sets)}, updated_at = now() where id = ${id}`));
    } catch (e) {
      if ((e as { code?: string }).code === '23505') throw new ConflictError('Another contact of the workspace has this pronet profile URL');
      throw e;
    }
  });
}

/** Soft delete; 404 when the contact is unknown, foreign or already deleted. */
export async function deleteContact(pool: Pool, id: string): Promise<void> {
  if (!isUuid(id)) throw new NotFoundError('Contact', id);
  const deleted = await runQuery(
    pool,
    db
      .updateTable('contacts')
      .set({ status: 'deleted', deleted_at: sql`now()`, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('status', '=', 'active')
      .returning('id'),
  );
  if (!deleted.length) throw new NotFoundError('Contact', id);
}
