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
import { uuidv7Pooled } from '../domain/ids.js';
import { packHashes } from '../domain/hash53.js';
import { withTransaction, type Pool, type PoolClient } from './pool.js';
import { assertWorkspaceScope } from './tenancy.js';
import type { ContactIngestDB } from './contacts.js';
import { anyText, runQuery, textArrayLiteral, typedQueries } from './sqlFragments.js';
import { BinaryCopy } from './copyBinary.js';
import type { ContactInput } from '../domain/contactMapping.js';
import { absorb, groupRows, type ContactGroup as Group } from '../domain/contactGroups.js';
import { checkIdentityLog, identityLogPosition, ingestLock, isConflict, logIdentities, type IdentityHashes } from './identityLog.js';
import { timed, type PhaseTimes } from './phaseTimes.js';
import { startCompanies } from './companyResolution.js';

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

/**
 * The contact columns a batch writes from each group, in their COPY order, with the group property
 * each is encoded from (the Contact's written properties, domain/contactShape.ts, and the profile
 * key): the one list behind the stage table, both COPYs and the row encoder.
 */
const GROUP_COLUMNS = [
  ['first_name', 'firstName'],
  ['last_name', 'lastName'],
  ['full_name', 'fullName'],
  ['title', 'title'],
  ['pronet', 'pronet'],
  ['pronet_key', 'pronetKey'],
  ['emails', 'emails'],
  ['work_email', 'workEmail'],
] as const satisfies readonly (readonly [string, keyof Group])[];
const GROUP_COLUMN_LIST = GROUP_COLUMNS.map(([column]) => column).join(', ');

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
    ${GROUP_COLUMNS.map(([column]) => (column === 'emails' ? 'emails text[] not null' : `${column} text`)).join(', ')},
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


/** COPYs `data` (binary format) into `target` (`table (columns)`). */
async function copyInto(client: PoolClient, target: string, data: BinaryCopy): Promise<void> {
  if (!data.rows) return;
  // raw SQL: a COPY stream.
  await pipeline(Readable.from([data.bytes()]), client.query(copyFrom(`copy ${target} from stdin with (format binary)`)));
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
            .selectFrom(sql<{ email: string }>`unnest(${textArrayLiteral(probedEmails)}::text[])`.as<'e'>(sql`e(email)`))
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
  const byContact = new Map<string, Group>();
  for (const g of groups) {
    let hit: Hit | undefined = g.pronetKey ? hits.byPronet.get(g.pronetKey) : undefined;
    if (!hit) for (const e of g.emails) { hit = hits.byEmail.get(e)?.find((h) => fits(h, g)); if (hit) break; }
    if (!hit) for (const k of g.rowKeys) { const h = hits.byRowKey.get(k); if (fits(h, g)) { hit = h; break; } }
    if (!hit) {
      g.contactId = uuidv7Pooled();
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
    const row = g.isNew
      ? w.created.row(GROUP_COLUMNS.length + (w.createdCustom ? 5 : 4)).uuid(g.contactId).uuid(workspaceId)
      : w.matched.row(GROUP_COLUMNS.length + 3).uuid(g.contactId);
    for (const [, key] of GROUP_COLUMNS) {
      if (key === 'emails') row.textArray(g.emails);
      else row.text(g[key]);
    }
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
  const columns = `id, workspace_id, ${GROUP_COLUMN_LIST}, ${w.createdCustom ? 'custom_fields, ' : ''}primary_company_id, company_ids`;
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
  await copyInto(client, `contact_ingest_stage (contact_id, ${GROUP_COLUMN_LIST}, custom_fields, company_id)`, w.matched);
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
            sql<{ row_key: string; contact_id: string; origin: string | null }>`unnest(${textArrayLiteral(changed.rowKeys)}::text[], ${changed.contactIds}::uuid[], ${changed.origins}::text[])`.as<'u'>(
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

