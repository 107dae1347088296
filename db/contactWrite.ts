/**
 * Direct edits of one contact: partial update (PATCH: only the given properties change) and
 * soft delete. Ingestion from sources is db/contactIngest.ts.
 */
import { conflict, invalidField, notFound } from '../domain/errors.js';
import { normalizeDomain, normalizeEmail, normalizeProfileUrl } from '../domain/identity.js';
import { COMPANY_INPUT_COLUMNS, customValue, headcountRangeError, type CompanyInput } from '../domain/contactMapping.js';
import { customFieldPath, type ContactCatalog } from '../domain/contactCatalog.js';
import { isUuid } from '../domain/ids.js';
import { lockForEmailWrite, logEmailWrite, resolveCompany } from './contactIngest.js';
import { withTransaction, type Pool } from './pool.js';

export interface ContactPatch {
  firstName?: string | null;
  lastName?: string | null;
  fullName?: string | null;
  title?: string | null;
  pronet?: string | null;
  workEmail?: string | null;
  emails?: string[];
  company?: Partial<Record<'companyName' | 'companyWebsite' | 'companyIndustry' | 'companyHeadcount' | 'companyPronet', string | null>>;
  customFields?: Record<string, unknown>;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const email = (raw: string, ptr: string) => {
  const e = normalizeEmail(raw);
  if (!e || !EMAIL.test(e)) throw invalidField(ptr, `${raw} is not an email address`);
  return e;
};

export async function patchContact(pool: Pool, workspaceId: string, id: string, patch: ContactPatch, catalog: ContactCatalog): Promise<void> {
  if (!isUuid(id)) throw notFound('Contact', id);
  // Checks first: a 400 changes nothing.
  const sets: string[] = [];
  const params: unknown[] = [id, workspaceId];
  const set = (col: string, v: unknown, cast = '') => {
    params.push(v);
    sets.push(`${col} = $${params.length}${cast}`);
  };
  for (const [key, col] of [['firstName', 'first_name'], ['lastName', 'last_name'], ['fullName', 'full_name'], ['title', 'title']] as const) {
    if (patch[key] !== undefined) set(col, patch[key]?.trim() || null);
  }
  if (patch.pronet !== undefined) {
    const key = patch.pronet ? normalizeProfileUrl(patch.pronet) : null;
    if (patch.pronet && !key) throw invalidField('/pronet', 'must be a profile URL');
    set('pronet', patch.pronet?.trim() || null);
    set('pronet_key', key);
  }
  let emails = patch.emails?.map((e, i) => email(e, `/emails/${i}`));
  if (emails) emails = [...new Set(emails)];
  const work = patch.workEmail ? email(patch.workEmail, '/workEmail') : patch.workEmail;
  if (emails !== undefined) {
    const list = work ? [...new Set([work, ...emails])] : emails;
    set('emails', list, '::text[]');
    set('work_email', work !== undefined ? work : (list[0] ?? null));
  } else if (work !== undefined) {
    set('work_email', work);
    if (work) {
      params.push(work);
      sets.push(`emails = case when $${params.length}::text = any(emails) then emails else array_prepend($${params.length}::text, emails) end`);
    }
  }
  let custom: { merge: Record<string, unknown>; remove: string[] } | null = null;
  if (patch.customFields) {
    custom = { merge: {}, remove: [] };
    for (const [fid, v] of Object.entries(patch.customFields)) {
      const ptr = `/customFields/${fid}`;
      const field = catalog.get(customFieldPath(fid));
      if (!field || field.write?.kind !== 'custom') throw invalidField(ptr, `unknown custom field ${fid}; see GET /schema/contact`);
      if (v === null) {
        custom.remove.push(fid);
        continue;
      }
      const checked = customValue(field.write, v);
      if (typeof checked === 'object' && checked !== null && 'error' in checked) throw invalidField(ptr, String((checked as { error: unknown }).error));
      custom.merge[fid] = checked;
    }
    params.push(JSON.stringify(custom.merge), custom.remove);
    sets.push(`custom_fields = (custom_fields || $${params.length - 1}::jsonb) - $${params.length}::text[]`);
  }
  if (patch.company?.companyWebsite && !normalizeDomain(patch.company.companyWebsite)) throw invalidField('/company/companyWebsite', 'must be a website URL or domain');
  const headcountError = patch.company?.companyHeadcount ? headcountRangeError(patch.company.companyHeadcount.trim()) : null;
  if (headcountError) throw invalidField('/company/companyHeadcount', headcountError);

  const emailsChange = emails !== undefined || !!work;
  await withTransaction(pool, async (client) => {
    // An ingest in flight that looked up an email this write adds or removes is redone (db/contactIngest.ts).
    if (emailsChange) await lockForEmailWrite(client, workspaceId);
    const cur = await client.query<{ primary_company_id: string | null; emails: string[] }>(
      `select primary_company_id, emails from contacts where id = $1 and workspace_id = $2 and status = 'active' for update`,
      [id, workspaceId],
    );
    if (!cur.rows[0]) throw notFound('Contact', id);
    if (patch.company) {
      // The company is re-resolved from its merged fields (same matching as ingestion) and
      // becomes the primary one; a field set to null is cleared on that company.
      const prev = cur.rows[0].primary_company_id
        ? (await client.query(`select company_name, company_website, company_industry, company_headcount, company_pronet from companies where id = $1`, [cur.rows[0].primary_company_id])).rows[0]
        : null;
      const merged = {
        companyName: prev?.company_name ?? undefined,
        companyWebsite: prev?.company_website ?? undefined,
        companyIndustry: prev?.company_industry ?? undefined,
        companyHeadcount: prev?.company_headcount ?? undefined,
        companyPronet: prev?.company_pronet ?? undefined,
      } as Record<string, string | undefined>;
      const cleared: string[] = [];
      for (const [k, v] of Object.entries(patch.company)) {
        if (v === null || v === '') {
          merged[k] = undefined;
          cleared.push(k);
        } else if (v !== undefined) merged[k] = v.trim();
      }
      const companyId = await resolveCompany(client, workspaceId, merged);
      if (companyId && cleared.length) {
        await client.query(`update companies set ${cleared.map((k) => `${COMPANY_INPUT_COLUMNS[k as keyof CompanyInput]} = null`).join(', ')}, updated_at = now() where id = $1`, [companyId]);
      }
      params.push(companyId);
      sets.push(`primary_company_id = $${params.length}::uuid`);
      sets.push(`company_ids = case when $${params.length}::uuid is null or $${params.length}::uuid = any(company_ids) then company_ids else company_ids || $${params.length}::uuid end`);
    }
    if (!sets.length) return;
    if (emailsChange) await logEmailWrite(client, workspaceId, [...new Set([...cur.rows[0].emails, ...(emails ?? []), ...(work ? [work] : [])])]);
    try {
      await client.query(`update contacts set ${sets.join(', ')}, updated_at = now() where id = $1 and workspace_id = $2`, params);
    } catch (e) {
      if ((e as { code?: string }).code === '23505') throw conflict('Another contact of the workspace has this pronet profile URL');
      throw e;
    }
  });
}

/** Soft delete; 404 when the contact is unknown, foreign or already deleted. */
export async function deleteContact(pool: Pool, workspaceId: string, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('Contact', id);
  const r = await pool.query(
    `update contacts set status = 'deleted', deleted_at = now(), updated_at = now() where id = $1 and workspace_id = $2 and status = 'active'`,
    [id, workspaceId],
  );
  if (!r.rowCount) throw notFound('Contact', id);
}
