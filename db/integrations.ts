/**
 * Integrations (connected social accounts): the rows of the integrations routes (connect, list,
 * get, disconnect), the lookups the API needs while checking a post (which provider an account
 * is, whether it is connected in the workspace), and the account a publish step sends with.
 */
import type { InferEntity } from '@mikro-orm/core';
import type { EntityManager, InferKyselyDB } from '@mikro-orm/postgresql';
import type { Provider } from '../domain/social.js';
import { LockMode } from '@mikro-orm/core';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import type { Queryable } from './pool.js';
import { entityRows } from './entityRows.js';
import { runQuery, textArray, typedQueries } from './sqlFragments.js';
import { Integration } from './social.js';
import { acrossWorkspaces, assertWorkspaceScope } from './tenancy.js';

export type IntegrationEntity = InferEntity<typeof Integration>;

/**
 * The provider of integration `id` if it is connected in the workspace, else null. The entity
 * manager's `workspace` filter (db/tenancy.ts) scopes every read and write here to the workspace.
 */
export async function connectedIntegrationProvider(em: EntityManager, id: string): Promise<Provider | null> {
  const i = await em.findOne(Integration, { id, status: 'connected' }, { fields: ['provider'] });
  return i?.provider ?? null;
}

/** The provider of each connected integration of the workspace among `ids`. */
export async function connectedIntegrationProviders(em: EntityManager, ids: string[]): Promise<Map<string, Provider>> {
  const rows = await em.find(Integration, { status: 'connected', id: { $in: ids } }, { fields: ['provider'] });
  return new Map(rows.map((i) => [i.id, i.provider]));
}

/** The provider of an integration known to exist (a post's own account). */
export async function integrationProvider(em: EntityManager, integrationId: string): Promise<Provider> {
  const i = await em.findOneOrFail(Integration, { id: integrationId }, { fields: ['provider'] });
  return i.provider;
}

export interface NewIntegration {
  id: string;
  provider: Provider;
  name: string;
  externalAccountId: string;
  /** Already encrypted (`encryptCredentials`). */
  credentialsEncrypted: string;
  apiBaseUrl: string | null;
}

export async function insertIntegration(em: EntityManager, workspaceId: string, i: NewIntegration): Promise<IntegrationEntity> {
  // A raw-token connect knows nothing of a grant: no scopes, handle or expiry.
  const row = em.create(Integration, { ...i, workspaceId, status: 'connected', scopes: [], handle: null, accessExpiresAt: null, grantExpiresAt: null });
  await em.flush();
  return row;
}

/** The statuses of an integration a client sees (a disconnected one has left reads and lists). */
export const VISIBLE_STATUSES = ['connected', 'reauth_required'] as const;

/** The visible (connected or reauth_required) integration of the workspace (`id` a lower-case uuid), or null. */
export async function findConnectedIntegration(em: EntityManager, id: string): Promise<IntegrationEntity | null> {
  return em.findOne(Integration, { id, status: { $in: [...VISIBLE_STATUSES] } });
}

/** Marks the visible integration disconnected and erases its credentials; false when there was none. */
export async function disconnectIntegration(em: EntityManager, id: string): Promise<boolean> {
  // One conditional update: a concurrent disconnect of the same account answers 404 exactly once.
  const n = await em.nativeUpdate(Integration, { id, status: { $in: [...VISIBLE_STATUSES] } }, { status: 'disconnected', credentialsEncrypted: '' });
  return n > 0;
}

/** What an OAuth connect learnt of the account and its grant. */
export interface OAuthConnection {
  provider: Provider;
  externalAccountId: string;
  name: string;
  handle: string | null;
  scopes: string[];
  accessExpiresAt: Date | null;
  grantExpiresAt: Date | null;
  apiBaseUrl: string | null;
}

/**
 * Connects an account through OAuth: the workspace's existing integration of the same provider
 * and external account is reconnected (same id, so posts keep their `providerId`; a connected
 * one before a disconnected one, then the oldest), else a new one is created. `seal` encrypts
 * the credentials for the row's id. The row is locked while it is rewritten, so a refresh in
 * flight for the old grant cannot overwrite the new one (it re-reads after the lock).
 */
