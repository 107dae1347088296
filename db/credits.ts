/**
 * The one place credits move. A debit is atomic, never drives the balance below zero, and is
 * recorded at most once per (workspace, idempotency key), so a retried activity or a replayed
 * request never charges twice. Debits of one workspace serialise on its account row.
 *
 * A job whose price is known only at its end reserves its maximum price up front: a `hold` (a
 * debit keyed `hold:<jobId>`, taken when the request is accepted, so concurrent requests cannot
 * all pass the balance check). Settling it is one transaction that gives the whole hold back (a
 * `release` keyed `release:<jobId>`) and debits the real charges, so a crash before, during or
 * after settling neither loses nor doubles credits; a job that fails releases its hold the same way.
 */
import { v7 as uuidv7 } from 'uuid';
import { InsufficientCreditsError } from '../domain/errors.js';
import { withTransaction, type Pool, type PoolClient, type Queryable } from './pool.js';
import { creditsDebited } from '../telemetry/metrics.js';

/** What a ledger row is (`kind` of `GET /credits/transactions`). */
export type LedgerKind = 'grant' | 'debit' | 'hold' | 'release';

export interface DebitInput {
  workspaceId: string;
  amount: number;
  idempotencyKey: string;
  reason: string;
  jobId?: string | null;
  metadata?: Record<string, unknown>;
  /** Session keys are not billed: nothing is charged or recorded. */
  billable?: boolean;
  /** `hold` for a reservation ({@link holdCredits}); default `debit`. */
  kind?: Extract<LedgerKind, 'debit' | 'hold'>;
}

export interface DebitResult {
  charged: number;
  balance: number;
  /** True when this key had already been charged (nothing charged now). */
  replayed: boolean;
}

/**
 * Debits inside the caller's open transaction (`client` after `begin`), so a charge can commit
 * or roll back together with the work it pays for. Throws `InsufficientCreditsError` (402 `insufficient_credits`).
 */
