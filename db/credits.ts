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
 *
 * Every movement is one `em.transactional` that first takes the account row's lock
 * (`LockMode.PESSIMISTIC_WRITE`: `select … for update`), waiting at most `CREDIT_LOCK_TIMEOUT_MS`
 * (`lock_timeout`, local to the transaction): past it the caller gets `CreditAccountBusyError`
 * (503 + `Retry-After`) instead of queueing until the statement timeout. Under the lock, the
 * ledger keys already recorded are read, the balance checked, and the entities changed; the
 * flush at commit writes them.
 */
import { v7 as uuidv7 } from 'uuid';
import { LockMode, type EntityManager } from '@mikro-orm/postgresql';
import type { Queryable } from './pool.js';
import type { InferEntity } from '@mikro-orm/core';
import { CreditAccountBusyError, InsufficientCreditsError } from '../domain/errors.js';
import { CreditAccount, CreditTransaction } from './platform.js';
import { isLockTimeout } from './pgErrors.js';
import { inWorkspace, useWorkspace } from './tenancy.js';
import { creditsDebited } from '../telemetry/metrics.js';

/** What a ledger row is (`kind` of `GET /credits/transactions`). */
export type LedgerKind = 'grant' | 'debit' | 'hold' | 'release';

type Account = InferEntity<typeof CreditAccount>;

/**
 * How long a credit movement waits for its account's row lock (behind other movements of the
 * workspace, each a few short statements) before answering `CreditAccountBusyError`; well below
 * the API's statement timeout, so a queued request gets a 503 to retry, not a 422.
 */
