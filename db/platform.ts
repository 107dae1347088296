/**
 * Platform entities: workspaces, API keys, credits, jobs and the bookkeeping tables behind
 * idempotency and webhook deliveries (Migration20261121000000_platform and later).
 */
import { defineEntity, p } from '@mikro-orm/core';
import { SCOPED_WORKSPACE_ID, workspaceOwned } from './tenancy.js';

export const PLANS = ['free', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
export const KEY_KINDS = ['workspace', 'user', 'session'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

/**
 * `auth_changed` notifications (Migration20261124110000_auth_change_notify): API processes drop
 * cached keys when a key or workspace row changes. The triggers share one function,
 * `notify_auth_changed()`, created by the migration; declared here as raw DDL (`expression`), so
 * the ORM neither drops them nor generates a function per trigger. The TRUNCATE triggers
 * (`*_auth_truncated`) are not listed: PostgreSQL's `information_schema.triggers`, which the
 * ORM's introspection reads, does not show TRUNCATE triggers, so they live in the migration only.
 */
const authChangedTrigger = (table: string) => ({
  name: `${table}_auth_changed`,
  timing: 'after' as const,
  events: ['update' as const, 'delete' as const],
  expression: `create trigger ${table}_auth_changed after update or delete on ${table} for each row execute function notify_auth_changed()`,
});

export const Workspace = defineEntity({
  name: 'Workspace',
  tableName: 'workspaces',
  properties: {
    id: p.uuid().primary(),
    name: p.text(),
    plan: p.text().$type<Plan>(),
    /** Secret for Standard Webhooks signatures (`whsec_` + base64), stored encrypted (`db/secrets.ts`). */
    webhookSecret: p.text(),
    createdAt: p.datetime().defaultRaw('now()').onCreate(() => new Date()),
  },
  checks: [{ name: 'workspaces_plan_check', expression: `plan in ('free','pro','enterprise')` }],
  triggers: [authChangedTrigger('workspaces')],
});

/**
 * The workspace column of a workspace-owned table: `workspace_id uuid not null references
 * workspaces(id) on delete cascade`, defaulting to the session's workspace (`SCOPED_WORKSPACE_ID`);
 * `indexed`: with an index of its own, named as PostgreSQL names it (`<table>_<column>_index`).
 */
export const workspaceId = (table: string, { indexed = false } = {}) => {
  const column = 'workspace_id';
  const property = p.manyToOne(Workspace).mapToPk().fieldName(column).deleteRule('cascade').foreignKeyName(`${table}_${column}_fkey`).defaultRaw(SCOPED_WORKSPACE_ID);
  return indexed ? property.index(`${table}_${column}_index`) : property;
};

export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('api_keys', { indexed: true }),
    kind: p.text().$type<KeyKind>(),
    /** SHA-256 of the key; the key itself is shown once and never stored. */
    keyHash: p.text().unique('api_keys_key_hash_key'),
    prefix: p.text(),
    createdAt: p.datetime().defaultRaw('now()'),
    revokedAt: p.datetime().nullable(),
    /** Session keys only (SESSION_KEY_TTL_SECONDS after creation); past it the key is a 401. */
    expiresAt: p.datetime().nullable(),
  },
  checks: [{ name: 'api_keys_kind_check', expression: `kind in ('workspace','user','session')` }],
  triggers: [authChangedTrigger('api_keys')],
});

