/**
 * Which OAuth app a workspace connects and refreshes with: its own ("bring your own app",
 * `oauth_apps`, the client secret encrypted with the keyring) when it registered one for the
 * network, else the operator's (environment). A grant is refreshed with the app that issued it
 * (`source`, kept in the integration's encrypted credentials).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { findOAuthApp } from '../db/oauth.js';
import { oauthAppContext } from '../db/secrets.js';
import type { Keyring } from '../domain/keyring.js';
import { operatorApp, type OAuthApp, type OAuthNetwork } from './oauth.js';


export async function resolveOAuthApp(
  em: EntityManager,
  keyring: Keyring,
  env: NodeJS.ProcessEnv,
  workspaceId: string,
  network: OAuthNetwork,
  source?: 'operator' | 'workspace',
): Promise<OAuthApp | null> {
  if (source !== 'operator') {
    const own = await findOAuthApp(em, network);
    if (own) return { clientId: own.clientId, clientSecret: keyring.decryptText(own.clientSecretEncrypted, oauthAppContext(workspaceId, network)), source: 'workspace' };
    if (source === 'workspace') return null;
  }
  return operatorApp(network, env);
}
