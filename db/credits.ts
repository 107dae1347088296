/**
 * The one place credits move. A debit is atomic, never drives the balance below zero, and is
 * recorded at most once per (workspace, idempotency key), so a retried activity or a replayed
 * request never charges twice. Movements of one workspace serialise on its account row.
 *
 * A job whose price is known only at its end reserves its maximum price up front: a `hold` (a
 * debit keyed `hold:<jobId>`, taken when the request is accepted, so concurrent requests cannot
 * all pass the balance check). Settling it is one statement that gives the whole hold back (a
 * `release` keyed `release:<jobId>`) and debits the real charges, so a crash before, during or
 * after settling neither loses nor doubles credits; a job that fails releases its hold the same way.
 *
 * How a movement runs ({@link move}): the account's balance and the ledger keys concerned are
 * read without a lock, a plain function plans the ledger rows from them, and ONE statement
 * ({@link APPLY_MOVEMENT}) applies the plan if the account still allows it. That statement takes
 * the account row's lock and releases it when it ends: no lock is ever held across a round trip
 * to the application. (Under the entity manager's `select … for update` + flush + commit, four
 * round trips of a busy Node process under the lock, `bench/enrichment.ts --jobs 400` queued 37
 * of 40 connections on that row and accept p50 went from 0.37 s to 6.5 s on the same machine.)
 * When the account changed in a way the plan depends on, the statement changes nothing and the
 * movement is planned again from a fresh read. Waiting for the lock is bounded by
 * `CREDIT_LOCK_TIMEOUT_MS`; past it, or after `MAX_PLANS` plans that the account kept
 * invalidating, the caller gets `CreditAccountBusyError` (503 + `Retry-After`).
 */
import DataLoader from 'dataloader';
import { v7 as uuidv7 } from 'uuid';
import { LockMode, type EntityManager, type InferKyselyDB } from '@mikro-orm/postgresql';
import type { Queryable } from './pool.js';
import type { InferEntity } from '@mikro-orm/core';
import { CreditAccountBusyError, InsufficientCreditsError } from '../domain/errors.js';
import { CreditAccount, CreditTransaction } from './platform.js';
import { isLockTimeout, isUniqueViolation } from './pgErrors.js';
import { sql } from 'kysely';
import { BATCH_PER_TURN, preparedQuery, textArray, typedQueries, uuidArray, type RowOf } from './sqlFragments.js';
import { assertWorkspaceScope, inWorkspace, inWorkspaceScope, useWorkspace, withoutTenancy } from './tenancy.js';
import { creditsDebited } from '../telemetry/metrics.js';

/** What a ledger row is (`kind` of `GET /credits/transactions`). */
export type LedgerKind = 'grant' | 'debit' | 'hold' | 'release';

/**
 * How long a credit movement waits for its account's row lock (behind other movements of the
 * workspace, each one short statement) before answering `CreditAccountBusyError`; well below
 * the API's statement timeout, so a queued request gets a 503 to retry, not a 422.
 */
export const CREDIT_LOCK_TIMEOUT_MS = 2_000;

/** Plans a movement may go through when concurrent movements keep changing what it depends on. */
const MAX_PLANS = 8;

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

/** What a plan is made from: the balance (0 without an account) and the amounts recorded under the keys asked for. */
interface AccountState {
  balance: number;
  recorded: Map<string, number>;
}

interface LedgerEntry {
  amount: number;
  reason: string;
  idempotencyKey: string;
  kind: LedgerKind;
  jobId?: string | null;
  metadata?: Record<string, unknown> | null;
}

interface Plan<T> {
  /** Ledger rows to write, in order (may be none). */
  entries: LedgerEntry[];
  /**
   * True when the plan refused something for want of credits: it then holds only at exactly the
   * balance it was made from. Otherwise it holds at any balance that covers its total.
   */
  dependsOnBalance?: boolean;
  /** The outcome, given the balance after each entry. */
  result: (balances: number[]) => T;
}

/**
 * The plan's read: the balance and the amounts recorded under the keys, two scalar subqueries in
 * one round trip (see applyPlan), compiled once and kept as a named statement.
 */
const READ_ACCOUNT = preparedQuery(
  (p: { keys: string[] }) =>
    typedQueries<InferKyselyDB<typeof CreditAccount | typeof CreditTransaction>>().selectNoFrom((eb) => [
      eb.selectFrom('credit_accounts').select('balance').as('balance'),
      eb
        .selectFrom('credit_transactions')
        .select(sql<Record<string, string | number>>`coalesce(jsonb_object_agg(idempotency_key, amount), '{}')`.as('recorded'))
        .where('idempotency_key', '=', sql<string>`any(${textArray(p.keys)})`)
        .as('recorded'),
    ]),
  'credit-movement-read',
);

