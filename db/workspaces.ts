/** Workspaces and API keys: used by the admin CLI, `npm start`'s demo workspace and tests. */
import { randomBytes } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { EntityManager } from '@mikro-orm/postgresql';
import { newApiKey } from '../infra/keyGeneration.js';
import { loadConfig } from '../domain/config.js';
import { keyringOf, type Keyring } from '../domain/keyring.js';
import { ApiKey, CreditAccount, Workspace, type KeyKind, type Plan } from './platform.js';
import { grantCredits } from './credits.js';
import { sealWebhookSecret } from './secrets.js';
import { acrossWorkspaces, inWorkspace } from './tenancy.js';

export interface NewWorkspace {
  workspaceId: string;
  apiKey: string;
  webhookSecret: string;
}

/** `keyring` defaults to the one of this process's environment (`ENCRYPTION_KEY`). */
export async function createWorkspace(em: EntityManager, opts: { name: string; plan?: Plan; credits?: number; id?: string; keyring?: Keyring }): Promise<NewWorkspace> {
  const workspaceId = opts.id ?? uuidv7();
  const webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const sealed = sealWebhookSecret(opts.keyring ?? keyringOf(loadConfig()), workspaceId, webhookSecret);
  const key = newApiKey('workspace');
  await em.fork().transactional(async (tx) => {
    tx.create(Workspace, { id: workspaceId, name: opts.name, plan: opts.plan ?? 'free', webhookSecret: sealed });
    tx.create(CreditAccount, { workspaceId, balance: 0, updatedAt: new Date() });
    tx.create(ApiKey, { id: uuidv7(), workspaceId, kind: 'workspace', keyHash: key.hash, prefix: key.prefix, revokedAt: null, expiresAt: null });
  });
  if (opts.credits) await grantCredits(em, workspaceId, opts.credits, 'initial grant');
  return { workspaceId, apiKey: key.key, webhookSecret };
}

/** Whether workspace `id` exists (`id` must be a UUID). */
export async function workspaceExists(em: EntityManager, id: string): Promise<boolean> {
  return (await em.fork().count(Workspace, { id })) > 0;
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
export async function issueApiKey(em: EntityManager, workspaceId: string, kind: KeyKind, opts: { sessionTtlSeconds?: number } = {}): Promise<IssuedApiKey> {
  const key = newApiKey(kind);
  const ttl = kind === 'session' ? (opts.sessionTtlSeconds ?? loadConfig().sessionKeyTtlSeconds) : null;
  const fork = em.fork();
  if (!(await fork.count(Workspace, { id: workspaceId }))) throw new Error(`workspace ${workspaceId} does not exist`);
  const createdAt = new Date();
  const row = fork.create(ApiKey, {
    id: uuidv7(),
    workspaceId,
    kind,
    keyHash: key.hash,
    prefix: key.prefix,
    createdAt,
    revokedAt: null,
    expiresAt: ttl === null ? null : new Date(createdAt.getTime() + ttl * 1000),
  });
  await fork.flush();
  return { apiKeyId: row.id, apiKey: key.key, expiresAt: row.expiresAt?.toISOString() ?? null };
}

export async function createApiKey(em: EntityManager, workspaceId: string, kind: KeyKind): Promise<string> {
  return (await issueApiKey(em, workspaceId, kind)).apiKey;
}

export async function setPlan(em: EntityManager, workspaceId: string, plan: Plan): Promise<void> {
  const fork = em.fork();
  const workspace = await fork.findOne(Workspace, { id: workspaceId });
  if (!workspace) throw new Error(`workspace ${workspaceId} does not exist`);
  fork.assign(workspace, { plan });
  await fork.flush();
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

/** The filter of keys authentication accepts at `now`: not revoked, not expired. */
const activeKeys = (now: Date) => ({ revokedAt: null, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] });

export async function listApiKeys(em: EntityManager, filter: { workspaceId?: string; includeInactive?: boolean } = {}): Promise<ApiKeySummary[]> {
  const now = new Date();
  const keys = await em.fork().find(
    ApiKey,
    { ...(filter.workspaceId ? { workspaceId: filter.workspaceId } : {}), ...(filter.includeInactive ? {} : activeKeys(now)) },
    { ...(filter.workspaceId ? inWorkspace(filter.workspaceId) : acrossWorkspaces), orderBy: [{ workspaceId: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }] },
  );
  const iso = (d: Date | null | undefined) => d?.toISOString() ?? null;
  return keys.map((k) => ({
    apiKeyId: k.id,
    workspaceId: k.workspaceId,
    kind: k.kind,
    prefix: k.prefix,
    createdAt: k.createdAt.toISOString(),
    expiresAt: iso(k.expiresAt),
    revokedAt: iso(k.revokedAt),
    status: k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt <= now ? 'expired' : 'active',
  }));
}

/**
 * Revokes a key: a plain update of its row (`revoked_at`), so anything that watches the table
 * (an auth cache invalidated by NOTIFY) sees it. Revoking a revoked key keeps the first time.
 */
export async function revokeApiKey(em: EntityManager, apiKeyId: string): Promise<{ apiKeyId: string; workspaceId: string; revokedAt: string }> {
  const fork = em.fork();
  // The operator names a key by id, whichever workspace holds it.
  const key = await fork.findOne(ApiKey, { id: apiKeyId }, acrossWorkspaces);
  if (!key) throw new Error(`API key ${apiKeyId} does not exist`);
  key.revokedAt ??= new Date();
  await fork.flush();
  return { apiKeyId: key.id, workspaceId: key.workspaceId, revokedAt: key.revokedAt.toISOString() };
}

export interface WorkspaceSummary {
  workspaceId: string;
  name: string;
  plan: Plan;
  creditBalance: number;
  activeKeys: number;
  createdAt: string;
}

export async function listWorkspaces(em: EntityManager): Promise<WorkspaceSummary[]> {
  const fork = em.fork();
  const now = new Date();
  const [workspaces, accounts, keys] = await Promise.all([
    fork.find(Workspace, {}, { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
    fork.find(CreditAccount, {}, acrossWorkspaces),
    fork.find(ApiKey, activeKeys(now), { ...acrossWorkspaces, fields: ['workspaceId'] }),
  ]);
  const balance = new Map(accounts.map((a) => [a.workspaceId, a.balance]));
  const active = new Map<string, number>();
  for (const k of keys) active.set(k.workspaceId, (active.get(k.workspaceId) ?? 0) + 1);
  return workspaces.map((w) => ({ workspaceId: w.id, name: w.name, plan: w.plan, creditBalance: balance.get(w.id) ?? 0, activeKeys: active.get(w.id) ?? 0, createdAt: w.createdAt.toISOString() }));
}