export const CREDIT_LOCK_TIMEOUT_MS = 2_000;

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
 * Runs `fn` in one transaction holding the lock on the workspace's account row (null when the
 * workspace has no account). The transaction's `lock_timeout` is set when it begins
 * (`set_config(…, true)`, i.e. `set local`, through the ORM's session context), so pooled
 * connections keep their default.
 */
async function onLockedAccount<T>(em: EntityManager, workspaceId: string, fn: (tx: EntityManager, account: Account | null) => Promise<T>): Promise<T> {
  const fork = em.fork();
  useWorkspace(fork, workspaceId);
  fork.setSessionContext({ variables: { lock_timeout: `${CREDIT_LOCK_TIMEOUT_MS}ms` } });
  try {
    return await fork.transactional(async (tx) => fn(tx, await tx.findOne(CreditAccount, { workspaceId }, { lockMode: LockMode.PESSIMISTIC_WRITE })));
  } catch (e) {
    if (isLockTimeout(e)) throw new CreditAccountBusyError(1);
    throw e;
  }
}

/** The ledger amounts already recorded under these keys (read under the account lock). */
async function recordedKeys(tx: EntityManager, workspaceId: string, keys: string[]): Promise<Map<string, number>> {
  const rows = await tx.find(CreditTransaction, { workspaceId, idempotencyKey: { $in: keys } }, { fields: ['idempotencyKey', 'amount'] });
  return new Map(rows.map((r) => [r.idempotencyKey, r.amount]));
}

/** Moves `amount` (negative: a charge) on the locked account and records the ledger row; written at commit. */
function record(
  tx: EntityManager,
  account: Account,
  row: { amount: number; reason: string; idempotencyKey: string; kind: LedgerKind; jobId?: string | null; metadata?: Record<string, unknown> | null; id?: string },
): number {
  const now = new Date();
  account.balance += row.amount;
  account.updatedAt = now;
  tx.create(CreditTransaction, {
    id: row.id ?? uuidv7(),
    workspaceId: account.workspaceId,
    amount: row.amount,
    balanceAfter: account.balance,
    reason: row.reason,
    idempotencyKey: row.idempotencyKey,
    jobId: row.jobId ?? null,
    metadata: row.metadata ?? null,
    kind: row.kind,
    createdAt: now,
  });
  return account.balance;
}

/** One debit under the lock: replayed when its key is recorded, else charged or `InsufficientCreditsError`. */
function debitLocked(tx: EntityManager, account: Account | null, recorded: Map<string, number>, input: DebitInput): DebitResult {
  const amount = Math.trunc(input.amount);
  const balance = account?.balance ?? 0;
  if (input.billable === false || amount === 0) return { charged: 0, balance, replayed: false };
  if (recorded.has(input.idempotencyKey)) return { charged: 0, balance, replayed: true };
  if (!account || balance < amount) throw new InsufficientCreditsError(amount, balance);
  const after = record(tx, account, { amount: -amount, reason: input.reason, idempotencyKey: input.idempotencyKey, kind: input.kind ?? 'debit', jobId: input.jobId, metadata: input.metadata });
  recorded.set(input.idempotencyKey, -amount);
  return { charged: amount, balance: after, replayed: false };
}

/** Counts a committed charge in `credits_debited_total` (a hold is a reservation, not a charge). */
function countCharged(input: Pick<DebitInput, 'reason' | 'kind'>, result: DebitResult | InsufficientCreditsError): void {
  if (!(result instanceof InsufficientCreditsError) && result.charged > 0 && (input.kind ?? 'debit') === 'debit') creditsDebited.inc({ reason: input.reason }, result.charged);
}

/**
 * Debits `amount` once per `idempotencyKey`: `InsufficientCreditsError` (402
 * `insufficient_credits`, nothing charged) when the balance cannot cover it, `replayed` when the
 * key was charged before. Session keys (`billable: false`) and zero amounts read the balance only.
 */
export async function debitCredits(em: EntityManager, input: DebitInput): Promise<DebitResult> {
  if (Math.trunc(input.amount) < 0) throw new Error('debit amount must be >= 0');
  if (input.billable === false || Math.trunc(input.amount) === 0) return { charged: 0, balance: await getBalance(em, input.workspaceId), replayed: false };
  const result = await onLockedAccount(em, input.workspaceId, async (tx, account) =>
    debitLocked(tx, account, await recordedKeys(tx, input.workspaceId, [input.idempotencyKey]), input),
  );
  countCharged(input, result);
  return result;
}

const holdKey = (jobId: string) => `hold:${jobId}`;
const releaseKey = (jobId: string) => `release:${jobId}`;

/**
 * Reserves up to `amount` for job `jobId` before it starts (402 `insufficient_credits` when the
 * balance cannot cover it). Session keys hold nothing.
 */
export function holdCredits(em: EntityManager, input: { workspaceId: string; jobId: string; amount: number; reason: string; billable: boolean }): Promise<DebitResult> {
  return debitCredits(em, { ...input, idempotencyKey: holdKey(input.jobId), kind: 'hold' });
}

/**
 * Gives job `jobId`'s hold back, once (keyed `release:<jobId>`), on the locked account.
 * Returns the credits released (0 when the job holds nothing or was already released).
 */
function releaseLocked(tx: EntityManager, account: Account | null, recorded: Map<string, number>, jobId: string): number {
  const held = recorded.get(holdKey(jobId));
  if (!account || held === undefined || recorded.has(releaseKey(jobId))) return 0;
  record(tx, account, { amount: -held, reason: 'hold released', idempotencyKey: releaseKey(jobId), kind: 'release', jobId });
  return -held;
}

/** Releases job `jobId`'s whole hold (the job ended without settling: failed or cancelled). */
export function releaseHold(em: EntityManager, workspaceId: string, jobId: string): Promise<number> {
  return onLockedAccount(em, workspaceId, async (tx, account) => releaseLocked(tx, account, await recordedKeys(tx, workspaceId, [holdKey(jobId), releaseKey(jobId)]), jobId));
}

export type ChargeInput = Omit<DebitInput, 'workspaceId' | 'jobId' | 'billable' | 'kind'>;

/**
 * Settles job `jobId` in one transaction: its hold (if any) is released and each charge debited
 * under its own key. Per charge: the debit's result, or the `InsufficientCreditsError` when the
 * balance cannot cover it (only possible for a job that holds nothing). Retrying after a commit
 * changes nothing.
 */
export async function settleJobCredits(
  em: EntityManager,
  input: { workspaceId: string; jobId: string; billable: boolean; charges: ChargeInput[] },
): Promise<Array<DebitResult | InsufficientCreditsError>> {
  const results = await onLockedAccount(em, input.workspaceId, async (tx, account) => {
    const recorded = await recordedKeys(tx, input.workspaceId, [holdKey(input.jobId), releaseKey(input.jobId), ...input.charges.map((c) => c.idempotencyKey)]);
    releaseLocked(tx, account, recorded, input.jobId);
    return input.charges.map((c) => {
      try {
        return debitLocked(tx, account, recorded, { ...c, workspaceId: input.workspaceId, jobId: input.jobId, billable: input.billable });
      } catch (e) {
        if (!(e instanceof InsufficientCreditsError)) throw e;
        return e;
      }
    });
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
  em: EntityManager,
  input: { workspaceId: string; jobId: string; billable: boolean; unitPrice: number; keys: string[]; reason: string },
): Promise<{ paid: string[]; charged: number; exhausted: boolean }> {
  if (!input.billable || input.unitPrice <= 0 || input.keys.length === 0) return Promise.resolve({ paid: [...input.keys], charged: 0, exhausted: false });
  return onLockedAccount(em, input.workspaceId, async (tx, account) => {
    const recorded = await recordedKeys(tx, input.workspaceId, input.keys);
    const paid: string[] = [];
    let charged = 0;
    for (const key of input.keys) {
      if (!recorded.has(key)) {
        if (!account || account.balance < input.unitPrice) return { paid, charged, exhausted: true };
        record(tx, account, { amount: -input.unitPrice, reason: input.reason, idempotencyKey: key, kind: 'debit', jobId: input.jobId });
        recorded.set(key, -input.unitPrice);
        charged += input.unitPrice;
      }
      paid.push(key);
    }
    return { paid, charged, exhausted: false };
  });
}

/** Adds `amount` to the workspace's balance (creating its account if it has none); returns the new balance. */
export function grantCredits(em: EntityManager, workspaceId: string, amount: number, reason = 'grant'): Promise<number> {
  return onLockedAccount(em, workspaceId, async (tx, locked) => {
    const account = locked ?? tx.create(CreditAccount, { workspaceId, balance: 0, updatedAt: new Date() });
    const id = uuidv7();
    return record(tx, account, { id, amount: Math.trunc(amount), reason, idempotencyKey: `grant:${id}`, kind: 'grant' });
  });
}

/** The balance now (0 without an account); read past the identity map, which may hold an older one. */
export async function getBalance(em: EntityManager, workspaceId: string): Promise<number> {
  return (await em.findOne(CreditAccount, { workspaceId }, { ...inWorkspace(workspaceId), fields: ['balance'], disableIdentityMap: true }))?.balance ?? 0;
}

const CREDIT_BALANCE = {
  name: 'credit-balance', // planned once per connection: a hot read
  text: `select balance, updated_at from credit_accounts where workspace_id = $1`,
};

/**
 * The workspace's credit account (`GET /credits/balance`), or null when it has none yet. Raw on
 * purpose: the hot read; em.findOne (filter, hydration) and Kysely with value conversion cost
 * 1.7-3x this named statement's CPU per request (bench/api-hotpath.ts, docs/ARCHITECTURE.md "Credits").
 */
export async function findCreditAccount(db: Queryable, workspaceId: string): Promise<{ balance: number; updatedAt: Date } | null> {
  const r = await db.query<{ balance: number; updated_at: Date }>({ ...CREDIT_BALANCE, values: [workspaceId] });
  const row = r.rows[0];
  return row ? { balance: row.balance, updatedAt: row.updated_at } : null;
}

export type CreditTransactionRow = Pick<InferEntity<typeof CreditTransaction>, 'id' | 'kind' | 'amount' | 'balanceAfter' | 'reason' | 'jobId' | 'metadata' | 'createdAt'>;

/**
 * One keyset page of the ledger (UUIDv7 ids are time-ordered, so the id alone is the keyset):
 * `limit` rows after (`next`: older) or before (`prev`: newer) the id `from.after[0]`, newest first for
 * `next`, oldest first for `prev`; from the newest row without `from`.
 */
export async function creditTransactionsPage(em: EntityManager, workspaceId: string, limit: number, from?: { dir: 'next' | 'prev'; after: unknown[] }): Promise<CreditTransactionRow[]> {
  const after = from?.after[0] as string | undefined;
  const id = from ? (from.dir === 'next' ? { id: { $lt: after } } : { id: { $gt: after } }) : {};
  return em.find(
    CreditTransaction,
    { workspaceId, ...id },
    { ...inWorkspace(workspaceId), orderBy: { id: from?.dir === 'prev' ? 'asc' : 'desc' }, limit, fields: ['id', 'kind', 'amount', 'balanceAfter', 'reason', 'jobId', 'metadata', 'createdAt'], disableIdentityMap: true },
  );
}

export async function countCreditTransactions(em: EntityManager, workspaceId: string): Promise<number> {
  return em.count(CreditTransaction, { workspaceId }, inWorkspace(workspaceId));
}