/**
 * Applies a plan in one statement (raw SQL: a data-modifying CTE fed by `unnest … with ordinality`
 * and a running sum, beyond the entity manager; kept as a named statement, planned once per
 * connection). The UPDATE takes the account row's lock, and PostgreSQL re-checks its conditions
 * on the newest row version after any wait: the total must keep the balance >= 0, the balance
 * must equal $3 when the plan depends on it, and none of the keys it writes may be recorded. The
 * ledger rows are inserted from the UPDATE's result with their running `balance_after`, so only
 * once the lock is held: each draws its `seq` (the ledger's order, in plan order) and its
 * `created_at` (`clock_timestamp()`, the column's default) then, and the movements of a workspace
 * list in the order they were applied (`now()` and an id picked before the statement are the time
 * it was sent, before it queued for the lock). A
 * movement with the same key that commits while this one waits is not in this statement's
 * snapshot: the ledger's unique (workspace, key) then fails the whole statement (nothing moves)
 * and the next plan sees the key. `lock_timeout` is set by an init-plan of the same statement
 * (`set_config(…, true)`: until the statement's implicit transaction ends), which runs before the
 * row can be locked, so pooled connections keep their default and no extra round trip is made.
 */
const APPLY_MOVEMENT = {
  name: 'credit-movement-apply',
  text: `with moved as (
    update credit_accounts set balance = balance + $1::bigint, updated_at = clock_timestamp()
    where (select set_config('lock_timeout', $2, true)) is not null
      and balance + $1::bigint >= 0
      and ($3::bigint is null or balance = $3::bigint)
      and not exists (select 1 from credit_transactions where idempotency_key = any($7::text[]))
    returning balance
  ), ledger as (
    insert into credit_transactions (id, amount, balance_after, reason, idempotency_key, job_id, metadata, kind)
    select e.id, e.amount, moved.balance - $1::bigint + sum(e.amount) over (order by e.ord), e.reason, e.key, e.job_id, e.metadata, e.kind
    from moved, unnest($4::uuid[], $5::bigint[], $6::text[], $7::text[], $8::uuid[], $9::jsonb[], $10::text[])
      with ordinality as e(id, amount, reason, key, job_id, metadata, kind, ord)
    order by e.ord
  )
  select balance from moved`,
};

async function readAccount(db: Queryable, keys: string[]): Promise<AccountState> {
  const row = (await READ_ACCOUNT(db, { keys }))[0]!; // `recorded` is never null (coalesce)
  return { balance: row.balance ?? 0, recorded: new Map(Object.entries(row.recorded!).map(([k, v]) => [k, Number(v)])) };
}

/** Balances after each entry, or null when the account no longer allows the plan (nothing changed). */
// Raw SQL: the named statement APPLY_MOVEMENT (above).
async function applyPlan(db: Queryable, state: AccountState, plan: Plan<unknown>): Promise<number[] | null> {
  const total = plan.entries.reduce((sum, e) => sum + e.amount, 0);
  const column = <K extends keyof LedgerEntry>(k: K) => plan.entries.map((e) => e[k] ?? null);
  try {
    const r = await db.query<{ balance: number }>({
      ...APPLY_MOVEMENT,
      values: [
        total,
        `${CREDIT_LOCK_TIMEOUT_MS}ms`,
        plan.dependsOnBalance ? state.balance : null,
        plan.entries.map(() => uuidv7()),
        column('amount'),
        column('reason'),
        column('idempotencyKey'),
        column('jobId'),
        plan.entries.map((e) => (e.metadata ? JSON.stringify(e.metadata) : null)),
        column('kind'),
      ],
    });
    const after = r.rows[0]?.balance;
    if (after === undefined) return null;
    let balance = after - total;
    return plan.entries.map((e) => (balance += e.amount));
  } catch (e) {
    if (isLockTimeout(e)) throw new CreditAccountBusyError(1);
    if (isUniqueViolation(e)) return null;
    throw e;
  }
}

/** Reads the account, plans, applies; plans again from a fresh read while the account invalidates the plan. */
async function move<T>(db: Queryable, workspaceId: string, keys: string[], plan: (state: AccountState) => Plan<T>): Promise<T> {
  assertWorkspaceScope(workspaceId);
  for (let attempt = 0; attempt < MAX_PLANS; attempt++) {
    const state = await readAccount(db, keys);
    const p = plan(state);
    if (p.entries.length === 0) return p.result([]);
    const balances = await applyPlan(db, state, p);
    if (balances) return p.result(balances);
  }
  throw new CreditAccountBusyError(1);
}

