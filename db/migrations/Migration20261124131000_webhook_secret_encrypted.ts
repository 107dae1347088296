import { Migration } from '@mikro-orm/migrations';
import { loadConfig } from '../../domain/config.js';
import { keyringOf } from '../../domain/keyring.js';
import { reencryptSecrets, type RunSql } from '../secrets.js';

/**
 * Webhook signing secrets are stored encrypted (keyring, `db/secrets.ts`): encrypts the ones
 * stored in clear with the current `ENCRYPTION_KEY` of the process that migrates (the migration
 * job runs with the same environment as API and worker).
 */
export class Migration20261124131000_webhook_secret_encrypted extends Migration {
  override name = 'Migration20261124131000_webhook_secret_encrypted';

  override async up(): Promise<void> {
    // The migration's connection (its transaction) takes `?` placeholders in order; the shared SQL uses `$n`.
    const run: RunSql = (sql, params) => {
      const ordered: unknown[] = [];
      const positional = sql.replace(/\$(\d+)/g, (_, n: string) => (ordered.push(params[Number(n) - 1]), '?'));
      return this.execute(positional, ordered) as Promise<Array<Record<string, unknown>>>;
    };
    await reencryptSecrets(run, keyringOf(loadConfig()), { only: 'webhookSecrets' });
  }
}
