/**
 * The one write path of contacts coming from a source (single upsert, bulk upsert, source pulls,
 * verified-company import), with the identity resolution of DESIGN §4:
 *
 * - Within a workspace a row is matched to a contact by normalised `pronet` URL, else by email
 *   (never to a contact whose profile URL differs), else by (source, row key).
 * - A matched contact is updated: given values overwrite, absent ones are kept, emails and
 *   custom fields merge, `sources[]` accumulates (contact_sources). No duplicates on re-ingest.
 * - Rows of one batch that are the same person become one contact.
 * - A deleted contact is not revived by an automated pull (`mode: 'automated'`, the row is
 *   skipped) but is by an explicit single upsert (`mode: 'explicit'`).
 * - The company is upserted by normalised website domain, else by name, and linked as primary.
 *
 * Set-based: identities are looked up with indexed queries per batch (each only for the rows
 * the previous left unmatched) and resolved in memory; new contacts and new source links are
 * COPYed straight into their tables, matched contacts into a temp table from which one
 * UPDATE … FROM merges those that change; changed links are updated in one statement. A re-send
 * of unchanged rows writes neither contacts nor links. The statements on the entity tables are
 * typed Kysely queries (ContactIngestDB) run with runQuery on the batch's pg client; raw SQL is
 * left for the COPY streams, the stage table (a per-session temp table, no entity), the planner
 * settings and the advisory locks, each marked where it is sent.
 *
 * Concurrency: companies are resolved by a read without a lock, and upserted (only when one is
 * new or changes) in a short transaction of their own serialised per workspace, on a connection
 * of their own while the batch's transaction looks up its identities; the batch waits for them
 * before matching. The contacts are written optimistically, without the workspace's ingest lock,
 * so two chunks of one import use both cores; just before commit, under the lock, the batch
 * reads the identity log (below) for emails or row keys that another ingest wrote since its
 * look-ups (profile keys and new row keys are guarded by unique indexes), and if there are any
 * the transaction is rolled back and the batch redone with the lock held from the first lookup
 * (as after a unique-key or deadlock conflict). Between ingests, the outcome is that of some
 * serial order. Not covered: a PATCH of a profile URL or a soft delete committed between a
 * batch's look-up and its commit (the batch may re-set the old key or revive the contact).
 * Companies of rows then skipped (deleted contacts) exist too.
 */
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import { sql, type Selectable } from 'kysely';
import { uuidv7Source } from '../domain/ids.js';
import { packHashes, unpackHashes } from '../domain/hash53.js';
import { inTransaction, withTransaction, type Pool, type PoolClient, type Queryable } from './pool.js';
import { assertWorkspaceScope } from './tenancy.js';
import type { ContactIngestDB } from './contacts.js';
import { runQuery, typedQueries } from './sqlFragments.js';
import { BinaryCopy } from './copyBinary.js';
import { COMPANY_INPUT_COLUMNS, COMPANY_INPUT_FIELDS, companyKey, type CompanyInput, type ContactInput } from '../domain/contactMapping.js';

const q = typedQueries<ContactIngestDB>();

export type IngestMode = 'automated' | 'explicit';

export interface IngestOptions {
  workspaceId: string;
  sourceId: string;
  mode: IngestMode;
}

export type IngestAction = 'created' | 'updated' | 'skipped_deleted';

export interface IngestResult {
  /** One entry per input, in input order. */
  rows: { contactId: string; action: IngestAction }[];
  created: number;
  updated: number;
  skipped: number;
}

/** Rows of one batch that are the same person, merged; the fields are those of a ContactInput. */
interface Group extends Omit<ContactInput, 'rowKey' | 'emails'> {
  first: number;
  members: number[];
  /** Distinct; a row key belongs to one group. */
  rowKeys: string[];
  emails: string[];
  contactId?: string;
  isNew?: boolean;
  skip?: boolean;
  companyId?: string;
  mergedInto?: Group;
}

const SCALARS = ['firstName', 'lastName', 'fullName', 'title', 'pronet', 'pronetKey', 'workEmail'] as const;

function absorb(g: Group, x: Partial<Group> & { emails?: string[] }): void {
  for (const k of SCALARS) if (x[k] !== undefined) g[k] = x[k];
  // Copies only when merging: the first row of a group lends its values (they are never mutated).
  if (x.emails?.length) g.emails = g.emails.length ? [...new Set([...g.emails, ...x.emails])] : x.emails;
  if (x.customFields) g.customFields = g.customFields ? { ...g.customFields, ...x.customFields } : x.customFields;
  if (x.company) g.company = g.company ? { ...g.company, ...x.company } : x.company;
  if (x.origin) g.origin = x.origin;
}

