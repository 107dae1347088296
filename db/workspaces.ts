/** Workspaces and API keys: used by the admin CLI, `npm start`'s demo workspace and tests. */
import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { newApiKey } from '../infra/keyGeneration.js';
import { loadConfig } from '../domain/config.js';
import { keyringOf, type Keyring } from '../domain/keyring.js';
import type { KeyKind, Plan } from './platform.js';
import { grantCredits } from './credits.js';
import { sealWebhookSecret } from './secrets.js';
import { withTransaction, type Pool, type Queryable } from './pool.js';

export interface NewWorkspace {
  workspaceId: string;
  apiKey: string;
  webhookSecret: string;
}

/** `keyring` defaults to the one of this process's environment (`ENCRYPTION_KEY`). */
export async function createWorkspace(pool: Pool, opts: { name: string; plan?: Plan; credits?: number; id?: string; keyring?: Keyring }): Promise<NewWorkspace> {
  const workspaceId = opts.id ?? uuidv7();
  const webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const sealed = sealWebhookSecret(opts.keyring ?? keyringOf(loadConfig()), workspaceId, webhookSecret);
  const key = newApiKey('workspace');
  await withTransaction(pool, async (c) => {
    await c.query(`insert into workspaces (id, name, plan, webhook_secret) values ($1, $2, $3, $4)`, [workspaceId, opts.name, opts.plan ?? 'free', sealed]);
    await c.query(`insert into credit_accounts (workspace_id, balance) values ($1, 0)`, [workspaceId]);
    await c.query(`insert into api_keys (id, workspace_id, kind, key_hash, prefix) values ($1, $2, 'workspace', $3, $4)`, [uuidv7(), workspaceId, key.hash, key.prefix]);
  });
  if (opts.credits) await grantCredits(pool, workspaceId, opts.credits, 'initial grant');
  return { workspaceId, apiKey: key.key, webhookSecret };
}

export interface IssuedApiKey {
  apiKeyId: string;
  apiKey: string;
  /** Session keys: creation + their time to live; other kinds never expire (null). */
  expiresAt: string | null;
}

/**
 * A new key of `kind`. Session keys expire after `sessionTtlSeconds` (default: this process's
 * `SESSION_KEY_TTL_SECONDS`, 24 h); workspace and user keys until revoked.
 */
export async function issueApiKey(pool: Queryable, workspaceId: string, kind: KeyKind, opts: { sessionTtlSeconds?: number } = {}): Promise<IssuedApiKey> {
  const key = newApiKey(kind);
  const ttl = kind === 'session' ? (opts.sessionTtlSeconds ?? loadConfig().sessionKeyTtlSeconds) : null;
  const r = await pool.query<{ id: string; expires_at: Date | null }>(
    `insert into api_keys (id, workspace_id, kind, key_hash, prefix, expires_at)
     select $1, id, $3, $4, $5, now() + make_interval(secs => $6::double precision) from workspaces where id = $2
     returning id, expires_at`,
    [uuidv7(), workspaceId, kind, key.hash, key.prefix, ttl],
  );
  const row = r.rows[0];
  if (!row) throw new Error(`workspace ${workspaceId} does not exist`);
  return { apiKeyId: row.id, apiKey: key.key, expiresAt: row.expires_at?.toISOString() ?? null };
}

export async function createApiKey(pool: Pool, workspaceId: string, kind: KeyKind): Promise<string> {
  return (await issueApiKey(pool, workspaceId, kind)).apiKey;
}

export async function setPlan(pool: Pool, workspaceId: string, plan: Plan): Promise<void> {
  const r = await pool.query(`update workspaces set plan = $2 where id = $1`, [workspaceId, plan]);
  if (r.rowCount !== 1) throw new Error(`workspace ${workspaceId} does not exist`);
}

export interface ApiKeySummary {
  apiKeyId: string;
  workspaceId: string;
  kind: KeyKind;
  /** The first 12 characters of the key (all that is kept besides its hash). */
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  /** active, expired or revoked, as authentication sees it now. */
  status: 'active' | 'expired' | 'revoked';
}

export async function listApiKeys(db: Queryable, filter: { workspaceId?: string; includeInactive?: boolean } = {}): Promise<ApiKeySummary[]> {
  const r = await db.query<{ id: string; workspace_id: string; kind: KeyKind; prefix: string; created_at: Date; expires_at: Date | null; revoked_at: Date | null; status: ApiKeySummary['status'] }>(
    `select id, workspace_id, kind, prefix, created_at, expires_at, revoked_at, status from (
       select *, case when revoked_at is not null then 'revoked' when expires_at <= now() then 'expired' else 'active' end as status
         from api_keys where ($1::uuid is null or workspace_id = $1)) k
      where $2 or status = 'active'
      order by workspace_id, created_at, id`,
    [filter.workspaceId ?? null, filter.includeInactive ?? false],
  );
  const iso = (d: Date | null) => d?.toISOString() ?? null;
  return r.rows.map((k) => ({ apiKeyId: k.id, workspaceId: k.workspace_id, kind: k.kind, prefix: k.prefix, createdAt: k.created_at.toISOString(), expiresAt: iso(k.expires_at), revokedAt: iso(k.revoked_at), status: k.status }));
}

/**
 * Revokes a key: a plain update of its row (`revoked_at`), so anything that watches the table
 * (an auth cache invalidated by NOTIFY) sees it. Revoking a revoked key keeps the first time.
 */
export async function revokeApiKey(db: Queryable, apiKeyId: string): Promise<{ apiKeyId: string; workspaceId: string; revokedAt: string }> {
  const r = await db.query<{ id: string; workspace_id: string; revoked_at: Date }>(
    `update api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 returning id, workspace_id, revoked_at`,
    [apiKeyId],
  );
  const row = r.rows[0];
  if (!row) throw new Error(`API key ${apiKeyId} does not exist`);
  return { apiKeyId: row.id, workspaceId: row.workspace_id, revokedAt: row.revoked_at.toISOString() };
}

export interface WorkspaceSummary {
  workspaceId: string;
  name: string;
  plan: Plan;
  creditBalance: number;
  activeKeys: number;
  createdAt: string;
}

export async function listWorkspaces(db: Queryable): Promise<WorkspaceSummary[]> {
  const r = await db.query<{ id: string; name: string; plan: Plan; balance: number | null; active_keys: number; created_at: Date }>(
    `select w.id, w.name, w.plan, c.balance, w.created_at,
            (select count(*) from api_keys k where k.workspace_id = w.id and k.revoked_at is null and (k.expires_at is null or k.expires_at > now()))::int as active_keys
       from workspaces w left join credit_accounts c on c.workspace_id = w.id
      order by w.created_at, w.id`,
  );
  return r.rows.map((w) => ({ workspaceId: w.id, name: w.name, plan: w.plan, creditBalance: Number(w.balance ?? 0), activeKeys: w.active_keys, createdAt: w.created_at.toISOString() }));
}
