/**
 * Sources: where contacts come from (imports, webhooks, social listening). Table `sources`,
 * unique (workspace_id, source_type, normalised_identifier) so that a repeated type + identifier
 * resolves to the existing source (Migration20261121010000_contacts).
 */
import { defineEntity, p, raw, UniqueConstraintViolationException, type InferEntity } from '@mikro-orm/core';
import { ConflictError } from '../domain/errors.js';
import { assertWorkspaceScope, workspaceOwned } from './tenancy.js';
import { LockMode, type EntityManager, type InferKyselyDB } from '@mikro-orm/postgresql';
import { workspaceId } from './platform.js';
import { isUuid } from '../domain/ids.js';
import { v7 as uuidv7 } from 'uuid';

import type { FieldMappingEntry, RefreshStatus, SourceType } from '../domain/sourceRules.js';
import type { RunFrequency } from '../domain/runFrequency.js';
import { withTransaction, type Queryable } from './pool.js';
import type { WorkspaceScope } from './scope.js';
import { attachSourceToSegment } from './segmentLinks.js';
import { sql, type Selectable, type SqlBool } from 'kysely';
import type { Condition } from '../domain/conditions.js';
import { compileWhere, sqlCatalogOf, type SqlField } from './conditionSql.js';
import { runQuery, typedQueries } from './sqlFragments.js';

// The rules and shapes of sources live in domain/ (one source of truth); re-exported for db users.
export { REFRESH_STATUSES, SOURCE_TYPES } from '../domain/sourceRules.js';
export type { FieldMappingEntry, RefreshStatus, SourceType } from '../domain/sourceRules.js';
export type { RunFrequency } from '../domain/runFrequency.js';

export interface SourceMeta {
  config?: { fieldMapping?: FieldMappingEntry[]; [k: string]: unknown };
  [k: string]: unknown;
}

export const Source = defineEntity({
  name: 'Source',
  tableName: 'sources',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('sources'),
    sourceType: p.text().$type<SourceType>(),
    /** As given by the caller; null for keyword / job-posting sources. */
    sourceIdentifier: p.text().nullable(),
    /** Normalised identity of the source within its type (URL key, keyword, …). */
    normalisedIdentifier: p.text(),
    sourceMeta: p.json<SourceMeta>().defaultRaw(`'{}'`),
    runFrequency: p.json<RunFrequency>().nullable(),
    refreshStatus: p.text().$type<Exclude<RefreshStatus, null>>().nullable(),
    /** Temporal Schedule id while a runFrequency is set. */
    scheduleId: p.text().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  uniques: [{ name: 'sources_workspace_id_source_type_normalised_identifier_key', properties: ['workspaceId', 'sourceType', 'normalisedIdentifier'] }],
  indexes: [
    { name: 'sources_ws_type_id', properties: ['workspaceId', 'sourceType', 'id'] },
    { name: 'sources_ws_id', properties: ['workspaceId', 'id'] },
  ],
  checks: [
    { name: 'sources_source_type_check', expression: `source_type in ('pronetInbound','pronetOutbound','pronetPost','pronetKeywordSearch','pronetJobPosting','importFromWebhook')` },
    { name: 'sources_refresh_status_check', expression: `refresh_status in ('queued','running','succeeded','failed')` },
  ],
});

/**
 * Display fields a pull learned about a listening source's subject (`sourceMeta.socialName`,
 * `profileImageUrl`): the name replaces only the placeholder set at creation (the handle) or an
 * empty one, never a name the client chose; the picture fills only an empty one.
 */
export async function learnSourceDisplay(db: Queryable, sourceId: string, subject: { name?: string | null; profileImageUrl?: string | null }): Promise<void> {
  if (!subject.name && !subject.profileImageUrl) return;
  const name = subject.name ?? null;
  const image = subject.profileImageUrl ?? null;
  // The merge is SQL: conditional jsonb merges decided by the stored meta, in one statement.
  await runQuery(
    db,
    sources
      .updateTable('sources')
      .set({
        source_meta: sql<SourceMeta>`source_meta
          || case when ${name}::text is not null and (coalesce(source_meta->>'socialName', '') = '' or source_meta->>'socialName' = source_meta->>'socialHandle')
                  then jsonb_build_object('socialName', ${name}::text) else '{}'::jsonb end
          || case when ${image}::text is not null and coalesce(source_meta->>'profileImageUrl', '') = ''
                  then jsonb_build_object('profileImageUrl', ${image}::text) else '{}'::jsonb end`,
      })
      .where('id', '=', sourceId),
  );
}

