import { Migration } from '@mikro-orm/migrations';

/**
 * The ledger's order is the order movements were applied in (`GET /credits/transactions`, newest
 * first): `seq`, drawn from a sequence when a row is inserted, which happens under the account
 * row's lock (db/credits.ts). It was the UUIDv7 `id`, picked by the application before the
 * movement queued for the lock, so concurrent movements listed out of order (`balance_after` 2, 0,
 * 1), and `created_at` was `now()`, the statement's start, also before the lock: it becomes
 * `clock_timestamp()` at insert.
 *
 * Existing rows are numbered in the order they were listed (`id`), so a listing or a walk started
 * before keeps its order. `(workspace_id, created_at desc, id desc)` served no query (the ledger
 * was paged by id); `(workspace_id, seq)` serves the listing.
 */
export class Migration20261126110000_credit_ledger_seq extends Migration {
  override name = 'Migration20261126110000_credit_ledger_seq';

  override up(): void {
    this.addSql(`alter table credit_transactions add column seq bigint`);
    this.addSql(`update credit_transactions t set seq = o.n
      from (select id, row_number() over (order by id) as n from credit_transactions) o where t.id = o.id`);
    this.addSql(`create sequence credit_transactions_seq_seq as bigint owned by credit_transactions.seq`);
    this.addSql(`select setval('credit_transactions_seq_seq', coalesce((select max(seq) from credit_transactions), 0) + 1, false)`);
    this.addSql(`alter table credit_transactions
      alter column seq set default nextval('credit_transactions_seq_seq'),
      alter column seq set not null,
      alter column created_at set default clock_timestamp()`);
    this.addSql(`drop index credit_transactions_ws_created`);
    this.addSql(`create index credit_transactions_ws_seq on credit_transactions(workspace_id, seq)`);
  }
}