/** Groups the rows of one batch that are the same person (same precedence as the database match). */
function groupRows(inputs: ContactInput[]): Group[] {
  const groups: Group[] = [];
  const byPronet = new Map<string, Group>();
  const byEmail = new Map<string, Group>();
  const byRowKey = new Map<string, Group>();
  const compatible = (g: Group | undefined, pk: string | undefined) => g && (!g.pronetKey || !pk || g.pronetKey === pk);
  inputs.forEach((inp, i) => {
    const pk = inp.pronetKey;
    let g = pk ? byPronet.get(pk) : undefined;
    if (!g) for (const e of inp.emails ?? []) if (compatible(byEmail.get(e), pk)) { g = byEmail.get(e); break; }
    if (!g && compatible(byRowKey.get(inp.rowKey), pk)) g = byRowKey.get(inp.rowKey);
    if (!g) {
      g = { first: i, members: [], rowKeys: [], origin: null, emails: [] };
      groups.push(g);
    }
    g.members.push(i);
    absorb(g, inp as Partial<Group>);
    const prev = byRowKey.get(inp.rowKey);
    if (prev && prev !== g) prev.rowKeys.splice(prev.rowKeys.indexOf(inp.rowKey), 1);
    if (prev !== g) g.rowKeys.push(inp.rowKey);
    byRowKey.set(inp.rowKey, g);
    if (g.pronetKey) byPronet.set(g.pronetKey, g);
    for (const e of g.emails) if (!byEmail.has(e)) byEmail.set(e, g);
  });
  return groups;
}

/** New value of each column of a matched contact (given values win, emails/companies/custom fields merge). */
const UPDATE_EXPRESSIONS: Record<string, string> = {
  first_name: 'coalesce(s.first_name, c.first_name)',
  last_name: 'coalesce(s.last_name, c.last_name)',
  full_name: 'coalesce(s.full_name, c.full_name)',
  title: 'coalesce(s.title, c.title)',
  pronet: 'coalesce(s.pronet, c.pronet)',
  pronet_key: 'coalesce(s.pronet_key, c.pronet_key)',
  emails: `case when cardinality(s.emails) = 0 or s.emails <@ c.emails then c.emails
           else array(select e from unnest(c.emails || s.emails) with ordinality t(e, o) group by e order by min(o)) end`,
  work_email: 'coalesce(s.work_email, c.work_email)',
  custom_fields: 'case when s.custom_fields is null then c.custom_fields else c.custom_fields || s.custom_fields end',
  primary_company_id: 'coalesce(s.company_id, c.primary_company_id)',
  company_ids: 'case when s.company_id is null or s.company_id = any(c.company_ids) then c.company_ids else c.company_ids || s.company_id end',
  status: `'active'`,
  deleted_at: 'null::timestamptz',
};

/**
 * The session's stage table. Created on every batch ("if not exists" costs a catalog look-up):
 * remembering it per pooled connection would be wrong after a rolled-back batch, whose rollback
 * also drops a table it created.
 */
async function ensureStage(client: PoolClient): Promise<void> {
  // raw SQL: DDL of a per-session temp table (no entity), `on commit delete rows`.
  await client.query(`create temp table if not exists contact_ingest_stage (
    contact_id uuid not null,
    first_name text, last_name text, full_name text, title text,
    pronet text, pronet_key text,
    emails text[] not null,
    work_email text,
    custom_fields jsonb,
    company_id uuid,
    origin text
  ) on commit delete rows`);
}

/**
 * Runs `fn` with planner methods off for this transaction, then on again. A batch probes a few
 * thousand keys into tables that grow faster than their statistics during an import: without the
 * nudge the planner may compare every email with every contact instead of probing the GIN index
 * once per email, or walk (merge join) or hash every contact of the workspace to update a chunk's
 * rows instead of probing the primary key once per row.
 */
async function withPlanner<T>(client: PoolClient, off: ('seqscan' | 'mergejoin' | 'hashjoin')[], fn: () => Promise<T>): Promise<T> {
  // raw SQL: `set local` of planner settings, no statement on a table.
  await client.query(off.map((m) => `set local enable_${m} = off`).join('; '));
  try {
    return await fn();
  } finally {
    await client.query(off.map((m) => `set local enable_${m} = on`).join('; '));
  }
}