export async function debitInTransaction(client: PoolClient, input: DebitInput): Promise<DebitResult> {
  const amount = Math.trunc(input.amount);
  if (amount < 0) throw new Error('debit amount must be >= 0');
  if (input.billable === false || amount === 0) {
    return { charged: 0, balance: await getBalance(client, input.workspaceId), replayed: false };
  }
  const acct = await client.query<{ balance: number }>(
    `select balance from credit_accounts where workspace_id = $1 for update`,
    [input.workspaceId],
  );
  const balance = acct.rows[0]?.balance ?? 0;
  const prior = await client.query(`select 1 from credit_transactions where workspace_id = $1 and idempotency_key = $2`, [
    input.workspaceId,
    input.idempotencyKey,
  ]);
  if (prior.rowCount) return { charged: 0, balance, replayed: true };
  if (balance < amount) throw new InsufficientCreditsError(amount, balance);
  const after = balance - amount;
  await client.query(`update credit_accounts set balance = $2, updated_at = now() where workspace_id = $1`, [input.workspaceId, after]);
  await client.query(
    `insert into credit_transactions (id, workspace_id, amount, balance_after, reason, idempotency_key, job_id, metadata, kind)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [uuidv7(), input.workspaceId, -amount, after, input.reason, input.idempotencyKey, input.jobId ?? null, input.metadata ?? null, input.kind ?? 'debit'],
  );
  return { charged: amount, balance: after, replayed: false };
}

/** Counts a committed charge in `credits_debited_total` (a hold is a reservation, not a charge). */
function countCharged(input: Pick<DebitInput, 'reason' | 'kind'>, result: DebitResult | InsufficientCreditsError): void {
  if (!(result instanceof InsufficientCreditsError) && result.charged > 0 && (input.kind ?? 'debit') === 'debit') creditsDebited.inc({ reason: input.reason }, result.charged);
}

/**
 * A debit as one statement (one round trip instead of six; every billed discovery page pays
 * one): the UPDATE takes the account row's lock and checks `balance >= amount` on its newest
 * version, the ledger row is inserted from the UPDATE's result, the idempotency key is looked up
 * in the same statement. A debit with the same key that commits while this one waits for the
 * lock is not in this statement's snapshot: the ledger's unique (workspace, key) then fails the
 * whole statement (nothing charged), and the retry sees it (`replayed`).
 */
const DEBIT_SQL = `with prior as (
    select 1 from credit_transactions where workspace_id = $1 and idempotency_key = $2
  ), charged as (
    update credit_accounts set balance = balance - $3::bigint, updated_at = now()
    where workspace_id = $1 and balance >= $3::bigint and not exists (select 1 from prior)
    returning balance
  ), ledger as (
    insert into credit_transactions (id, workspace_id, amount, balance_after, reason, idempotency_key, job_id, metadata, kind)
    select $4, $1, -$3::bigint, balance, $5, $2, $6, $7, $8 from charged
  )
  select (select balance from charged) as after, exists (select 1 from prior) as replayed,
    (select balance from credit_accounts where workspace_id = $1) as before`;

/** Debits in a statement of its own (see DEBIT_SQL); same outcomes as {@link debitInTransaction}. */
export async function debitCredits(pool: Pool, input: DebitInput): Promise<DebitResult> {
  const result = await debitStatement(pool, input);
  countCharged(input, result);
  return result;
}

async function debitStatement(pool: Pool, input: DebitInput): Promise<DebitResult> {
  const amount = Math.trunc(input.amount);
  if (amount < 0) throw new Error('debit amount must be >= 0');
  if (input.billable === false || amount === 0) return { charged: 0, balance: await getBalance(pool, input.workspaceId), replayed: false };
  const params = [input.workspaceId, input.idempotencyKey, amount, uuidv7(), input.reason, input.jobId ?? null, input.metadata ?? null, input.kind ?? 'debit'];
  for (let attempt = 0; ; attempt++) {
    try {
      const row = (await pool.query<{ after: number | null; replayed: boolean; before: number | null }>(DEBIT_SQL, params)).rows[0]!;
      if (row.replayed) return { charged: 0, balance: row.before ?? 0, replayed: true };
      if (row.after === null) throw new InsufficientCreditsError(amount, row.before ?? 0);
      return { charged: amount, balance: row.after, replayed: false };
    } catch (e) {
      if (attempt === 0 && (e as { code?: string }).code === '23505') continue;
      throw e;
    }
  }
}

const holdKey = (jobId: string) => `hold:${jobId}`;
const releaseKey = (jobId: string) => `release:${jobId}`;

/**
 * Reserves up to `amount` for job `jobId` before it starts (402 `insufficient_credits` when the
 * balance cannot cover it). Session keys hold nothing.
 */
export function holdCredits(pool: Pool, input: { workspaceId: string; jobId: string; amount: number; reason: string; billable: boolean }): Promise<DebitResult> {
  return debitCredits(pool, { ...input, idempotencyKey: holdKey(input.jobId), kind: 'hold' });
}

/**
 * Gives job `jobId`'s hold back, once (keyed `release:<jobId>`), inside the caller's transaction.
 * Returns the credits released (0 when the job holds nothing or was already released).
 */
async function releaseHoldInTransaction(client: PoolClient, workspaceId: string, jobId: string): Promise<number> {
  await client.query(`select 1 from credit_accounts where workspace_id = $1 for update`, [workspaceId]);
  const rows = await client.query<{ idempotency_key: string; amount: number }>(
    `select idempotency_key, amount from credit_transactions where workspace_id = $1 and idempotency_key = any($2::text[])`,
    [workspaceId, [holdKey(jobId), releaseKey(jobId)]],
  );
  const hold = rows.rows.find((r) => r.idempotency_key === holdKey(jobId));
  if (!hold || rows.rows.some((r) => r.idempotency_key === releaseKey(jobId))) return 0;
  const amount = -Number(hold.amount);
  const r = await client.query<{ balance: number }>(
    `update credit_accounts set balance = balance + $2, updated_at = now() where workspace_id = $1 returning balance`,
    [workspaceId, amount],
  );
  await client.query(
    `insert into credit_transactions (id, workspace_id, amount, balance_after, reason, idempotency_key, job_id, kind) values ($1, $2, $3, $4, $5, $6, $7, 'release')`,
    [uuidv7(), workspaceId, amount, r.rows[0]!.balance, 'hold released', releaseKey(jobId), jobId],
  );
  return amount;
}

/** Releases job `jobId`'s whole hold (the job ended without settling: failed or cancelled). */
export function releaseHold(pool: Pool, workspaceId: string, jobId: string): Promise<number> {
  return withTransaction(pool, (client) => releaseHoldInTransaction(client, workspaceId, jobId));
}

export type ChargeInput = Omit<DebitInput, 'workspaceId' | 'jobId' | 'billable' | 'kind'>;

/**
 * Settles job `jobId` in one transaction: its hold (if any) is released and each charge debited
 * under its own key. Per charge: the debit's result, or the 402 error when the balance cannot
 * cover it (`InsufficientCreditsError`, only possible for a job that holds nothing). Retrying after a commit changes nothing.
 */
export async function settleJobCredits(
  pool: Pool,
  input: { workspaceId: string; jobId: string; billable: boolean; charges: ChargeInput[] },
): Promise<Array<DebitResult | InsufficientCreditsError>> {
  const results = await withTransaction(pool, async (client) => {
    await releaseHoldInTransaction(client, input.workspaceId, input.jobId);
    const out: Array<DebitResult | InsufficientCreditsError> = [];
    for (const c of input.charges) {
      try {
        out.push(await debitInTransaction(client, { ...c, workspaceId: input.workspaceId, jobId: input.jobId, billable: input.billable }));
      } catch (e) {
        // Thrown by the check above, not by PostgreSQL: the transaction is still usable.
        if (!(e instanceof InsufficientCreditsError)) throw e;
        out.push(e);
      }
    }
    return out;
  });
  input.charges.forEach((c, i) => countCharged(c, results[i]!));
  return results;
}

/**
 * Charges `unitPrice` once per key, in order, in one transaction, for as long as the balance
 * covers it: keys charged before (a retried activity) count as paid and cost nothing now; at the
 * first key the balance cannot cover, charging stops (`exhausted`). Returns the paid keys in
 * order. Session keys pay nothing and every key counts as paid.
 */
export function debitEach(
  pool: Pool,
  input: { workspaceId: string; jobId: string; billable: boolean; unitPrice: number; keys: string[]; reason: string },
): Promise<{ paid: string[]; charged: number; exhausted: boolean }> {
  if (!input.billable || input.unitPrice <= 0 || input.keys.length === 0) return Promise.resolve({ paid: [...input.keys], charged: 0, exhausted: false });
  return withTransaction(pool, async (client) => {
    const acct = await client.query<{ balance: number }>(`select balance from credit_accounts where workspace_id = $1 for update`, [input.workspaceId]);
    let balance = Number(acct.rows[0]?.balance ?? 0);
    const prior = await client.query<{ idempotency_key: string }>(
      `select idempotency_key from credit_transactions where workspace_id = $1 and idempotency_key = any($2::text[])`,
      [input.workspaceId, input.keys],
    );
    const done = new Set(prior.rows.map((r) => r.idempotency_key));
    const paid: string[] = [];
    const fresh: { key: string; after: number }[] = [];
    let exhausted = false;
    for (const key of input.keys) {
      if (done.has(key)) {
        paid.push(key);
        continue;
      }
      if (balance < input.unitPrice) {
        exhausted = true;
        break;
      }
      balance -= input.unitPrice;
      fresh.push({ key, after: balance });
      paid.push(key);
    }
    if (fresh.length) {
      await client.query(`update credit_accounts set balance = $2, updated_at = now() where workspace_id = $1`, [input.workspaceId, balance]);
      await client.query(
        `insert into credit_transactions (id, workspace_id, amount, balance_after, reason, idempotency_key, job_id, kind)
         select t.id, $1, $2, t.after, $3, t.key, $4, 'debit' from unnest($5::uuid[], $6::text[], $7::bigint[]) as t(id, key, after)`,
        [input.workspaceId, -input.unitPrice, input.reason, input.jobId, fresh.map(() => uuidv7()), fresh.map((f) => f.key), fresh.map((f) => f.after)],
      );
    }
    return { paid, charged: fresh.length * input.unitPrice, exhausted };
  });
}

export async function grantCredits(pool: Pool, workspaceId: string, amount: number, reason = 'grant'): Promise<number> {
  return withTransaction(pool, async (client) => {
    const r = await client.query<{ balance: number }>(
      `insert into credit_accounts (workspace_id, balance, updated_at) values ($1, $2, now())
       on conflict (workspace_id) do update set balance = credit_accounts.balance + excluded.balance, updated_at = now()
       returning balance`,
      [workspaceId, Math.trunc(amount)],
    );
    const balance = r.rows[0]!.balance;
    const id = uuidv7();
    await client.query(
      `insert into credit_transactions (id, workspace_id, amount, balance_after, reason, idempotency_key, kind) values ($1, $2, $3, $4, $5, $6, 'grant')`,
      [id, workspaceId, Math.trunc(amount), balance, reason, `grant:${id}`],
    );
    return balance;
  });
}

export async function getBalance(db: Queryable, workspaceId: string): Promise<number> {
  const r = await db.query<{ balance: number }>(`select balance from credit_accounts where workspace_id = $1`, [workspaceId]);
  return r.rows[0]?.balance ?? 0;
}

/** The workspace's credit account (`GET /credits/balance`), or null when it has none yet. */
export async function findCreditAccount(db: Queryable, workspaceId: string): Promise<{ balance: number; updated_at: Date } | null> {
  const r = await db.query<{ balance: number; updated_at: Date }>({
    name: 'credit-balance', // planned once per connection: a hot read
    text: `select balance, updated_at from credit_accounts where workspace_id = $1`,
    values: [workspaceId],
  });
  return r.rows[0] ?? null;
}

export interface CreditTransactionRow {
  id: string;
  kind: LedgerKind;
  amount: number;
  balance_after: number;
  reason: string;
  job_id: string | null;
  metadata: unknown;
  created_at: Date;
}

/**
 * One keyset page of the ledger (UUIDv7 ids are time-ordered, so the id alone is the keyset):
 * `limit` rows after (`next`: older) or before (`prev`: newer) the id `from.after[0]`, newest first for
 * `next`, oldest first for `prev`; from the newest row without `from`.
 */
export async function creditTransactionsPage(db: Queryable, workspaceId: string, limit: number, from?: { dir: 'next' | 'prev'; after: unknown[] }): Promise<CreditTransactionRow[]> {
  const params: unknown[] = [workspaceId, limit];
  let where = '';
  let order = 'id desc';
  if (from) {
    params.push(from.after[0]);
    where = from.dir === 'next' ? 'and id < $3' : 'and id > $3';
    if (from.dir === 'prev') order = 'id asc';
  }
  const r = await db.query<CreditTransactionRow>(`select id, kind, amount, balance_after, reason, job_id, metadata, created_at from credit_transactions where workspace_id = $1 ${where} order by ${order} limit $2`, params);
  return r.rows;
}

export async function countCreditTransactions(db: Queryable, workspaceId: string): Promise<number> {
  const r = await db.query<{ n: number }>(`select count(*)::int as n from credit_transactions where workspace_id = $1`, [workspaceId]);
  return r.rows[0]!.n;
}
