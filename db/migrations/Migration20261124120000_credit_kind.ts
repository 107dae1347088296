import { Migration } from '@mikro-orm/migrations';

/**
 * What each ledger row is: `grant`, `debit`, `hold` (a job's maximum price reserved when it is
 * accepted) or `release` (a hold given back when the job settles or fails), see db/credits.ts.
 */
export class Migration20261124120000_credit_kind extends Migration {
  override name = 'Migration20261124120000_credit_kind';

  override up(): void {
    this.addSql(`alter table credit_transactions add column kind text not null default 'debit'
      constraint credit_transactions_kind check (kind in ('grant', 'debit', 'hold', 'release'))`);
    this.addSql(`update credit_transactions set kind = 'grant' where amount > 0`);
  }
}