/** One debit on `state` (its entries appended to `entries`): replayed when its key is recorded, else charged or `InsufficientCreditsError`. */
function planDebit(state: AccountState, entries: LedgerEntry[], input: DebitInput): { result: (balances: number[]) => DebitResult } | InsufficientCreditsError {
  const amount = Math.trunc(input.amount);
  const balance = state.balance + entries.reduce((sum, e) => sum + e.amount, 0);
  if (state.recorded.has(input.idempotencyKey)) return { result: () => ({ charged: 0, balance, replayed: true }) };
  if (balance < amount) return new InsufficientCreditsError(amount, balance);
  const index = entries.push(debitEntry(input)) - 1;
  return { result: (balances) => ({ charged: amount, balance: balances[index]!, replayed: false }) };
}

/** The ledger entry of a debit. */
const debitEntry = (input: DebitInput): LedgerEntry => ({
  amount: -Math.trunc(input.amount),
  reason: input.reason,
  idempotencyKey: input.idempotencyKey,
  kind: input.kind ?? 'debit',
  jobId: input.jobId,
  metadata: input.metadata,
});

/** Counts a committed charge in `credits_debited_total` (a hold is a reservation, not a charge). */
function countCharged(input: Pick<DebitInput, 'reason' | 'kind'>, result: DebitResult | InsufficientCreditsError): void {
  if (!(result instanceof InsufficientCreditsError) && result.charged > 0 && (input.kind ?? 'debit') === 'debit') creditsDebited.inc({ reason: input.reason }, result.charged);
}

/**
 * Debits `amount` once per `idempotencyKey`: `InsufficientCreditsError` (402
 * `insufficient_credits`, nothing charged) when the balance cannot cover it, `replayed` when the
 * key was charged before. Session keys (`billable: false`) and zero amounts read the balance only.
 */
export async function debitCredits(db: Queryable, input: DebitInput): Promise<DebitResult> {
  if (Math.trunc(input.amount) < 0) throw new Error('debit amount must be >= 0');
  assertWorkspaceScope(input.workspaceId);
  if (input.billable === false || Math.trunc(input.amount) === 0) return { charged: 0, balance: (await findCreditAccount(db, input.workspaceId))?.balance ?? 0, replayed: false };
  // Most debits are under a key never charged before (a search's own UUID) and covered by the
  // balance: applied straight away, that is one round trip instead of a read and a write. The
  // statement itself refuses a recorded key or a balance that cannot cover it (nothing moves);
  // the plan below then reads the account and tells which (replay or 402).
  const applied = await applyPlan(db, { balance: 0, recorded: new Map() }, { entries: [debitEntry(input)], result: () => undefined });
  if (applied) {
    const charged = { charged: Math.trunc(input.amount), balance: applied[0]!, replayed: false };
    countCharged(input, charged);
    return charged;
  }
  const result = await move<DebitResult | InsufficientCreditsError>(db, input.workspaceId, [input.idempotencyKey], (state) => {
    const entries: LedgerEntry[] = [];
    const debit = planDebit(state, entries, input);
    return { entries, result: debit instanceof InsufficientCreditsError ? () => debit : debit.result };
  });
  if (result instanceof InsufficientCreditsError) throw result;
  countCharged(input, result);
  return result;
}

const holdKey = (jobId: string) => `hold:${jobId}`;
const releaseKey = (jobId: string) => `release:${jobId}`;

/**
 * Reserves up to `amount` for job `jobId` before it starts (402 `insufficient_credits` when the
 * balance cannot cover it). Session keys hold nothing.
 */
export function holdCredits(db: Queryable, input: { workspaceId: string; jobId: string; amount: number; reason: string; billable: boolean }): Promise<DebitResult> {
  return debitCredits(db, { ...input, idempotencyKey: holdKey(input.jobId), kind: 'hold' });
}

/** Gives job `jobId`'s hold back, once (keyed `release:<jobId>`): the entry, or none when it holds nothing or was released. */
function planRelease(state: AccountState, jobId: string): LedgerEntry[] {
  const held = state.recorded.get(holdKey(jobId));
  if (held === undefined || state.recorded.has(releaseKey(jobId))) return [];
  return [{ amount: -held, reason: 'hold released', idempotencyKey: releaseKey(jobId), kind: 'release', jobId }];
}

