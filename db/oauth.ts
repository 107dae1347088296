/**
 * OAuth connect state (issue 29): pending authorizations (`oauth_states`, one row per authorize
 * request, consumed by the callback) and workspaces' own OAuth apps (`oauth_apps`). Every access
 * goes through the context's entity manager, scoped to the workspace (db/tenancy.ts).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Provider } from '../domain/social.js';
import { workspaceId } from './platform.js';
import { workspaceOwned } from './tenancy.js';

export const OAuthState = defineEntity({
  name: 'OAuthState',
  tableName: 'oauth_states',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('oauth_states'),
    provider: p.text().$type<Provider>(),
    appSource: p.text().$type<'operator' | 'workspace'>(),
    /** The PKCE verifier, encrypted (context `oauth-state:<id>`); never leaves the server. */
    codeVerifierEncrypted: p.text(),
    redirectUri: p.text(),
    expiresAt: p.datetime(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ name: 'oauth_states_ws_expires', properties: ['workspaceId', 'expiresAt'] }],
  checks: [
    { name: 'oauth_states_provider_check', expression: `provider in ('microblog','pronet','pronetPage')` },
    { name: 'oauth_states_app_source_check', expression: `app_source in ('operator','workspace')` },
  ],
});
export type OAuthStateRow = InferEntity<typeof OAuthState>;

export const OAuthAppRow = defineEntity({
  name: 'OAuthApp',
  tableName: 'oauth_apps',
  filters: workspaceOwned,
  properties: {
    workspaceId: workspaceId('oauth_apps').primary(),
    network: p.text().$type<'microblog' | 'pronet'>().primary(),
    clientId: p.text(),
    /** Keyring text, context `oauth-app:<workspaceId>:<network>`. */
    clientSecretEncrypted: p.text().lazy(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  checks: [{ name: 'oauth_apps_network_check', expression: `network in ('microblog','pronet')` }],
});
export type OAuthAppEntity = InferEntity<typeof OAuthAppRow>;

/** Records a pending authorization, and drops the workspace's expired ones. */
export async function insertOAuthState(em: EntityManager, row: Omit<OAuthStateRow, 'createdAt'>): Promise<void> {
  await em.nativeDelete(OAuthState, { expiresAt: { $lt: new Date() } });
  em.create(OAuthState, row);
  await em.flush();
}

/**
 * Takes the pending authorization `id` (of the context's workspace) if it has not expired: the
 * row is deleted, so a second callback with the same state finds nothing (single use, also under
 * concurrent callbacks: only one delete counts the row).
 */
export async function consumeOAuthState(em: EntityManager, id: string): Promise<OAuthStateRow | null> {
  const row = await em.findOne(OAuthState, { id, expiresAt: { $gt: new Date() } });
  if (!row) return null;
  const n = await em.nativeDelete(OAuthState, { id });
  return n === 1 ? row : null;
}

export async function findOAuthApp(em: EntityManager, network: 'microblog' | 'pronet'): Promise<OAuthAppEntity | null> {
  return em.findOne(OAuthAppRow, { network }, { populate: ['clientSecretEncrypted'] });
}

export async function listOAuthApps(em: EntityManager): Promise<OAuthAppEntity[]> {
  return em.find(OAuthAppRow, {}, { orderBy: { network: 'asc' } });
}

export async function upsertOAuthApp(em: EntityManager, ws: string, row: { network: 'microblog' | 'pronet'; clientId: string; clientSecretEncrypted: string }): Promise<OAuthAppEntity> {
  await em.upsert(OAuthAppRow, { workspaceId: ws, ...row }, { onConflictFields: ['workspaceId', 'network'], onConflictAction: 'merge', onConflictMergeFields: ['clientId', 'clientSecretEncrypted'] });
  return (await em.findOne(OAuthAppRow, { network: row.network }, { refresh: true }))!;
}

export async function deleteOAuthApp(em: EntityManager, network: 'microblog' | 'pronet'): Promise<boolean> {
  return (await em.nativeDelete(OAuthAppRow, { network })) > 0;
}
