/**
 * Company resolution of the contact ingest (db/contactIngest.ts) and of a contact's edit
 * (db/contactWrite.ts): a company is found by its normalised website domain, else by its name,
 * and upserted set-based under the workspace's company lock.
 */
import { sql, type Selectable } from 'kysely';
import { uuidv7Source } from '../domain/ids.js';
import { inTransaction, type Pool, type PoolClient, type Queryable } from './pool.js';
import { assertWorkspaceScope } from './tenancy.js';
import type { ContactIngestDB } from './contacts.js';
import { anyText, runQuery, typedQueries } from './sqlFragments.js';
import { timed, type PhaseTimes } from './phaseTimes.js';
import type { ContactGroup } from '../domain/contactGroups.js';
import { COMPANY_INPUT_COLUMNS, COMPANY_INPUT_FIELDS, companyKey, type CompanyInput } from '../domain/contactMapping.js';

const q = typedQueries<ContactIngestDB>();

type CompanyColumns = Selectable<ContactIngestDB['companies']>;

/** A company of the batch, found or new: its id and identity key (columns of `companies`) and its lower-case name. */
interface CompanyRow extends Pick<CompanyColumns, 'id' | 'company_key'> {
  lname: string | null;
  /** Stored values of an existing company, to skip writes that change nothing. */
  stored?: Pick<CompanyColumns, (typeof COMPANY_COLUMNS)[number]>;
}

const COMPANY_COLUMNS = ['company_key', 'company_domain', ...Object.values(COMPANY_INPUT_COLUMNS)] as const;

/** The groups that name a company, with its identity. */
function companiesOf(groups: ContactGroup[]): { g: ContactGroup; id: CompanyIdentity }[] {
  const withCompany: { g: ContactGroup; id: CompanyIdentity }[] = [];
  const identities = new CompanyIdentities();
  for (const g of groups) {
    const id = g.company && identities.of(g.company);
    if (id) withCompany.push({ g, id });
  }
  return withCompany;
}

/**
 * Resolves each group's company (by domain key, else name) and upserts the companies. Upserts of
 * one workspace are serialised (a lookup must see the companies a concurrent upsert creates).
 */
async function upsertCompanies(client: PoolClient, workspaceId: string, groups: ContactGroup[]): Promise<void> {
  const withCompany = companiesOf(groups);
  if (!withCompany.length) return;
  // raw SQL: an advisory lock, a function call on no table.
  await client.query(`select pg_advisory_xact_lock(hashtextextended('company-upsert:' || $1, 0))`, [workspaceId]);
  const writes = await resolveCompanies(client, workspaceId, withCompany);
  if (writes) await writeCompanies(client, workspaceId, writes);
}

/**
 * The companies of a batch without the lock, when none needs a write: most batches of an import
 * repeat companies an earlier batch stored as they are, and then the ids read are those a locked
 * read would give (a company found by its key stays that company), so they neither wait for
 * another batch's upsert nor make it wait. Otherwise the locked upsert is done.
 *
 * Resolves once the connection they use is held, with the work under way (`done`): the work
 * needs no other connection, so a batch whose transaction waits for it never waits on the pool
 * (its company work holds a connection already and only needs PostgreSQL).
 */
export async function startCompanies(pool: Pool, workspaceId: string, groups: ContactGroup[], phases?: PhaseTimes): Promise<{ done: Promise<void> }> {
  const withCompany = companiesOf(groups);
  if (!withCompany.length) return { done: Promise.resolve() };
  const client = await pool.connect();
  const work = async () => {
    try {
      const writes = await timed(phases, 'company look-up', () => resolveCompanies(client, workspaceId, withCompany));
      if (writes) await timed(phases, 'company upsert', () => inTransaction(client, () => upsertCompanies(client, workspaceId, groups)));
    } finally {
      client.release();
    }
  };
  return { done: work() };
}

interface CompanyWrites {
  ids: string[];
  keys: string[];
  names: (string | null)[];
  websites: (string | null)[];
  domains: (string | null)[];
  industries: (string | null)[];
  headcounts: (string | null)[];
  pronets: (string | null)[];
}