/** Releases job `jobId`'s whole hold (the job ended without settling: failed or cancelled); returns the credits released. */
export function releaseHold(db: Queryable, workspaceId: string, jobId: string): Promise<number> {
  return move(db, workspaceId, [holdKey(jobId), releaseKey(jobId)], (state) => {
    const entries = planRelease(state, jobId);
    return { entries, result: () => entries[0]?.amount ?? 0 };
  });
}

export type ChargeInput = Omit<DebitInput, 'workspaceId' | 'jobId' | 'billable' | 'kind'>;

/**
 * Settles job `jobId` in one statement: its hold (if any) is released and each charge debited
 * under its own key. Per charge: the debit's result, or the `InsufficientCreditsError` when the
 * balance cannot cover it (only possible for a job that holds nothing). Retrying after a commit
 * changes nothing.
 */
export async function settleJobCredits(
  db: Queryable,
  input: { workspaceId: string; jobId: string; billable: boolean; charges: ChargeInput[] },
): Promise<Array<DebitResult | InsufficientCreditsError>> {
  const keys = [holdKey(input.jobId), releaseKey(input.jobId), ...input.charges.map((c) => c.idempotencyKey)];
  const results = await move(db, input.workspaceId, keys, (state) => {
    const entries = planRelease(state, input.jobId);
    let dependsOnBalance = false;
    const outcomes = input.charges.map((c) => {
      const amount = Math.trunc(c.amount);
      if (!input.billable || amount === 0) return { result: () => ({ charged: 0, balance: state.balance, replayed: false }) };
      const debit = planDebit(state, entries, { ...c, workspaceId: input.workspaceId, jobId: input.jobId });
      if (debit instanceof InsufficientCreditsError) dependsOnBalance = true;
      return debit;
    });
    return {
      entries,
      dependsOnBalance,
      result: (balances) => outcomes.map((o) => (o instanceof InsufficientCreditsError ? o : o.result(balances))),
    };
  });
  input.charges.forEach((c, i) => countCharged(c, results[i]!));
  return results;
}

/**
 * Charges `unitPrice` once per key, in order, in one statement, for as long as the balance
 * covers it: keys charged before (a retried activity) count as paid and cost nothing now; at the
 * first key the balance cannot cover, charging stops (`exhausted`). Returns the paid keys in
 * order. Session keys pay nothing and every key counts as paid.
 */
export function debitEach(
  db: Queryable,
  input: { workspaceId: string; jobId: string; billable: boolean; unitPrice: number; keys: string[]; reason: string },
): Promise<{ paid: string[]; charged: number; exhausted: boolean }> {
  if (!input.billable || input.unitPrice <= 0 || input.keys.length === 0) return Promise.resolve({ paid: [...input.keys], charged: 0, exhausted: false });
  return move<{ paid: string[]; charged: number; exhausted: boolean }>(db, input.workspaceId, input.keys, (state) => {
    const entries: LedgerEntry[] = [];
    const paid: string[] = [];
    for (const key of input.keys) {
      const debit = planDebit(state, entries, { workspaceId: input.workspaceId, amount: input.unitPrice, idempotencyKey: key, reason: input.reason, jobId: input.jobId });
      if (debit instanceof InsufficientCreditsError) {
        return { entries, dependsOnBalance: true, result: () => ({ paid, charged: entries.length * input.unitPrice, exhausted: true }) };
      }
      paid.push(key);
    }
    return { entries, result: () => ({ paid, charged: entries.length * input.unitPrice, exhausted: false }) };
  });
}

/**
 * Adds `amount` to the workspace's balance, creating its account if it has none; returns the new
 * balance. Rare (workspace creation, `npm run admin`): an entity-manager transaction holding the
 * account's row lock (`PESSIMISTIC_WRITE`) while it creates or updates the account and its ledger row.
 */
export async function grantCredits(em: EntityManager, workspaceId: string, amount: number, reason = 'grant'): Promise<number> {
  const fork = em.fork();
  useWorkspace(fork, workspaceId);
  return fork.transactional(async (tx) => {
    const now = new Date();
    const account = (await tx.findOne(CreditAccount, { workspaceId }, { lockMode: LockMode.PESSIMISTIC_WRITE })) ?? tx.create(CreditAccount, { workspaceId, balance: 0, updatedAt: now });
    account.balance += Math.trunc(amount);
    account.updatedAt = now;
    const id = uuidv7();
    tx.create(CreditTransaction, {
      id,
      workspaceId,
      amount: Math.trunc(amount),
      balanceAfter: account.balance,
      reason,
      idempotencyKey: `grant:${id}`,
      jobId: null,
      metadata: null,
      kind: 'grant',
      // createdAt and seq: drawn at insert (flush), under the lock, as every movement's.
    });
    return account.balance;
  });
}

