/**
 * The access token a publish step sends with, refreshed just in time (issue 29, token lifecycle).
 *
 * One refresh at a time per account: the integration's row is locked (`select … for update`) in
 * one transaction around the token request, so 20 concurrent publishes on one account make one
 * refresh, and the 19 others wait for the lock and read the pair it stored (X rotates refresh
 * tokens: a second refresh with the same token would end the grant). Chosen over a
 * per-integration workflow because the lock also covers the API's reconnect (same row) and needs
 * no extra round trip through Temporal on the publish path; it holds a connection for at most
 * the token request's deadline (15 s).
 *
 * The new pair replaces the old in the same transaction (never a moment without one), and an
 * answer without `refresh_token` keeps the stored one. Failures are classified: network, 5xx and
 * 429 throw `transient` (the activity retries with backoff; nothing visible changes);
 * `invalid_grant` (revoked, spent, expired) commits status `reauth_required` and throws
 * `credentials_revoked` with code `integration_reauth_required` (final for the post).
 */
import { Context } from '@temporalio/activity';
import type { EntityManager } from '@mikro-orm/postgresql';
import { integrationsEndingBefore, publishingAccount, withLockedIntegration, type IntegrationEntity } from '../db/integrations.js';
import { withoutTenancy } from '../db/tenancy.js';
import { inWorkspaceUnit, type WorkspaceScope } from '../db/scope.js';
import type { ActivityDeps } from './deps.js';
import { onEntityManager, recordEvent, type DeliveryRef } from '../db/events.js';
import { eventStateKey } from '../domain/events.js';
import type { Config } from '../domain/config.js';
import { decryptCredentials, encryptCredentials } from '../domain/credentials.js';
import { keyringOf } from '../domain/keyring.js';
import { OAuthError, oauthEndpoints, oauthNetworkOf, refreshGrant } from '../infra/oauth.js';
import { resolveOAuthApp } from '../infra/oauthApps.js';
import { ProviderFailure } from './providers/social.js';

/** A token ending within this margin is refreshed before it is used: `OAUTH_REFRESH_MARGIN_SECS`, 5 minutes unless set. */
export const refreshMarginMs = (env: NodeJS.ProcessEnv) => {
  const secs = Number(env.OAUTH_REFRESH_MARGIN_SECS);
  return (Number.isFinite(secs) && secs >= 0 && env.OAUTH_REFRESH_MARGIN_SECS !== '' && env.OAUTH_REFRESH_MARGIN_SECS !== undefined ? secs : 300) * 1000;
};

export const reauthRequired = (integrationId: string, why: string) =>
  new ProviderFailure('credentials_revoked', `integration ${integrationId} must be reconnected: ${why}`, { code: 'integration_reauth_required' });

/**
 * The integration's access token, refreshed first when it ends within the refresh margin (or
 * when the network answered 401 to the stored token, `opts.rejected`). Throws
 * `integration_reauth_required` when the grant is gone.
 */
