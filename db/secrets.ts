/**
 * Secrets stored in the database, all encrypted with the keyring (`domain/keyring.ts`):
 * workspaces' webhook signing secrets (context `webhook-secret:<workspaceId>`) and integrations'
 * credentials (context: the integration id, `domain/credentials.ts`). `reencryptSecrets` moves
 * every stored value onto the current key (the admin CLI's `secrets:reencrypt`, after a rotation);
 * the webhook-secret migration uses the same function to encrypt the secrets stored in clear.
 */
import type { Keyring } from '../domain/keyring.js';
import type { Queryable } from './pool.js';

const webhookContext = (workspaceId: string) => `webhook-secret:${workspaceId}`;

export function sealWebhookSecret(keyring: Keyring, workspaceId: string, secret: string): string {
  return keyring.encryptText(secret, webhookContext(workspaceId));
}

/**
 * The workspace's webhook secret in clear (undefined: no such workspace). A value still in clear
 * (written by a process older than the encryption migration during a rolling deploy) is used as
 * is; `secrets:reencrypt` encrypts it.
 */
export async function readWebhookSecret(db: Queryable, keyring: Keyring, workspaceId: string): Promise<string | undefined> {
  const r = await db.query<{ webhook_secret: string }>(`select webhook_secret from workspaces where id = $1`, [workspaceId]);
  const stored = r.rows[0]?.webhook_secret;
  if (stored === undefined) return undefined;
  return keyring.isEncryptedText(stored) ? keyring.decryptText(stored, webhookContext(workspaceId)) : stored;
}

/** Runs one SQL statement and returns its rows (a pg pool or a migration's `execute`). */
export type RunSql = (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;

export const runOn = (db: Queryable): RunSql => async (sql, params) => (await db.query(sql, params)).rows;

export interface ReencryptReport {
  /** Values rewritten under the current key, per kind. */
  webhookSecrets: number;
  integrationCredentials: number;
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
  const report: ReencryptReport = { webhookSecrets: 0, integrationCredentials: 0, alreadyCurrent: 0 };
  const workspaces = await run(`select id, webhook_secret from workspaces`, []);
  for (const row of workspaces) {
    const id = row.id as string;
    const stored = row.webhook_secret as string;
    if (keyring.isCurrent(stored)) {
      report.alreadyCurrent++;
      continue;
    }
    const secret = keyring.isEncryptedText(stored) ? keyring.decryptText(stored, webhookContext(id)) : stored;
    const updated = await run(`update workspaces set webhook_secret = $2 where id = $1 and webhook_secret = $3 returning id`, [id, sealWebhookSecret(keyring, id, secret), stored]);
    report.webhookSecrets += updated.length;
  }
  if (opts.only === 'webhookSecrets') return report;
  const integrations = await run(`select id, credentials_encrypted from integrations where credentials_encrypted is not null`, []);
  for (const row of integrations) {
    const id = row.id as string;
    const stored = row.credentials_encrypted as string;
    if (keyring.isCurrent(stored)) {
      report.alreadyCurrent++;
      continue;
    }
    const fresh = keyring.encryptText(keyring.decryptText(stored, id), id);
    const updated = await run(`update integrations set credentials_encrypted = $2 where id = $1 and credentials_encrypted = $3 returning id`, [id, fresh, stored]);
    report.integrationCredentials += updated.length;
  }
  return report;
}
