/**
 * Platform entities: workspaces, API keys, credits, jobs and the bookkeeping tables behind
 * idempotency, rate limiting and webhook deliveries.
 */
import { defineEntity, p } from '@mikro-orm/core';
import { workspaceOwned } from './tenancy.js';

export const PLANS = ['free', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
export const KEY_KINDS = ['workspace', 'user', 'session'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

export const Workspace = defineEntity({
  name: 'Workspace',
  tableName: 'workspaces',
  properties: {
    id: p.uuid().primary(),
    name: p.string(),
    plan: p.string().$type<Plan>(),
    /** Secret for Standard Webhooks signatures (`whsec_` + base64), stored encrypted (`db/secrets.ts`). */
    webhookSecret: p.string(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});

export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: p.uuid().index(),
    kind: p.string().$type<KeyKind>(),
    /** SHA-256 of the key; the key itself is shown once and never stored. */
    keyHash: p.string().unique(),
    prefix: p.string(),
    createdAt: p.datetime().onCreate(() => new Date()),
    revokedAt: p.datetime().nullable(),
    /** Session keys only (SESSION_KEY_TTL_SECONDS after creation); past it the key is a 401. */
    expiresAt: p.datetime().nullable(),
  },
});

export const CreditAccount = defineEntity({
  name: 'CreditAccount',
  tableName: 'credit_accounts',
  filters: workspaceOwned,
  properties: {
    workspaceId: p.uuid().primary(),
    balance: p.bigint('number'),
    updatedAt: p.datetime(),
  },
});

export const CreditTransaction = defineEntity({
  name: 'CreditTransaction',
  tableName: 'credit_transactions',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: p.uuid(),
    /** Positive for grants, negative for debits. */
    amount: p.bigint('number'),
    balanceAfter: p.bigint('number'),
    reason: p.string(),
    /** Unique per workspace: the same debit key never charges twice. */
    idempotencyKey: p.string(),
    jobId: p.uuid().nullable(),
    metadata: p.json<Record<string, unknown>>().nullable(),
    /** `grant`, `debit`, `hold` or `release` (db/credits.ts). */
    kind: p.string(),
    createdAt: p.datetime(),
  },
});

export const Job = defineEntity({
  name: 'Job',
  tableName: 'jobs',
  filters: workspaceOwned,
  properties: {
    id: p.uuid().primary(),
    workspaceId: p.uuid(),
    type: p.string(),
    workflowId: p.string().unique(),
    createdAt: p.datetime(),
  },
});