export const CreditAccount = defineEntity({
  name: 'CreditAccount',
  tableName: 'credit_accounts',
  filters: workspaceOwned,
  properties: {
    // The primary key is the FK: no `on update cascade` (the ORM's default for one).
    workspaceId: workspaceId('credit_accounts').primary().updateRule('no action'),
    balance: p.bigint('number').defaultRaw('0'),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
  checks: [{ name: 'credit_accounts_balance_check', expression: 'balance >= 0' }],
});

export const CreditTransaction = defineEntity({
  name: 'CreditTransaction',
  tableName: 'credit_transactions',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('credit_transactions'),
    /** Positive for grants, negative for debits. */
    amount: p.bigint('number'),
    balanceAfter: p.bigint('number'),
    reason: p.text(),
    /** Unique per workspace: the same debit key never charges twice. */
    idempotencyKey: p.text(),
    jobId: p.uuid().nullable(),
    metadata: p.json<Record<string, unknown>>().nullable(),
    /** When it was applied: the clock at insert (under the account's lock), not the transaction's start. */
    createdAt: p.datetime().defaultRaw('clock_timestamp()'),
    /** `grant`, `debit`, `hold` or `release` (db/credits.ts). */
    kind: p.text().$type<'grant' | 'debit' | 'hold' | 'release'>().default('debit'),
    /**
     * The order movements were applied in: drawn from a sequence at insert, which happens under
     * the account row's lock, so within a workspace a later movement has a greater `seq` (and
     * `balance_after` follows from the one before). The ledger is listed and paged by it.
     */
    seq: p.bigint('number').autoincrement(),
  },
  uniques: [{ name: 'credit_transactions_workspace_id_idempotency_key_key', properties: ['workspaceId', 'idempotencyKey'] }],
  indexes: [{ name: 'credit_transactions_ws_seq', properties: ['workspaceId', 'seq'] }],
  checks: [{ name: 'credit_transactions_kind', expression: `kind in ('grant','debit','hold','release')` }],
});

export const Job = defineEntity({
  name: 'Job',
  tableName: 'jobs',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('jobs'),
    type: p.text(),
    workflowId: p.text().unique('jobs_workflow_id_key'),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [{ name: 'jobs_ws_created', expression: 'create index jobs_ws_created on jobs(workspace_id, created_at desc)' }],
});

/** One `Idempotency-Key` of a workspace: claimed by the first request, completed with its response. */
export const IdempotencyRecord = defineEntity({
  name: 'IdempotencyRecord',
  tableName: 'idempotency_records',
  filters: workspaceOwned,
  properties: {
    workspaceId: workspaceId('idempotency_records').primary(),
    idempotencyKey: p.text().primary(),
    method: p.text(),
    path: p.text(),
    /** What the key is bound to (method, path, body or file hash). */
    requestHash: p.text(),
    /** The first response, once completed (null while the first request runs). */
    status: p.integer().nullable(),
    /**
     * Its body as sent: the JSON text, kept as text so that a replay answers it byte for byte
     * (`jsonb` would normalise it: key order, whitespace).
     */
    responseBody: p.text().nullable(),
    responseHeaders: p.json<Record<string, string>>().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
    completedAt: p.datetime().nullable(),
  },
  indexes: [{ name: 'idempotency_records_ws_created', properties: ['workspaceId', 'createdAt'] }],
});

/** One attempt to deliver a job webhook (`GET /jobs/{id}` lists them). */
export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: workspaceId('webhook_deliveries'),
    jobId: p.uuid(),
    /** Standard Webhooks `webhook-id`: the same for every attempt of one event. */
    messageId: p.text(),
    attempt: p.integer(),
    url: p.text(),
    /** The receiver's status; null when no response came (`error` says why). */
    statusCode: p.integer().nullable(),
    error: p.text().nullable(),
    durationMs: p.integer(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
  indexes: [
    { name: 'webhook_deliveries_job', properties: ['jobId', 'createdAt'] },
    // The retention purge (db/retention.ts).
    { name: 'webhook_deliveries_created', properties: ['createdAt'] },
  ],
});

/** An API process, announced by its heartbeat (api/replicas.ts; Migration20261129000000_api_replicas). */
export const ApiReplica = defineEntity({
  name: 'ApiReplica',
  tableName: 'api_replicas',
  properties: {
    id: p.uuid().primary(),
    startedAt: p.datetime().defaultRaw('now()'),
    seenAt: p.datetime().defaultRaw('now()'),
  },
});