// --- Sources API (api/routes/sources.ts) and source pulls (activities/dbSources.ts) ---

export type SourceEntity = InferEntity<typeof Source>;

type SourcesDB = InferKyselyDB<typeof Source>;

/** A row of the Kysely statements below (snake_case columns as PostgreSQL returns them): the entity's columns. */
export type SourceRow = Selectable<SourcesDB['sources']>;

const sources = typedQueries<SourcesDB>();

/** A row of a Kysely statement as the managed entity (merged into the context's identity map). */
export function sourceOfRow(em: EntityManager, row: SourceRow): SourceEntity {
  return em.map(Source, row as never);
}

/** The source of the context's workspace (the `workspace` filter), or null (`id` must be a UUID). */
export async function findSource(em: EntityManager, id: string): Promise<SourceEntity | null> {
  return em.findOne(Source, { id });
}

/**
 * The sources of the context's workspace among `ids` (ids that are no UUID name none), locked (`for update`, in
 * id order so that concurrent callers cannot deadlock) in the caller's transaction
 * (`em.transactional`) and read again under the lock: a PATCH merges into the meta and schedule
 * the previous PATCH committed, never into a copy read before it.
 */
export async function lockSources(tx: EntityManager, ids: string[]): Promise<SourceEntity[]> {
  const uuids = ids.filter(isUuid).map((id) => id.toLowerCase());
  if (!uuids.length) return [];
  return tx.find(Source, { id: { $in: uuids } }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true, orderBy: { id: 'asc' } });
}

/** Which of `ids` (lower-case uuids) are sources of the context's workspace. */
export async function existingSourceIds(em: EntityManager, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const found = await em.find(Source, { id: { $in: ids } }, { fields: ['id'] });
  return new Set(found.map((x) => x.id));
}

/** Every source id of the context's workspace, oldest first. */
export async function allSourceIds(em: EntityManager): Promise<string[]> {
  return (await em.find(Source, {}, { fields: ['id'], orderBy: { createdAt: 'asc', id: 'asc' } })).map((x) => x.id);
}

/** The sources of the context's workspace among `ids` (UUIDs), in no particular order. */
export async function findSourcesByIds(em: EntityManager, ids: string[]): Promise<SourceEntity[]> {
  if (!ids.length) return [];
  return em.find(Source, { id: { $in: ids } });
}

export interface NewSource {
  sourceType: SourceType;
  sourceIdentifier: string | null;
  sourceMeta: Record<string, unknown>;
  identityKey: string | null;
}

/**
 * Inserts the source unless the workspace has the same one; returns the row and whether it is new.
 * Kysely, not em.upsert: the merge of an existing source's meta (`excluded || existing || sent`) and
 * the `xmax = 0` created flag are PostgreSQL expressions em.upsert cannot state.
 */