/** The balance now (0 without an account); read past the identity map, which may hold an older one. */
export async function getBalance(em: EntityManager, workspaceId: string): Promise<number> {
  return (await em.findOne(CreditAccount, { workspaceId }, { ...inWorkspace(workspaceId), fields: ['balance'], disableIdentityMap: true }))?.balance ?? 0;
}

const creditAccounts = () => typedQueries<InferKyselyDB<typeof CreditAccount>>().selectFrom('credit_accounts').select(['workspace_id', 'balance', 'updated_at']);
/**
 * Hot reads: built and compiled once, named statements each connection plans once. The one for a
 * single workspace has no parameter: row-level security's condition on the session's workspace is
 * its index condition (an `= any` array parameter is planned anew on every call); the array one,
 * across workspaces, for the batches of several (`createBalanceReader`).
 */
const creditBalance = preparedQuery(() => creditAccounts(), 'credit-balance');
const creditBalances = preparedQuery(
  (p: { workspaceIds: string[] }) => creditAccounts().where((eb) => eb('workspace_id', '=', eb.fn.any(uuidArray(p.workspaceIds)))),
  'credit-balances',
);

export interface CreditAccountRead {
  balance: number;
  updatedAt: Date;
}
const accountOf = (row: RowOf<typeof creditBalance>): CreditAccountRead => ({ balance: row.balance, updatedAt: row.updated_at });

/** The workspace's credit account, or null when it has none yet. */
export async function findCreditAccount(db: Queryable, workspaceId: string): Promise<CreditAccountRead | null> {
  assertWorkspaceScope(workspaceId);
  const [row] = await creditBalance(db, {});
  return row ? accountOf(row) : null;
}

/** Reads a workspace's credit account, or null; see `createBalanceReader`. */
export type BalanceReader = (workspaceId: string) => Promise<CreditAccountRead | null>;

/**
 * `findCreditAccount` for `GET /credits/balance` under load, as `createContactReader` does for
 * contacts: the reads of the requests that reach it in one turn of the event loop go to
 * PostgreSQL as one statement (DataLoader, batched at `setImmediate`), the largest single cost of
 * a hot read being the statement's round trip. Nothing is cached: every read sees what was
 * committed when its batch ran, which is after its request arrived.
 */
export function createBalanceReader(db: Queryable): BalanceReader {
  const loader = new DataLoader<string, CreditAccountRead | null>(
    async (workspaceIds) => {
      const distinct = [...new Set(workspaceIds)];
      // A batch holds the reads of several requests: one workspace reads in its scope; several, in one
      // statement keyed by their ids, across workspaces.
      const rows =
        distinct.length === 1
          ? await inWorkspaceScope(distinct[0]!, () => creditBalance(db, {}))
          : await withoutTenancy('balances of the requests of one event-loop turn, each by its workspace id', () => creditBalances(db, { workspaceIds: distinct }));
      const byWorkspace = new Map(rows.map((r) => [r.workspace_id, accountOf(r)]));
      return workspaceIds.map((id) => byWorkspace.get(id) ?? null);
    },
    BATCH_PER_TURN,
  );
  return (workspaceId) => loader.load(workspaceId);
}

export type CreditTransactionRow = Pick<InferEntity<typeof CreditTransaction>, 'id' | 'seq' | 'kind' | 'amount' | 'balanceAfter' | 'reason' | 'jobId' | 'metadata' | 'createdAt'>;

/**
 * One keyset page of the ledger in the order movements were applied (`seq`, the keyset): `limit`
 * rows after (`next`: older) or before (`prev`: newer) the `seq` `from.after[0]`, newest first for
 * `next`, oldest first for `prev`; from the newest row without `from`.
 */
export async function creditTransactionsPage(em: EntityManager, workspaceId: string, limit: number, from?: { dir: 'next' | 'prev'; after: unknown[] }): Promise<CreditTransactionRow[]> {
  const after = from?.after[0] as number | undefined;
  const seq = from ? (from.dir === 'next' ? { seq: { $lt: after } } : { seq: { $gt: after } }) : {};
  return em.find(
    CreditTransaction,
    { workspaceId, ...seq },
    { ...inWorkspace(workspaceId), orderBy: { seq: from?.dir === 'prev' ? 'asc' : 'desc' }, limit, fields: ['id', 'seq', 'kind', 'amount', 'balanceAfter', 'reason', 'jobId', 'metadata', 'createdAt'], disableIdentityMap: true },
  );
}

export async function countCreditTransactions(em: EntityManager, workspaceId: string): Promise<number> {
  return em.count(CreditTransaction, { workspaceId }, inWorkspace(workspaceId));
}