export async function connectOAuthIntegration(
  em: EntityManager,
  workspaceId: string,
  c: OAuthConnection,
  seal: (integrationId: string) => string,
): Promise<{ integration: IntegrationEntity; reconnected: boolean }> {
  return em.transactional(async (tx) => {
    const existing = await tx.find(
      Integration,
      { provider: c.provider, externalAccountId: c.externalAccountId },
      { orderBy: { createdAt: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    const row = existing.find((i) => i.status !== 'disconnected') ?? existing[0];
    const fields = { ...c, status: 'connected' as const };
    if (row) {
      tx.assign(row, { ...fields, credentialsEncrypted: seal(row.id) });
      await tx.flush();
      return { integration: row, reconnected: true };
    }
    const id = uuidv7();
    const created = tx.create(Integration, { id, workspaceId, ...fields, credentialsEncrypted: seal(id) });
    await tx.flush();
    return { integration: created, reconnected: false };
  });
}

/**
 * Runs `fn` with the integration's row locked (`select … for update`) in one transaction, so
 * one token refresh at a time per account: a concurrent caller waits for the lock and then reads
 * the pair the first one stored. `fn` returns the fields to write (or nothing), written in the
 * same transaction before the lock is released.
 */
export async function withLockedIntegration<T>(
  em: EntityManager,
  id: string,
  /** `tx`: the transaction's entity manager, for writes that must commit with the update (an event). */
  fn: (row: IntegrationEntity, tx: EntityManager) => Promise<{ result: T; update?: Partial<Pick<IntegrationEntity, 'credentialsEncrypted' | 'status' | 'accessExpiresAt' | 'grantExpiresAt' | 'scopes'>> }>,
): Promise<T | null> {
  return em.transactional(async (tx) => {
    const row = await tx.findOne(Integration, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, populate: ['credentialsEncrypted'], refresh: true });
    if (!row) return null;
    const { result, update } = await fn(row, tx);
    if (update) {
      tx.assign(row, update);
      await tx.flush();
    }
    return result;
  });
}

/**
 * Connected integrations of every workspace whose access token ends before `before` (OAuth
 * grants only: a raw token has no expiry), soonest first: the refresh-ahead sweep's work. Run
 * under `withoutTenancy`.
 */
export async function integrationsEndingBefore(em: EntityManager, before: Date): Promise<Array<{ id: string; workspaceId: string }>> {
  const rows = await em.find(
    Integration,
    { status: 'connected', accessExpiresAt: { $ne: null, $lte: before } },
    { ...acrossWorkspaces, fields: ['id', 'workspaceId'], orderBy: { accessExpiresAt: 'asc' } },
  );
  return rows.map((r) => ({ id: r.id, workspaceId: r.workspaceId }));
}

/** What a publish step needs of an integration of the workspace (credentials still encrypted), or null. */
export async function publishingAccount(em: EntityManager, integrationId: string): Promise<IntegrationEntity | null> {
  return em.findOne(Integration, { id: integrationId }, { populate: ['credentialsEncrypted'] });
}

// ---- The integrations list (POST /integrations/filter-integrations) ----

const INTEGRATION_FILTER_COLUMN = { provider: 'provider', externalAccountId: 'external_account_id', name: 'name' } as const;

const integrations = typedQueries<InferKyselyDB<typeof Integration>>();
type IntegrationColumn = keyof InferKyselyDB<typeof Integration>['integrations'];
/**
 * What a list row reads: the entity's eager columns (from its metadata), never the credentials
 * (lazy). A `created_at` keyset compares microsecond timestamps with their text form (`k`), which
 * an entity's Date (milliseconds) cannot carry, so the list is read with Kysely rather than the
 * entity manager.
 */
const listColumns = (em: EntityManager) => em.getMetadata().get(Integration).props.filter((p) => !p.lazy).flatMap((p) => p.fieldNames) as IntegrationColumn[];

export interface IntegrationListQuery {
  /** ANDed: the column's value is one of `values`. */
  conditions: Array<{ field: keyof typeof INTEGRATION_FILTER_COLUMN; values: string[] }>;
  /** Keyset position: rows after (`next`) or before (`prev`) this (created_at text, id). */
  after?: { dir: 'next' | 'prev'; createdAt: string; id: string };
  /** Rows to read (the caller asks for one more than a page to know whether another follows). */
  limit: number;
}

/**
 * Connected integrations of the workspace matching the conditions, each with `k` (its created_at
 * as PostgreSQL's text, exact to the microsecond, the keyset), and the total matching.
 */
export async function listConnectedIntegrations(
  em: EntityManager,
  db: Queryable,
  workspaceId: string,
  query: IntegrationListQuery,
): Promise<{ rows: Array<{ integration: IntegrationEntity; k: string }>; total: number }> {
  assertWorkspaceScope(workspaceId);
  let filtered = integrations.selectFrom('integrations').where('status', 'in', [sql.lit('connected' as const), sql.lit('reauth_required' as const)]);
  // the column comes from the fixed map, the values are bound
  for (const c of query.conditions) filtered = filtered.where(INTEGRATION_FILTER_COLUMN[c.field], '=', sql<string>`any(${textArray(c.values)})`);
  const from = query.after;
  const page = from
    ? filtered.where((eb) => eb(eb.refTuple('created_at', 'id'), from.dir === 'next' ? '>' : '<', eb.tuple(sql<Date>`${from.createdAt}::timestamptz`, sql<string>`${from.id}::uuid`)))
    : filtered;
  const dir = from?.dir === 'prev' ? 'desc' : 'asc';
  const [rows, [count]] = await Promise.all([
    runQuery(db, page.select([...listColumns(em), sql<string>`created_at::text`.as('k')]).orderBy('created_at', dir).orderBy('id', dir).limit(query.limit)),
    runQuery(db, filtered.select(sql<number>`count(*)::int`.as('n'))),
  ]);
  const list = entityRows<IntegrationEntity>(em, Integration, rows);
  return { rows: rows.map((row, i) => ({ integration: list[i]!, k: row.k })), total: count!.n };
}