/** Gives each group its company id (found or new); returns the companies to write, or null when none changes. */
async function resolveCompanies(db: Queryable, workspaceId: string, withCompany: { g: ContactGroup; id: CompanyIdentity }[]): Promise<CompanyWrites | null> {
  const keys = new Set<string>();
  const names = new Set<string>();
  for (const { id } of withCompany) {
    keys.add(id.key);
    if (id.lname) {
      names.add(id.lname);
      keys.add(id.nameKey!);
    }
  }
  const found = await runQuery(
    db,
    q
      .selectFrom('companies')
      .select((eb) => ['id', eb.fn<string | null>('lower', ['company_name']).as('lname'), ...COMPANY_COLUMNS])
      .where((eb) => eb.or([eb('company_key', '=', anyText([...keys])), eb(eb.fn('lower', ['company_name']), '=', anyText([...names]))]))
      .orderBy('created_at')
      .orderBy('id'),
  );
  const newId = uuidv7Source(withCompany.length);
  const byKey = new Map<string, CompanyRow>();
  const byName = new Map<string, CompanyRow>();
  for (const f of found) {
    const r: CompanyRow = { id: f.id, company_key: f.company_key, lname: f.lname, stored: f };
    byKey.set(r.company_key, r);
    if (r.lname && !byName.has(r.lname)) byName.set(r.lname, r);
  }
  // Final state per company id: its row (whose key a later domain may still upgrade) and merged fields.
  const upserts = new Map<string, { row: CompanyRow; c: CompanyInput }>();
  for (const { g, id: { key, lname, nameKey } } of withCompany) {
    let row = byKey.get(key);
    // A company first seen by name only takes the domain when it arrives.
    if (!row && key.startsWith('d:') && nameKey) row = byKey.get(nameKey);
    if (!row && key.startsWith('n:')) row = byName.get(key.slice(2));
    if (!row) row = { id: newId(), company_key: key, lname: lname ?? null };
    if (row.company_key.startsWith('n:') && key.startsWith('d:')) {
      byKey.delete(row.company_key);
      row.company_key = key;
    }
    byKey.set(row.company_key, row);
    if (lname && !byName.has(lname)) byName.set(lname, row);
    g.companyId = row.id;
    const prev = upserts.get(row.id);
    if (!prev) upserts.set(row.id, { row, c: g.company! });
    else if (!sameFields(prev.c, g.company!)) prev.c = { ...prev.c, ...g.company };
  }
  const w: CompanyWrites = { ids: [], keys: [], names: [], websites: [], domains: [], industries: [], headcounts: [], pronets: [] };
  for (const [id, { row, c }] of upserts) {
    const key = row.company_key;
    const domain = key.startsWith('d:') ? key.slice(2) : null;
    // A company whose stored values would not change is not written (read under the lock: current).
    if (row.stored) {
      const st = row.stored;
      const same = (given: string | null | undefined, stored: string | null) => given === undefined || given === null || given === stored;
      if (st.company_key === key && same(domain, st.company_domain) && COMPANY_INPUT_FIELDS.every((f) => same(c[f], st[COMPANY_INPUT_COLUMNS[f]]))) continue;
    }
    w.ids.push(id);
    w.keys.push(key);
    w.names.push(c.companyName ?? null);
    w.websites.push(c.companyWebsite ?? null);
    w.domains.push(domain);
    w.industries.push(c.companyIndustry ?? null);
    w.headcounts.push(c.companyHeadcount ?? null);
    w.pronets.push(c.companyPronet ?? null);
  }
  return w.ids.length ? w : null;
}

