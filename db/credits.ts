/**
 * The one place credits move. A debit is atomic, never drives the balance below zero, and is
 * recorded at most once per (workspace, idempotency key), so a retried activity or a replayed
 * request never charges twice. Debits of one workspace serialise on its account row.
 */
import { v7 as uuidv7 } from 'uuid';
import { insufficientCredits } from '../domain/errors.js';
import { withTransaction, type Pool, type PoolClient, type Queryable } from './pool.js';

export interface DebitInput {
  workspaceId: string;
  amount: number;
  idempotencyKey: string;
  reason: string;
  jobId?: string | null;
  metadata?: Record<string, unknown>;
  /** Session keys are not billed: nothing is charged or recorded. */
  billable?: boolean;
}

export interface DebitResult {
  charged: number;
  balance: number;
  /** True when this key had already been charged (nothing charged now). */
  replayed: boolean;
}

/**
 * Debits inside the caller's open transaction (`client` after `begin`), so a charge can commit
 * or roll back together with the work it pays for. Throws 402 `insufficient_credits`.
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
  if (balance < amount) throw insufficientCredits(amount, balance);
  const after = balance - amount;
  await client.query(`update credit_accounts set balance = $2, updated_at = now() where workspace_id = $1`, [input.workspaceId, after]);
  await client.query(
    `insert into credit_transactions (id, workspace_id, amount, balance_after, reason, idempotency_key, job_id, metadata)
     values ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [uuidv7(), input.workspaceId, -amount, after, input.reason, input.idempotencyKey, input.jobId ?? null, input.metadata ?? null],
  );
  return { charged: amount, balance: after, replayed: false };
}

/** Debits in a transaction of its own. */
export function debitCredits(pool: Pool, input: DebitInput): Promise<DebitResult> {
  return withTransaction(pool, (client) => debitInTransaction(client, input));
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
      `insert into credit_transactions (id, workspace_id, amount, balance_after, reason, idempotency_key) values ($1, $2, $3, $4, $5, $6)`,
      [id, workspaceId, Math.trunc(amount), balance, reason, `grant:${id}`],
    );
    return balance;
  });
}

export async function getBalance(db: Queryable, workspaceId: string): Promise<number> {
  const r = await db.query<{ balance: number }>(`select balance from credit_accounts where workspace_id = $1`, [workspaceId]);
  return r.rows[0]?.balance ?? 0;
}