export async function insertOrFindSource(
  q: Queryable,
  workspaceId: string,
  s: NewSource,
  /** Merge into an existing source: the keys the client sent (null: keep the existing one as it is). */
  given: Record<string, unknown> | null,
): Promise<{ row: SourceRow; created: boolean }> {
  assertWorkspaceScope(workspaceId);
  const id = uuidv7();
  const key = s.identityKey ?? `id:${id}`;
  // Filled-in display defaults never override what the source already has; sent keys do.
  const [upserted] = await runQuery(
    q,
    sources
      .insertInto('sources')
      .values({
        id,
        source_type: s.sourceType,
        source_identifier: s.sourceIdentifier,
        normalised_identifier: key,
        source_meta: sql<SourceMeta>`${JSON.stringify(s.sourceMeta)}::jsonb`,
        run_frequency: null,
        refresh_status: null,
        created_at: sql`now()`,
        updated_at: sql`now()`,
      })
      .onConflict((oc) => {
        const identity = oc.columns(['workspace_id', 'source_type', 'normalised_identifier']);
        return given
          ? identity.doUpdateSet({ source_meta: sql<SourceMeta>`excluded.source_meta || sources.source_meta || ${JSON.stringify(given)}::jsonb`, updated_at: sql`now()` })
          : identity.doNothing();
      })
      .returningAll()
      .returning(sql<boolean>`xmax = 0`.as('inserted')),
  );
  if (upserted) {
    const { inserted, ...row } = upserted;
    return { row, created: inserted };
  }
  const [existing] = await runQuery(
    q,
    sources.selectFrom('sources').selectAll().where('source_type', '=', s.sourceType).where('normalised_identifier', '=', key),
  );
  return { row: existing!, created: false };
}

/**
 * Upserts the sources in one transaction (each merged with the keys in `given`, attached to
 * its `segmentId` if any); returns the rows in input order and how many were created.
 */
export async function upsertSources(
  { db, workspaceId }: WorkspaceScope,
  items: Array<{ norm: NewSource; given: Record<string, unknown>; segmentId?: string }>,
): Promise<{ rows: SourceRow[]; created: number }> {
  return withTransaction(db, async (client) => {
    const rows: SourceRow[] = [];
    let created = 0;
    for (const it of items) {
      const r = await insertOrFindSource(client, workspaceId, it.norm, it.given);
      if (r.created) created++;
      if (it.segmentId) await attachSourceToSegment(client, it.segmentId, r.row.id);
      rows.push(r.row);
    }
    return { rows, created };
  });
}

/** Whether another source of the workspace has this type and normalised identifier. */
export async function sourceIdentityTaken(em: EntityManager, source: SourceEntity, normalisedIdentifier: string): Promise<boolean> {
  return (await em.count(Source, { sourceType: source.sourceType, normalisedIdentifier, id: { $ne: source.id } })) > 0;
}

/** 409 `source_exists`: another source of the workspace has this type and identity. */
export const sourceExists = () => new ConflictError('Another source of this workspace already has this type and search parameters', 'source_exists');

/** Applies a change to a source; a clash with another source's identity (a concurrent PATCH) is `sourceExists`. */
export async function updateSource(
  em: EntityManager,
  source: SourceEntity,
  c: { sourceMeta?: Record<string, unknown>; normalisedIdentifier?: string; runFrequency?: RunFrequency | null; scheduleId: string | null },
): Promise<SourceEntity> {
  em.assign(source, {
    ...(c.sourceMeta !== undefined ? { sourceMeta: c.sourceMeta } : {}),
    ...(c.normalisedIdentifier !== undefined ? { normalisedIdentifier: c.normalisedIdentifier } : {}),
    ...(c.runFrequency !== undefined ? { runFrequency: c.runFrequency, scheduleId: c.scheduleId } : {}),
    updatedAt: new Date(),
  });
  try {
    await em.flush();
  } catch (e) {
    if (e instanceof UniqueConstraintViolationException) throw sourceExists();
    throw e;
  }
  return source;
}

/** Filterable fields of `POST /sources/filter-sources/{sourceType}` (api/schemas/conditions.ts publishes them). */
const meta = (key: string, label: string): SqlField => ({
  path: `sourceMeta.${key}`,
  type: 'string',
  sql: `(s.source_meta->>'${key}')`,
  output: ['sourceMeta', key],
  filteringSupported: true,
  label,
});
export const SOURCE_CATALOG = sqlCatalogOf(
  [
    { path: 'sourceIdentifier', type: 'string', sql: 's.source_identifier', output: ['sourceIdentifier'], filteringSupported: true },
    { path: 'refreshStatus', type: 'string', sql: 's.refresh_status', output: ['refreshStatus'], filteringSupported: true },
    { path: 'createdAt', type: 'date', sql: 's.created_at', output: ['createdAt'], filteringSupported: true },
    {
      path: 'segmentIds',
      type: 'multi',
      sql: `array(select g.id::text from segments g where s.id = any(g.segment_sources))`,
      output: ['segmentIds'],
      filteringSupported: true,
    },
    meta('sourceName', 'Source name'),
    meta('keyword', 'Keyword'),
    meta('jobTitle', 'Job title'),
    meta('jobLocation', 'Job location'),
    meta('socialName', 'Social name'),
    meta('socialHandle', 'Social handle'),
    meta('platformName', 'Platform name'),
    meta('interactionType', 'Interaction type'),
  ],
  's.id',
);