/**
 * A text[] literal (`{"a","b"}`) for array parameters: node-postgres would build one by escaping
 * each element apart, which on a 10,000-key look-up is most of its garbage.
 */
const ARRAY_SPECIAL = /[\\"]/;
function textArray(xs: string[]): string {
  if (!xs.length) return '{}';
  if (!xs.some((x) => ARRAY_SPECIAL.test(x))) return `{"${xs.join('","')}"}`;
  return `{${xs.map((x) => `"${x.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}
/** `any($n::text[])` of `xs`, passed as one text[] literal (textArray). */
const anyText = (xs: string[]) => sql<string>`any(${textArray(xs)}::text[])`;

/** COPYs `data` (binary format) into `target` (`table (columns)`). */
async function copyInto(client: PoolClient, target: string, data: BinaryCopy): Promise<void> {
  if (!data.rows) return;
  // raw SQL: a COPY stream.
  await pipeline(Readable.from([data.bytes()]), client.query(copyFrom(`copy ${target} from stdin with (format binary)`)));
}

/** Raised by the optimistic pass when another ingest committed an identity the batch did not see. */
class IngestConflict extends Error {}

/** Unique violation, deadlock: a concurrent ingest wrote the same identity. */
const isConflict = (e: unknown) => e instanceof IngestConflict || ['23505', '40P01'].includes((e as { code?: string }).code ?? '');

const ingestLock = (client: PoolClient, workspaceId: string) =>
  // raw SQL: an advisory lock, a function call on no table.
  client.query(`select pg_advisory_xact_lock(hashtextextended('contact-ingest:' || $1, 0))`, [workspaceId]);

/**
 * The identity log (`contact_identity_log`): every ingest, under the workspace's ingest lock and
 * so in commit order, appends (hashes of) the emails and row keys it wrote. An optimistic ingest
 * notes the log's end before its look-ups; before it commits it reads what was appended since,
 * and any email or row key (of its source) in common means another ingest may have written a
 * contact it did not see: it is redone under the lock (as after a hash collision, harmlessly).
 * Entries are kept LOG_KEEP_MS; a batch that spent more than LOG_TRUST_MS between look-up and
 * check does not trust the log and is redone.
 */
const LOG_KEEP_MS = 15 * 60_000;
const LOG_TRUST_MS = 5 * 60_000;

interface LogPosition {
  seq: number;
  at: number;
}

/** A batch's identities as the log stores them. */
interface IdentityHashes {
  emails: Buffer;
  rowKeys: Buffer;
}

async function identityLogPosition(client: PoolClient, workspaceId: string): Promise<LogPosition> {
  const [r] = await runQuery(
    client,
    q
      .selectFrom('contact_identity_log')
      .select((eb) => eb.fn.coalesce(eb.fn.max('seq'), eb.lit(0)).as('seq')),
  );
  return { seq: r!.seq, at: Date.now() };
}

async function checkIdentityLog(client: PoolClient, since: LogPosition, workspaceId: string, sourceId: string, mine: IdentityHashes): Promise<void> {
  if (Date.now() - since.at > LOG_TRUST_MS) throw new IngestConflict('the batch took too long to trust the identity log');
  const recent = await runQuery(
    client,
    q
      .selectFrom('contact_identity_log')
      .select((eb) => [eb('source_id', 'is not distinct from', sourceId).$castTo<boolean>().as('same_source'), 'email_hashes', 'row_key_hashes'])
      .where('seq', '>', since.seq),
  );
  if (!recent.length) return;
  const emails = new Set(unpackHashes(mine.emails));
  const rowKeys = new Set(unpackHashes(mine.rowKeys));
  for (const r of recent)
    if (unpackHashes(r.email_hashes).some((h) => emails.has(h)) || (r.same_source && unpackHashes(r.row_key_hashes).some((h) => rowKeys.has(h))))
      throw new IngestConflict('a concurrent ingest wrote an identity of this batch');
}

/** Appends the identities this transaction wrote; the caller holds the ingest lock. */
async function logIdentities(client: PoolClient, workspaceId: string, sourceId: string | null, written: IdentityHashes): Promise<void> {
  await runQuery(
    client,
    q
      .with('expired', (db) =>
        db
          .deleteFrom('contact_identity_log')
          .where('logged_at', '<', sql<Date>`clock_timestamp() - ${LOG_KEEP_MS}::int * interval '1 millisecond'`),
      )
      .insertInto('contact_identity_log')
      .values({ source_id: sourceId, email_hashes: written.emails, row_key_hashes: written.rowKeys }),
  );
}

/**
 * For writers outside the ingest path that change a contact's emails (PATCH): takes the ingest
 * lock (before any row lock: ingests take it before writing contacts). Call logEmailWrite under it.
 */
export async function lockForEmailWrite(client: PoolClient, workspaceId: string): Promise<void> {
  await ingestLock(client, workspaceId);
}

/**
 * Logs emails added to or removed from a contact, so that an ingest in flight that looked them up
 * earlier is redone. The caller holds the lock (lockForEmailWrite).
 */
export async function logEmailWrite(client: PoolClient, workspaceId: string, emails: string[]): Promise<void> {
  if (emails.length) await logIdentities(client, workspaceId, null, { emails: packHashes(emails), rowKeys: packHashes([]) });
}

/**
 * Milliseconds spent per phase of the ingest path, summed over batches (and lanes). Filled only
 * when a caller passes one (the benchmarks); production code passes none.
 */
export type PhaseTimes = Record<string, number>;

/** Runs `fn`, adding its wall time to `times[name]` when `times` is given. */
export async function timed<T>(times: PhaseTimes | undefined, name: string, fn: () => Promise<T> | T): Promise<T> {
  if (!times) return fn();
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    times[name] = (times[name] ?? 0) + performance.now() - t0;
  }
}

/**
 * Ingests a batch: companies first, then the contacts optimistically, and on a conflict with a
 * concurrent ingest once more under the workspace's ingest lock (see the header).
 */
export async function ingestContacts(pool: Pool, inputs: ContactInput[], opts: IngestOptions, phases?: PhaseTimes): Promise<IngestResult> {
  if (inputs.length === 0) return { rows: [], created: 0, updated: 0, skipped: 0 };
  assertWorkspaceScope(opts.workspaceId);
  const groups = await timed(phases, 'grouping', () => groupRows(inputs));
  // The companies are resolved on a connection of their own while the transaction below looks
  // up the identities (two backends, two cores); the groups need their company ids only from
  // matching on. A failure surfaces where it is awaited.
  const companies = (await startCompanies(pool, opts.workspaceId, groups, phases)).done;
  companies.catch(() => {});
  try {
    return await withTransaction(pool, (client) => applyContacts(client, inputs.length, groups, opts, 'optimistic', phases, companies));
  } catch (e) {
    await companies;
    if (!isConflict(e)) throw e;
    if (phases) phases['redone batches'] = (phases['redone batches'] ?? 0) + 1;
  }
  // A batch redone starts again from its rows (the first pass changes its groups).
  const companyIds = groups.map((g) => g.companyId);
  const grouped = () => groupRows(inputs).map((g, i) => Object.assign(g, { companyId: companyIds[i] }));
  // Under the lock a batch can still meet a deadlock with an optimistic ingest, or a unique
  // violation from a PATCH of a profile URL (which takes no lock).
  for (let attempt = 1; ; attempt++) {
    try {
      return await withTransaction(pool, (client) => applyContacts(client, inputs.length, grouped(), opts, 'locked', phases));
    } catch (e) {
      if (attempt >= 3 || !isConflict(e)) throw e;
    }
  }
}

/**
 * Batches of one workspace write their contacts and links one at a time in this process. Two
 * COPYs into `contacts` at once contend on the same index pages (the GIN entries of a few
 * distinct titles, the right edge of the uuid-ordered b-trees): each took twice as long as
 * alone, and the two chunks of an import moved in lock step, both writing, then both looking up
 * and mapping. In turn, one batch writes while the other maps, looks up and commits.
 *
 * Only optimistic batches take turns, and a batch waiting for its turn holds no lock (it has
 * read, not written, and takes the ingest lock after its turn): so no wait for a lock, in this
 * process or another, can lead back to the turn's holder, and the turn joins no deadlock. A
 * batch redone under the ingest lock does not take a turn: the holder's writes might wait for a
 * transaction of another process that waits for that lock.
 */
const writeTurns = new Map<string, Promise<void>>();
async function inWriteTurn(workspaceId: string, phases: PhaseTimes | undefined, fn: () => Promise<void>): Promise<void> {
  const before = writeTurns.get(workspaceId);
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  writeTurns.set(workspaceId, mine);
  try {
    if (before) await timed(phases, 'waiting for the write turn', () => before);
    await fn();
  } finally {
    release();
    if (writeTurns.get(workspaceId) === mine) writeTurns.delete(workspaceId);
  }
}

/** The stored contacts a batch's identities reach, and the row keys its source already links. */
interface Hits {
  byPronet: Map<string, Hit>;
  byEmail: Map<string, Hit[]>;
  byRowKey: Map<string, Hit>;
  /** Row keys this source already links: their links are updated when they change, the others plainly inserted. */
  links: Map<string, Link>;
  /** What the identity log records of this batch. */
  identities: IdentityHashes;
}
type Hit = Pick<Selectable<ContactIngestDB['contacts']>, 'id' | 'pronet_key' | 'status'>;
/** Whether stored contact `h` may be the group's person: no two different profile keys. */
const fits = (h: Hit | undefined, g: Group) => h && (!h.pronet_key || !g.pronetKey || h.pronet_key === g.pronetKey);
/** A stored source link; `stale` when its last_seen is older than LINK_SEEN_REFRESH. */
type Link = { contactId: string; origin: string | null; stale: boolean };

/**
 * `contact_sources.last_seen` of a link a batch re-sends unchanged is refreshed only when it is
 * older than this: re-sending the same rows writes no link (a link row write per re-sent row was
 * most of a re-send's cost), and last_seen stays true to within a day.
 */
const LINK_SEEN_REFRESH = '1 day';

/**
 * One transaction of a batch, phase by phase: look up the identities, (wait for the batch's
 * `companies`, resolved alongside), match the groups to stored contacts, write the contacts, link
 * them to the source, check and extend the identity log.
 */
async function applyContacts(
  client: PoolClient,
  size: number,
  groups: Group[],
  opts: IngestOptions,
  concurrency: 'optimistic' | 'locked',
  phases?: PhaseTimes,
  companies?: Promise<void>,
): Promise<IngestResult> {
  const { workspaceId, sourceId } = opts;
  const since = await timed(phases, 'identity log', async () => {
    if (concurrency === 'locked') await ingestLock(client, workspaceId);
    // Optimistic: what other ingests commit after this point is checked against the batch before it commits.
    return concurrency === 'optimistic' ? identityLogPosition(client, workspaceId) : null;
  });
  const hits = await timed(phases, 'identity look-ups', () => lookUpIdentities(client, workspaceId, sourceId, groups, phases));
  await timed(phases, 'waiting for companies', () => companies);
  const matched = await timed(phases, 'matching', () => matchGroups(groups, hits, opts.mode));
  const live = matched.filter((g) => !g.skip);
  const writes = await timed(phases, 'COPY data', () => batchWrites(workspaceId, sourceId, live, hits.links));
  const write = async () => {
    await timed(phases, 'contact writes', () => writeContacts(client, writes));
    await timed(phases, 'source links', () => linkSources(client, sourceId, writes));
  };
  // A batch redone under the ingest lock writes without waiting for a turn (see inWriteTurn).
  await (concurrency === 'optimistic' ? inWriteTurn(workspaceId, phases, write) : write());
  await timed(phases, 'identity log', async () => {
    if (since) {
      await ingestLock(client, workspaceId);
      await checkIdentityLog(client, since, workspaceId, sourceId, hits.identities);
    }
    // Under the lock (held until commit): the identities this batch wrote, for the optimistic
    // ingests that looked theirs up before it commits.
    await logIdentities(client, workspaceId, sourceId, hits.identities);
  });
  return outcomes(size, matched);
}

/**
 * Indexed look-ups in the order of precedence, each only for the groups the previous ones left
 * unmatched: stored contacts by profile key; by email; the source's links of the row keys (all of
 * them: every link is either inserted or checked) and the contacts behind the links that matter.
 * A re-send finds every row by profile key and so probes no email and joins no link.
 *
 * All of them with sequential scans off: with a few thousand keys and statistics that lag
 * behind an import, the planner took a sequential scan of the workspace's contacts (a hashed
 * `pronet_key = any(…)` filter) over the unique index: 55 ms against 1.3 ms per 10,000 new keys
 * at 90,000 contacts, growing with the workspace.
 */
async function lookUpIdentities(client: PoolClient, workspaceId: string, sourceId: string, groups: Group[], phases?: PhaseTimes): Promise<Hits> {
  return withPlanner(client, ['seqscan'], () => lookUpIndexed(client, workspaceId, sourceId, groups, phases));
}

async function lookUpIndexed(client: PoolClient, workspaceId: string, sourceId: string, groups: Group[], phases?: PhaseTimes): Promise<Hits> {
  const pronetKeys = [...new Set(groups.map((g) => g.pronetKey).filter((x): x is string => !!x))];
  const emails = [...new Set(groups.flatMap((g) => g.emails))];
  const rowKeys = groups.flatMap((g) => g.rowKeys);
  const byPronetRes = pronetKeys.length
    ? await timed(phases, 'identity look-up: profile keys', () =>
        runQuery(client, q.selectFrom('contacts').select(['id', 'pronet_key', 'status']).where('pronet_key', '=', anyText(pronetKeys))),
      )
    : null;
  const byPronet = new Map(byPronetRes?.map((r) => [r.pronet_key!, r]) ?? []);
  let unmatched = byPronet.size ? groups.filter((g) => !g.pronetKey || !byPronet.has(g.pronetKey)) : groups;
  const probedEmails = unmatched === groups ? emails : [...new Set(unmatched.flatMap((g) => g.emails))];
  const byEmailRes = probedEmails.length
    ? await timed(phases, 'identity look-up: emails', () =>
        runQuery(
          client,
          q
            .selectFrom(sql<{ email: string }>`unnest(${textArray(probedEmails)}::text[])`.as<'e'>(sql`e(email)`))
            .innerJoin('contacts as c', (join) => join.on('c.emails', '@>', sql<string[]>`array[${sql.ref('e.email')}]`))
            .select(['e.email', 'c.id', 'c.pronet_key', 'c.status'])
            .orderBy('c.created_at')
            .orderBy('c.id'),
        ),
      )
    : null;
  const byEmail = new Map<string, Hit[]>();
  for (const r of byEmailRes ?? []) {
    const hits = byEmail.get(r.email);
    if (hits) hits.push(r);
    else byEmail.set(r.email, [r]);
  }
  const linkRes = await timed(phases, 'identity look-up: links', () =>
    runQuery(
      client,
      q
        .selectFrom('contact_sources')
        .select((eb) => ['row_key', 'contact_id', 'origin', eb('last_seen', '<', sql<Date>`now() - ${LINK_SEEN_REFRESH}::interval`).$castTo<boolean>().as('stale')])
        .where('source_id', '=', sourceId)
        .where('row_key', '=', anyText(rowKeys)),
    ),
  );
  const links = new Map(linkRes.map((r) => [r.row_key, { contactId: r.contact_id, origin: r.origin, stale: r.stale }]));
  // The contacts behind the links of groups that neither profile key nor email matched.
  if (byEmail.size) unmatched = unmatched.filter((g) => !g.emails.some((e) => byEmail.get(e)?.some((h) => fits(h, g))));
  const linkedIds = links.size ? [...new Set(unmatched.flatMap((g) => g.rowKeys.flatMap((k) => links.get(k)?.contactId ?? [])))] : [];
  const linkedRes = linkedIds.length ? await runQuery(client, q.selectFrom('contacts').select(['id', 'pronet_key', 'status']).where('id', '=', sql<string>`any(${linkedIds}::uuid[])`)) : null;
  const linked = new Map(linkedRes?.map((r) => [r.id, r]) ?? []);
  const byRowKey = new Map<string, Hit>();
  for (const [k, l] of links) {
    const hit = linked.get(l.contactId);
    if (hit) byRowKey.set(k, hit);
  }
  return { byPronet, byEmail, byRowKey, links, identities: { emails: packHashes(emails), rowKeys: packHashes(rowKeys) } };
}

/**
 * Gives each group its contact: the stored one its identities reach (groups reaching the same one
 * merge) or a new id. Returns the groups left after merging; deleted contacts are skipped by an
 * automated ingest.
 */
function matchGroups(groups: Group[], hits: Hits, mode: IngestMode): Group[] {
  const newId = uuidv7Source(groups.length);
  const byContact = new Map<string, Group>();
  for (const g of groups) {
    let hit: Hit | undefined = g.pronetKey ? hits.byPronet.get(g.pronetKey) : undefined;
    if (!hit) for (const e of g.emails) { hit = hits.byEmail.get(e)?.find((h) => fits(h, g)); if (hit) break; }
    if (!hit) for (const k of g.rowKeys) { const h = hits.byRowKey.get(k); if (fits(h, g)) { hit = h; break; } }
    if (!hit) {
      g.contactId = newId();
      g.isNew = true;
      byContact.set(g.contactId, g);
      continue;
    }
    const other = byContact.get(hit.id);
    if (other) {
      // Two groups of the batch reach the same stored contact: one update.
      absorb(other, g);
      if (g.companyId) other.companyId = g.companyId;
      other.members.push(...g.members);
      other.rowKeys.push(...g.rowKeys);
      g.mergedInto = other;
      continue;
    }
    g.contactId = hit.id;
    g.isNew = false;
    if (hit.status === 'deleted' && mode === 'automated') g.skip = true;
    byContact.set(hit.id, g);
  }
  const matched = groups.filter((g) => !g.mergedInto);
  // A pronet key may move to a contact matched by email only when no other contact holds it.
  for (const g of matched) {
    const holder = g.pronetKey && !g.isNew ? hits.byPronet.get(g.pronetKey) : undefined;
    if (holder && holder.id !== g.contactId) g.pronetKey = undefined;
  }
  return matched;
}

/**
 * What a batch writes, built before it takes its write turn (the COPY data of its contacts and
 * links, the changed links): inside the turn only the statements run, so the other lane's
 * JavaScript (mapping, grouping) never holds up a write that every batch waits for.
 */
interface BatchWrites {
  created: BinaryCopy;
  /** Whether the created contacts carry custom_fields (else the column keeps its default). */
  createdCustom: boolean;
  matched: BinaryCopy;
  freshLinks: BinaryCopy;
  changedLinks: { rowKeys: string[]; contactIds: string[]; origins: (string | null)[] };
}

/**
 * New contacts go straight into `contacts`; matched ones through the stage table, from which one
 * UPDATE merges them, writing only the contacts whose stored values change (a re-sent row costs
 * no write). Times are the database's now() (the columns' defaults): one clock, and no value to
 * parse per row. Row keys new to the source go into `contact_sources`; known ones of matched
 * contacts are updated only when the link changes (another contact, a new origin) or its
 * last_seen is stale: a re-send of the same rows writes no link.
 */
function batchWrites(workspaceId: string, sourceId: string, live: Group[], links: Map<string, Link>): BatchWrites {
  const w: BatchWrites = {
    created: new BinaryCopy(),
    // custom_fields is left to its default ('{}') when no new contact of the batch has any.
    createdCustom: live.some((g) => g.isNew && g.customFields),
    matched: new BinaryCopy(),
    freshLinks: new BinaryCopy(),
    changedLinks: { rowKeys: [], contactIds: [], origins: [] },
  };
  for (const g of live) {
    const customFields = g.customFields ? JSON.stringify(g.customFields) : null;
    const row = g.isNew ? w.created.row(w.createdCustom ? 13 : 12).uuid(g.contactId).uuid(workspaceId) : w.matched.row(11).uuid(g.contactId);
    row.text(g.firstName).text(g.lastName).text(g.fullName).text(g.title).text(g.pronet).text(g.pronetKey).textArray(g.emails).text(g.workEmail);
    if (!g.isNew) row.jsonb(customFields).uuid(g.companyId);
    else {
      if (w.createdCustom) row.jsonb(customFields ?? '{}');
      row.uuid(g.companyId).uuidArray(g.companyId ? [g.companyId] : []);
    }
    for (const k of g.rowKeys) {
      const link = links.get(k);
      if (!link) w.freshLinks.row(4).uuid(sourceId).text(k).uuid(g.contactId).text(g.origin);
      else if (!g.isNew && (link.contactId !== g.contactId || (g.origin !== null && g.origin !== link.origin) || link.stale)) {
        w.changedLinks.rowKeys.push(k);
        w.changedLinks.contactIds.push(g.contactId!);
        w.changedLinks.origins.push(g.origin);
      }
    }
  }
  return w;
}

/**
 * PostgreSQL refuses `COPY … FROM` into a table under row-level security (contacts): new contacts
 * are COPYed into a per-session temp table of the same columns, then inserted in one statement,
 * which the policy checks row by row. `on commit delete rows`; created as `ensureStage` is.
 */
async function insertNewContacts(client: PoolClient, w: BatchWrites): Promise<void> {
  if (!w.created.rows) return;
  const columns = `id, workspace_id, first_name, last_name, full_name, title, pronet, pronet_key, emails, work_email, ${w.createdCustom ? 'custom_fields, ' : ''}primary_company_id, company_ids`;
  // raw SQL: DDL of a per-session temp table (no entity) shaped like contacts.
  await client.query(`create temp table if not exists contact_ingest_new (like contacts including defaults) on commit delete rows`);
  await copyInto(client, `contact_ingest_new (${columns})`, w.created);
  // raw SQL: it reads the session's temp table, which has no entity (so no Kysely type).
  await client.query(`insert into contacts (${columns}) select ${columns} from contact_ingest_new`);
}

async function writeContacts(client: PoolClient, w: BatchWrites): Promise<void> {
  await insertNewContacts(client, w);
  if (!w.matched.rows) return;
  await ensureStage(client);
  await copyInto(client, 'contact_ingest_stage (contact_id, first_name, last_name, full_name, title, pronet, pronet_key, emails, work_email, custom_fields, company_id)', w.matched);
  const sets = Object.entries(UPDATE_EXPRESSIONS);
  // Set-based merge of the stage: one statement whose SET and WHERE come from the column map above.
  // raw SQL: it reads the session's temp stage table, which has no entity (so no Kysely type).
  await withPlanner(client, ['mergejoin', 'hashjoin'], () =>
    client.query(
      `update contacts c set ${sets.map(([col, e]) => `${col} = ${e}`).join(', ')}, updated_at = now()
       from contact_ingest_stage s where c.id = s.contact_id
         and (${sets.map(([col]) => `c.${col}`).join(', ')}) is distinct from (${sets.map(([, e]) => e).join(', ')})`,
    ),
  );
}

async function linkSources(client: PoolClient, sourceId: string, w: BatchWrites): Promise<void> {
  await copyInto(client, 'contact_sources (source_id, row_key, contact_id, origin)', w.freshLinks);
  const changed = w.changedLinks;
  // Set-based: the changed links in one statement (the arrays travel as three parameters).
  if (changed.rowKeys.length)
    await withPlanner(client, ['mergejoin', 'hashjoin'], () =>
      runQuery(
        client,
        q
          .updateTable('contact_sources as cs')
          .from(
            sql<{ row_key: string; contact_id: string; origin: string | null }>`unnest(${textArray(changed.rowKeys)}::text[], ${changed.contactIds}::uuid[], ${changed.origins}::text[])`.as<'u'>(
              sql`u(row_key, contact_id, origin)`,
            ),
          )
          .set((eb) => ({ contact_id: eb.ref('u.contact_id'), origin: eb.fn.coalesce('u.origin', 'cs.origin'), last_seen: sql<Date>`now()` }))
          .where('cs.source_id', '=', sourceId)
          .whereRef('cs.row_key', '=', 'u.row_key'),
      ),
    );
}

/** One entry per input, in input order. */
function outcomes(size: number, groups: Group[]): IngestResult {
  const result: IngestResult = { rows: new Array(size), created: 0, updated: 0, skipped: 0 };
  for (const g of groups) {
    const action: IngestAction = g.skip ? 'skipped_deleted' : g.isNew ? 'created' : 'updated';
    if (action === 'created') result.created++;
    else if (action === 'updated') result.updated++;
    else result.skipped++;
    for (const i of g.members) result.rows[i] = { contactId: g.contactId!, action };
  }
  return result;
}

type CompanyColumns = Selectable<ContactIngestDB['companies']>;

/** A company of the batch, found or new: its id and identity key (columns of `companies`) and its lower-case name. */
interface CompanyRow extends Pick<CompanyColumns, 'id' | 'company_key'> {
  lname: string | null;
  /** Stored values of an existing company, to skip writes that change nothing. */
  stored?: Pick<CompanyColumns, (typeof COMPANY_COLUMNS)[number]>;
}

const COMPANY_COLUMNS = ['company_key', 'company_domain', ...Object.values(COMPANY_INPUT_COLUMNS)] as const;

/** The groups that name a company, with its identity. */
function companiesOf(groups: Group[]): { g: Group; id: CompanyIdentity }[] {
  const withCompany: { g: Group; id: CompanyIdentity }[] = [];
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
async function upsertCompanies(client: PoolClient, workspaceId: string, groups: Group[]): Promise<void> {
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
async function startCompanies(pool: Pool, workspaceId: string, groups: Group[], phases?: PhaseTimes): Promise<{ done: Promise<void> }> {
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
async function resolveCompanies(db: Queryable, workspaceId: string, withCompany: { g: Group; id: CompanyIdentity }[]): Promise<CompanyWrites | null> {
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
  const g: Group = { first: 0, members: [], rowKeys: [], origin: null, emails: [], company };
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