export async function freshAccessToken(
  scope: WorkspaceScope,
  config: Config,
  integrationId: string,
  /**
   * `rejected`: the token the network just answered 401 to; refreshed unless another caller already replaced it.
   * `marginMs`: refresh when the token ends within this (the sweep's wider margin), instead of `OAUTH_REFRESH_MARGIN_SECS`.
   * `dispatch`: starts the deliveries of the `integration.reauth_required` event this call may record.
   */
  opts: { rejected?: string; marginMs?: number; dispatch?: (deliveries: DeliveryRef[]) => Promise<void> } = {},
): Promise<string> {
  const { em, workspaceId } = scope;
  const keyring = keyringOf(config);
  /** The stored token, and the refresh token to use when it must be refreshed first (else null). */
  const read = (row: IntegrationEntity) => {
    if (row.status !== 'connected' || !row.credentialsEncrypted) throw new ProviderFailure('credentials_revoked', `integration ${integrationId} is disconnected`);
    const creds = decryptCredentials(row.credentialsEncrypted, keyring, integrationId);
    const token = creds.accessToken;
    if (typeof token !== 'string' || !token) throw new ProviderFailure('credentials_revoked', `integration ${integrationId} has no accessToken`);
    const refreshToken = typeof creds.refreshToken === 'string' && creds.refreshToken ? creds.refreshToken : null;
    const endsSoon = row.accessExpiresAt ? row.accessExpiresAt.getTime() - Date.now() <= (opts.marginMs ?? refreshMarginMs(config.env)) : false;
    const force = opts.rejected !== undefined && opts.rejected === token;
    // A raw-token integration (no refresh token) is used as it is.
    return { creds, token, refreshToken: refreshToken && (endsSoon || force) ? refreshToken : null };
  };
  // Most calls need no refresh: answered from a plain read, without the lock.
  const seen = await publishingAccount(em, integrationId);
  if (!seen) throw new ProviderFailure('credentials_revoked', `integration ${integrationId} no longer exists`);
  if (seen.status === 'reauth_required') throw reauthRequired(integrationId, 'the network ended its grant');
  const unlocked = read(seen);
  if (!unlocked.refreshToken) return unlocked.token;
  let deliveries: DeliveryRef[] = [];
  /** The move to reauth_required, and its event in the same transaction: one per ended grant, however many publishes hit it. */
  const endGrant = async (tx: EntityManager, row: IntegrationEntity, why: string) => {
    const event = await recordEvent(onEntityManager(tx), {
      workspaceId,
      type: 'integration.reauth_required',
      stateKey: eventStateKey.reauthRequired(integrationId, row.credentialsEncrypted ?? ''),
      data: { integrationId, provider: row.provider, status: 'reauth_required' },
    });
    deliveries = event?.deliveries ?? [];
    return { result: { reauth: why }, update: { status: 'reauth_required' as const } };
  };
  const outcome = await withLockedIntegration<{ token: string } | { reauth: string }>(em, integrationId, async (row, tx) => {
    // Read again under the lock: another caller may have refreshed meanwhile.
    if (row.status === 'reauth_required') return { result: { reauth: 'the network ended its grant' } };
    const { creds, token, refreshToken } = read(row);
    if (!refreshToken) return { result: { token } };
    const network = oauthNetworkOf(row.provider);
    const source = creds.app === 'workspace' ? 'workspace' : 'operator';
    const app = await resolveOAuthApp(em, keyring, config.env, workspaceId, network, source);
    if (!app) return endGrant(tx, row, `the ${source} OAuth app that issued its grant is no longer configured`);
    try {
      const fresh = await refreshGrant(network, app, oauthEndpoints(network, config.env), refreshToken, config.outboundAllowList);
      const next = { ...creds, accessToken: fresh.accessToken, refreshToken: fresh.refreshToken ?? refreshToken };
      return {
        result: { token: fresh.accessToken },
        update: {
          credentialsEncrypted: encryptCredentials(next, keyring, integrationId),
          accessExpiresAt: fresh.accessExpiresAt,
          grantExpiresAt: fresh.grantExpiresAt ?? row.grantExpiresAt ?? null,
          ...(fresh.scopes.length ? { scopes: fresh.scopes } : {}),
        },
      };
    } catch (e) {
      if (!(e instanceof OAuthError)) throw e;
      if (e.kind === 'invalid_grant') return endGrant(tx, row, e.message);
      // A transient failure leaves the stored pair (still the valid one) untouched.
      throw new ProviderFailure('transient', `token refresh: ${e.message}`, e.opts.retryAfterMs ? { retryAfterMs: e.opts.retryAfterMs } : {});
    }
  });
  await opts.dispatch?.(deliveries);
  if (!outcome) throw new ProviderFailure('credentials_revoked', `integration ${integrationId} no longer exists`);
  if ('reauth' in outcome) throw reauthRequired(integrationId, outcome.reauth);
  return outcome.token;
}

/** How often the refresh-ahead sweep runs (the Schedule `oauth-token-refresh-<taskQueue>`, worker/schedules.ts). */
export const TOKEN_REFRESH_EVERY_MS = 10 * 60_000;

export interface TokenSweepCounts {
  /** Integrations whose token ended within the sweep's margin. */
  due: number;
  refreshed: number;
  /** The grant is gone: now `reauth_required`. */
  reauthRequired: number;
  /** A network error, 5xx or 429 at the token endpoint: nothing changed, the next sweep (or the publish) tries again. */
  deferred: number;
}

export function createTokenActivities(deps: ActivityDeps) {
  return {
    /**
     * Refresh ahead of expiry (`tokenRefreshWorkflow`): every connected OAuth integration whose
     * access token ends within the margin plus two sweep periods is refreshed now, each in its
     * workspace's scope and under its row lock (`freshAccessToken`: a publish refreshing at the
     * same moment waits and reads the new pair, one refresh). So a publish rarely needs its own.
     */
    async refreshExpiringTokens(): Promise<TokenSweepCounts> {
      const marginMs = refreshMarginMs(deps.config.env) + 2 * TOKEN_REFRESH_EVERY_MS;
      const due = await withoutTenancy('the token refresh sweep covers every workspace', () => integrationsEndingBefore(deps.orm.em.fork(), new Date(Date.now() + marginMs)));
      const counts: TokenSweepCounts = { due: due.length, refreshed: 0, reauthRequired: 0, deferred: 0 };
      for (const i of due) {
        const outcome = await inWorkspaceUnit({ em: deps.orm.em, db: deps.pool }, i.workspaceId, async (scope) => {
          // Each read on a fork of its own: the second sees the row the refresh committed, not a cached one.
          const expiry = async () => (await publishingAccount(scope.em.fork(), i.id))?.accessExpiresAt?.getTime() ?? null;
          const before = await expiry();
          try {
            await freshAccessToken(scope, deps.config, i.id, { marginMs });
          } catch (e) {
            if (!(e instanceof ProviderFailure)) throw e;
            return e.kind === 'credentials_revoked' ? 'reauthRequired' : 'deferred';
          }
          return (await expiry()) !== before ? 'refreshed' : null;
        });
        if (outcome) counts[outcome]++;
        Context.current().heartbeat(counts);
      }
      return counts;
    },
  };
}