/**
 * One page of the sources of one type, oldest first (`after`: the keyset of a page token; `prev`
 * reads backwards), at most `limit + 1` rows (the extra one tells there is a next page), and the
 * total. The filter is a fragment of the condition compiler (domain/conditions.ts).
 */
export async function filterSourcesPage(
  { em, db, workspaceId }: WorkspaceScope,
  q: { sourceType: string; conditions: Condition[] | undefined; after: { id: string; dir: 'next' | 'prev' } | undefined; limit: number },
): Promise<{ rows: SourceEntity[]; total: number }> {
  assertWorkspaceScope(workspaceId);
  const where = compileWhere(SOURCE_CATALOG, { conditions: q.conditions });
  const filtered = sources
    .selectFrom('sources as s')
    .where('s.source_type', '=', q.sourceType as SourceType)
    .where(sql<SqlBool>`(${where.sql})`);
  const page = q.after ? filtered.where('s.id', q.after.dir === 'next' ? '>' : '<', q.after.id) : filtered;
  const [rows, [count]] = await Promise.all([
    runQuery(db, page.selectAll('s').orderBy('s.id', q.after?.dir === 'prev' ? 'desc' : 'asc').limit(q.limit + 1)),
    runQuery(db, filtered.select(sql<number>`count(*)::int`.as('n'))),
  ]);
  return { rows: rows.map((r) => sourceOfRow(em, r)), total: count!.n };
}

/** Marks the source `queued` unless a pull of it is queued or running; whether it was marked (compare-and-set). */
export async function claimIdleSourcePull(em: EntityManager, sourceId: string): Promise<boolean> {
  const n = await em.nativeUpdate(
    Source,
    { id: sourceId, $or: [{ refreshStatus: null }, { refreshStatus: { $nin: ['queued', 'running'] } }] },
    { refreshStatus: 'queued', updatedAt: raw('now()') },
  );
  return n > 0;
}

/** Marks the source `queued` again if its queued/running status is older than `graceSecs`; whether it was marked. */
export async function claimStaleSourcePull(em: EntityManager, sourceId: string, graceSecs: number): Promise<boolean> {
  const n = await em.nativeUpdate(
    Source,
    { id: sourceId, refreshStatus: { $in: ['queued', 'running'] }, updatedAt: { $lt: raw('now() - make_interval(secs => ?)', [graceSecs]) } },
    { refreshStatus: 'queued', updatedAt: raw('now()') },
  );
  return n > 0;
}

/** Marks a pull of the source running; the source, or null when it is gone. */
export async function markSourcePullRunning(em: EntityManager, sourceId: string): Promise<SourceEntity | null> {
  const source = await em.findOne(Source, { id: sourceId });
  if (!source) return null;
  em.assign(source, { refreshStatus: 'running', updatedAt: new Date() });
  await em.flush();
  return source;
}

/** Records how a pull of the source ended. */
export async function setSourcePullOutcome(em: EntityManager, sourceId: string, status: 'succeeded' | 'failed'): Promise<void> {
  await em.nativeUpdate(Source, { id: sourceId }, { refreshStatus: status, updatedAt: raw('now()') });
}

/** Puts back a refresh status (a pull that could not be started); `updated_at` is left as it was. */
export async function setSourceRefreshStatus(em: EntityManager, sourceId: string, status: Exclude<RefreshStatus, null> | null): Promise<void> {
  await em.nativeUpdate(Source, { id: sourceId }, { refreshStatus: status });
}
