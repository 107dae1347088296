/**
 * Integration (connected social account) lookups the API needs while checking a post: which
 * provider an account is, and whether it is connected in the workspace; and the rows of the
 * integrations routes (connect, list, get, disconnect).
 */
import type { IntegrationStatus, Provider } from '../domain/social.js';
import type { Queryable } from './pool.js';

/** The provider of integration `id` if it is connected in the workspace, else null. */
export async function connectedIntegrationProvider(db: Queryable, workspaceId: string, id: string): Promise<Provider | null> {
  const r = await db.query<{ provider: Provider }>(`select provider from integrations where id = $1 and workspace_id = $2 and status = 'connected'`, [id, workspaceId]);
  return r.rows[0]?.provider ?? null;
}

/** The provider of an integration known to exist (a post's own account). */
export async function integrationProvider(db: Queryable, integrationId: string): Promise<Provider> {
  const r = await db.query<{ provider: Provider }>(`select provider from integrations where id = $1`, [integrationId]);
  return r.rows[0]!.provider;
}

// ---- The integrations routes (api/routes/integrations.ts) and bulk-schedule's account check ----

export interface IntegrationRow {
  id: string;
  provider: Provider;
  name: string;
  external_account_id: string;
  api_base_url: string | null;
  status: IntegrationStatus;
  created_at: Date;
}

const INTEGRATION_COLUMNS = 'id, provider, name, external_account_id, api_base_url, status, created_at';

export interface NewIntegration {
  id: string;
  provider: Provider;
  name: string;
  externalAccountId: string;
  /** Already encrypted (`encryptCredentials`). */
  credentialsEncrypted: string;
  apiBaseUrl: string | null;
}

export async function insertIntegration(db: Queryable, workspaceId: string, i: NewIntegration): Promise<IntegrationRow> {
  const r = await db.query<IntegrationRow>(
    `insert into integrations (id, workspace_id, provider, name, external_account_id, credentials_encrypted, api_base_url, status, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, 'connected', now()) returning ${INTEGRATION_COLUMNS}`,
    [i.id, workspaceId, i.provider, i.name, i.externalAccountId, i.credentialsEncrypted, i.apiBaseUrl],
  );
  return r.rows[0]!;
}

const INTEGRATION_FILTER_COLUMN = { provider: 'provider', externalAccountId: 'external_account_id', name: 'name' } as const;

export interface IntegrationListQuery {
  /** ANDed: the column's value is one of `values`. */
  conditions: Array<{ field: keyof typeof INTEGRATION_FILTER_COLUMN; values: string[] }>;
  /** Keyset position: rows after (`next`) or before (`prev`) this (created_at text, id). */
  after?: { dir: 'next' | 'prev'; createdAt: string; id: string };
  /** Rows to read (the caller asks for one more than a page to know whether another follows). */
  limit: number;
}

/** Connected integrations of the workspace matching the conditions, with `k` (created_at as text), and the total matching. */
export async function listConnectedIntegrations(
  db: Queryable,
  workspaceId: string,
  query: IntegrationListQuery,
): Promise<{ rows: Array<IntegrationRow & { k: string }>; total: number }> {
  const where = [`workspace_id = $1`, `status = 'connected'`];
  const params: unknown[] = [workspaceId];
  for (const c of query.conditions) {
    params.push(c.values);
    where.push(`${INTEGRATION_FILTER_COLUMN[c.field]} = any($${params.length}::text[])`);
  }
  const filter = where.join(' and ');
  const countParams = [...params];
  let keyset = '';
  const from = query.after;
  if (from) {
    params.push(from.createdAt, from.id);
    keyset = from.dir === 'next'
      ? ` and (created_at, id) > ($${params.length - 1}::timestamptz, $${params.length}::uuid)`
      : ` and (created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`;
  }
  const order = from?.dir === 'prev' ? 'created_at desc, id desc' : 'created_at asc, id asc';
  params.push(query.limit);
  const [rows, count] = await Promise.all([
    db.query<IntegrationRow & { k: string }>(`select ${INTEGRATION_COLUMNS}, created_at::text as k from integrations where ${filter}${keyset} order by ${order} limit $${params.length}`, params),
    db.query<{ n: number }>(`select count(*)::int as n from integrations where ${filter}`, countParams),
  ]);
  return { rows: rows.rows, total: count.rows[0]!.n };
}

/** The connected integration of the workspace (`id` a lower-case uuid), or undefined. */
export async function findConnectedIntegration(db: Queryable, workspaceId: string, id: string): Promise<IntegrationRow | undefined> {
  const r = await db.query<IntegrationRow>(
    `select ${INTEGRATION_COLUMNS} from integrations where id = $1 and workspace_id = $2 and status = 'connected'`,
    [id, workspaceId],
  );
  return r.rows[0];
}

/** Marks the connected integration disconnected and erases its credentials; false when there was none. */
export async function disconnectIntegration(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const r = await db.query(
    `update integrations set status = 'disconnected', credentials_encrypted = ''
      where id = $1 and workspace_id = $2 and status = 'connected'`,
    [id, workspaceId],
  );
  return !!r.rowCount;
}

/** The provider of each connected integration of the workspace among `ids`. */
export async function connectedIntegrationProviders(db: Queryable, workspaceId: string, ids: string[]): Promise<Map<string, Provider>> {
  const r = await db.query<{ id: string; provider: Provider }>(
    `select id, provider from integrations where workspace_id = $1 and status = 'connected' and id = any($2::uuid[])`,
    [workspaceId, ids],
  );
  return new Map(r.rows.map((i) => [i.id, i.provider]));
}

/** What a publish step needs of an integration of the workspace (credentials still encrypted), or undefined. */
export interface PublishingAccountRow {
  provider: Provider;
  external_account_id: string;
  credentials_encrypted: string;
  api_base_url: string | null;
  status: IntegrationStatus;
}

export async function publishingAccount(db: Queryable, workspaceId: string, integrationId: string): Promise<PublishingAccountRow | undefined> {
  const r = await db.query<PublishingAccountRow>(
    `select provider, external_account_id, credentials_encrypted, api_base_url, status from integrations where id = $1 and workspace_id = $2`,
    [integrationId, workspaceId],
  );
  return r.rows[0];
}
