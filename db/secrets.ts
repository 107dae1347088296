/**
 * Secrets stored in the database, all encrypted with the keyring (`domain/keyring.ts`):
 * workspaces' webhook signing secrets (context `webhook-secret:<workspaceId>`), integrations'
 * credentials (context: the integration id, `domain/credentials.ts`), webhook subscriptions'
 * signing secrets, current and previous (`webhook-subscription:<id>`), and workspaces' own OAuth
 * app client secrets (`oauth-app:<workspaceId>:<network>`). `reencryptSecrets` moves
 * every stored value onto the current key (the admin CLI's `secrets:reencrypt`, after a rotation);
 * the webhook-secret migration uses the same function to encrypt the secrets stored in clear.
 */
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import type { Compilable } from 'kysely';
import type { Keyring } from '../domain/keyring.js';
import { Workspace } from './platform.js';
import type { Queryable } from './pool.js';
import { Integration } from './social.js';
import { WebhookSubscription } from './eventEntities.js';
import { OAuthAppRow } from './oauth.js';
import { runQuery, typedQueries } from './sqlFragments.js';

const db = typedQueries<InferKyselyDB<typeof Workspace | typeof Integration | typeof WebhookSubscription | typeof OAuthAppRow>>();

const webhookContext = (workspaceId: string) => `webhook-secret:${workspaceId}`;

export function sealWebhookSecret(keyring: Keyring, workspaceId: string, secret: string): string {
  return keyring.encryptText(secret, webhookContext(workspaceId));
}

/**
 * The workspace's webhook secret in clear (undefined: no such workspace). A value still in clear
 * (written by a process older than the encryption migration during a rolling deploy) is used as
 * is; `secrets:reencrypt` encrypts it.
 */
export async function readWebhookSecret(q: Queryable, keyring: Keyring, workspaceId: string): Promise<string | undefined> {
  const [row] = await runQuery(q, db.selectFrom('workspaces').select('webhook_secret').where('id', '=', workspaceId));
  const stored = row?.webhook_secret;
  if (stored === undefined) return undefined;
  return keyring.isEncryptedText(stored) ? keyring.decryptText(stored, webhookContext(workspaceId)) : stored;
}

/** Runs one statement (text with `$n` parameters, compiled from a typed query) and returns its rows: a pg pool or a migration's `execute`. */
export type RunSql = (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;

// raw SQL: only runs reencryptSecrets' typed statements, compiled to text (the form a migration's `execute` takes).
export const runOn = (q: Queryable): RunSql => async (sql, params) => (await q.query(sql, params)).rows;

/** A typed query compiled (`$n` parameters) and run through a RunSql. */
async function runTyped<Row>(run: RunSql, query: Compilable<Row>): Promise<Row[]> {
  const compiled = query.compile();
  return (await run(compiled.sql, compiled.parameters as unknown[])) as Row[];
}

export interface ReencryptReport {
  /** Values rewritten under the current key, per kind. */
  webhookSecrets: number;
  integrationCredentials: number;
  /** Webhook subscriptions' secrets (a previous secret still in its grace period counts too). */
  subscriptionSecrets: number;
  oauthAppSecrets: number;
  /** Values already under the current key. */
  alreadyCurrent: number;
}

/**
 * Rewrites every stored secret not yet under the current key (older key, the v1 form, or clear
 * webhook secrets). Each row is updated only if it still holds the value read (a concurrent write
 * wins), so it is safe while API and worker run. Throws if a value opens with no key of the ring:
 * nothing is lost, the operator adds the missing key to ENCRYPTION_PREVIOUS_KEYS and runs it again.
 */
export async function reencryptSecrets(run: RunSql, keyring: Keyring, opts: { only?: 'webhookSecrets' } = {}): Promise<ReencryptReport> {
  const report: ReencryptReport = { webhookSecrets: 0, integrationCredentials: 0, subscriptionSecrets: 0, oauthAppSecrets: 0, alreadyCurrent: 0 };
  const workspaces = await runTyped(run, db.selectFrom('workspaces').select(['id', 'webhook_secret']));
  for (const { id, webhook_secret: stored } of workspaces) {
    if (keyring.isCurrent(stored)) {
      report.alreadyCurrent++;
      continue;
    }
    const secret = keyring.isEncryptedText(stored) ? keyring.decryptText(stored, webhookContext(id)) : stored;
    const updated = await runTyped(
      run,
      db.updateTable('workspaces').set({ webhook_secret: sealWebhookSecret(keyring, id, secret) }).where('id', '=', id).where('webhook_secret', '=', stored).returning('id'),
    );
    report.webhookSecrets += updated.length;
  }
  if (opts.only === 'webhookSecrets') return report;
  const integrations = await runTyped(run, db.selectFrom('integrations').select(['id', 'credentials_encrypted']));
  for (const { id, credentials_encrypted: stored } of integrations) {
    if (keyring.isCurrent(stored)) {
      report.alreadyCurrent++;
      continue;
    }
    const fresh = keyring.encryptText(keyring.decryptText(stored, id), id);
    const updated = await runTyped(
      run,
      db.updateTable('integrations').set({ credentials_encrypted: fresh }).where('id', '=', id).where('credentials_encrypted', '=', stored).returning('id'),
    );
    report.integrationCredentials += updated.length;
  }
  const subscriptions = await runTyped(run, db.selectFrom('webhook_subscriptions').select(['id', 'secret_encrypted', 'previous_secret_encrypted']));
  for (const { id, secret_encrypted: stored, previous_secret_encrypted: previous } of subscriptions) {
    for (const [column, value] of [['secret_encrypted', stored], ['previous_secret_encrypted', previous]] as const) {
      if (value === null) continue;
      if (keyring.isCurrent(value)) {
        report.alreadyCurrent++;
        continue;
      }
      const fresh = sealSubscriptionSecret(keyring, id, openSubscriptionSecret(keyring, id, value));
      const updated = await runTyped(run, db.updateTable('webhook_subscriptions').set({ [column]: fresh }).where('id', '=', id).where(column, '=', value).returning('id'));
      report.subscriptionSecrets += updated.length;
    }
  }
  const apps = await runTyped(run, db.selectFrom('oauth_apps').select(['workspace_id', 'network', 'client_secret_encrypted']));
  for (const { workspace_id: ws, network, client_secret_encrypted: stored } of apps) {
    if (keyring.isCurrent(stored)) {
      report.alreadyCurrent++;
      continue;
    }
    const context = oauthAppContext(ws, network);
    const fresh = keyring.encryptText(keyring.decryptText(stored, context), context);
    const updated = await runTyped(
      run,
      db.updateTable('oauth_apps').set({ client_secret_encrypted: fresh }).where('workspace_id', '=', ws).where('network', '=', network).where('client_secret_encrypted', '=', stored).returning('workspace_id'),
    );
    report.oauthAppSecrets += updated.length;
  }
  return report;
}

/** The keyring context of a workspace's own OAuth app's client secret. */
export const oauthAppContext = (workspaceId: string, network: string) => `oauth-app:${workspaceId}:${network}`;

const subscriptionContext = (subscriptionId: string) => `webhook-subscription:${subscriptionId}`;

/** A webhook subscription's signing secret, sealed for its row (db/events.ts). */
export function sealSubscriptionSecret(keyring: Keyring, subscriptionId: string, secret: string): string {
  return keyring.encryptText(secret, subscriptionContext(subscriptionId));
}

export function openSubscriptionSecret(keyring: Keyring, subscriptionId: string, sealed: string): string {
  return keyring.decryptText(sealed, subscriptionContext(subscriptionId));
}