/** One set-based upsert of the companies (arrays as parameters); the caller holds the company lock. */
async function writeCompanies(client: PoolClient, workspaceId: string, w: CompanyWrites): Promise<void> {
  const now = new Date();
  type Given = string | null;
  const rows = sql<{ id: string; k: string; n: Given; w: Given; d: Given; i: Given; h: Given; p: Given }>`unnest(${w.ids}::uuid[], ${w.keys}::text[], ${w.names}::text[],
    ${w.websites}::text[], ${w.domains}::text[], ${w.industries}::text[], ${w.headcounts}::text[], ${w.pronets}::text[])`.as<'t'>(sql`t(id, k, n, w, d, i, h, p)`);
  await runQuery(
    client,
    q
      .insertInto('companies')
      .columns(['id', 'company_key', 'company_name', 'company_website', 'company_domain', 'company_industry', 'company_headcount', 'company_pronet', 'created_at', 'updated_at'])
      .expression(
        q
          .selectFrom(rows)
          .select((eb) => ['t.id', 't.k', 't.n', 't.w', 't.d', 't.i', 't.h', 't.p', eb.val(now).as('created_at'), eb.val(now).as('updated_at')]),
      )
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          company_key: eb.ref('excluded.company_key'),
          company_name: eb.fn.coalesce('excluded.company_name', 'companies.company_name'),
          company_website: eb.fn.coalesce('excluded.company_website', 'companies.company_website'),
          company_domain: eb.fn.coalesce('excluded.company_domain', 'companies.company_domain'),
          company_industry: eb.fn.coalesce('excluded.company_industry', 'companies.company_industry'),
          company_headcount: eb.fn.coalesce('excluded.company_headcount', 'companies.company_headcount'),
          company_pronet: eb.fn.coalesce('excluded.company_pronet', 'companies.company_pronet'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      ),
  );
}

/** Whether `b` adds nothing to `a` (most rows of a batch repeat their company as it is). */
function sameFields(a: CompanyInput, b: CompanyInput): boolean {
  for (const k of COMPANY_INPUT_FIELDS) if (b[k] !== undefined && b[k] !== a[k]) return false;
  return true;
}

interface CompanyIdentity {
  /** companyKey(): `d:<domain>` or `n:<lower name>`. */
  key: string;
  /** Lower-cased trimmed name and its `n:` key, when the company has a name. */
  lname?: string;
  nameKey?: string;
}

/** The identity of each company input, worked out once per (website, name): most rows of a batch repeat a company. */
class CompanyIdentities {
  private readonly byWebsite = new Map<string, Map<string, CompanyIdentity | null>>();

  of(c: CompanyInput): CompanyIdentity | null {
    let byName = this.byWebsite.get(c.companyWebsite ?? '');
    if (!byName) this.byWebsite.set(c.companyWebsite ?? '', (byName = new Map()));
    let id = byName.get(c.companyName ?? '');
    if (id === undefined) {
      const key = companyKey(c);
      const lname = c.companyName?.trim().toLowerCase() || undefined;
      id = key ? { key, lname, nameKey: lname && `n:${lname}` } : null;
      byName.set(c.companyName ?? '', id);
    }
    return id;
  }
}

/**
 * The company record one contact's edit links to (PATCH): the stored one its input matches (like
 * the ingest path: by domain, else by name), never rewritten, or a new one written from the input;
 * null when the input names no company. Runs on the caller's transaction, under the company lock.
 */
export async function linkCompany(client: PoolClient, workspaceId: string, company: CompanyInput): Promise<string | null> {
  const g: ContactGroup = { first: 0, members: [], rowKeys: [], origin: null, emails: [], company };
  const withCompany = companiesOf([g]);
  if (!withCompany.length) return null;
  assertWorkspaceScope(workspaceId);
  // raw SQL: an advisory lock, a function call on no table.
  await client.query(`select pg_advisory_xact_lock(hashtextextended('company-upsert:' || $1, 0))`, [workspaceId]);
  const writes = await resolveCompanies(client, workspaceId, withCompany);
  if (writes) {
    const [stored] = await runQuery(client, q.selectFrom('companies').select('id').where('id', '=', g.companyId!));
    if (!stored) await writeCompanies(client, workspaceId, writes);
  }
  return g.companyId ?? null;
}
