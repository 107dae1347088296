/**
 * Tenancy by default (db/tenancy.ts): every entity with a `workspaceId` carries the `workspace`
 * filter; under workspace A's parameter an entity-manager read returns none of workspace B's rows,
 * the SQL it sends names `workspace_id`, and a read where no workspace was set throws. Rows are
 * written for real in two workspaces of a freshly migrated database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import type { EntityMetadata, EntityProperty } from '@mikro-orm/core';
import { openDatabase, type Database } from '../../db/orm.js';
import { WORKSPACE_FILTER, useWorkspace, acrossWorkspaces } from '../../db/tenancy.js';
import { cloneTestDatabase, dropTestDatabase } from '../harness.js';
import { loadConfig } from '../../domain/config.js';
import { keyringOf } from '../../domain/keyring.js';
import { createWorkspace } from '../../db/workspaces.js';
import { MockActivityEnvironment } from '@temporalio/testing';
import { activityInterceptors } from '../../worker/worker.js';
import { ApiKey } from '../../db/platform.js';

/**
 * Entities with a `workspaceId` that are global on purpose: none. (Workspace rows themselves have
 * no `workspaceId`; rows owned through another entity — contact_sources through its source — are
 * reached through that entity's scoped read.)
 */
const OPT_OUT = new Set<string>([]);

/** Values the generic filler cannot guess: columns under CHECK constraints. */
const VALID: Record<string, Record<string, unknown>> = {
  ApiKey: { kind: 'workspace' },
  Contact: { status: 'active' },
  CustomFieldDefinition: { type: 'string' },
  Source: { sourceType: 'importFromWebhook', refreshStatus: null },
  Integration: { provider: 'microblog', status: 'connected' },
  Post: { status: 'draft' },
  PostSchedule: { status: 'scheduled' },
  PublishAttempt: { state: 'pending' },
  CreditTransaction: { kind: 'grant' },
  OAuthState: { provider: 'microblog', appSource: 'operator' },
  OAuthApp: { network: 'microblog' },
  SuppressionEntry: { kind: 'email', reason: 'erasure' },
  BulkEnrichmentJob: { state: 'running' },
  BulkEnrichmentRow: { status: 'pending' },
  WebhookSubscription: { status: 'active' },
  WebhookEventDelivery: { status: 'pending' },
  AuditEvent: { actorKind: 'workspace' },
};

let db: Database;
let dbName: string;
const workspaces: string[] = [];
const sql: string[] = [];

/** A value of the property's column type; nullable columns get null, the workspace column `workspaceId`. */
function valueFor(meta: EntityMetadata, prop: EntityProperty, workspaceId: string, n: number): unknown {
  if (prop.name === 'workspaceId') return workspaceId;
  const valid = VALID[meta.className];
  if (valid && Object.hasOwn(valid, prop.name)) return valid[prop.name];
  if (prop.nullable && !prop.primary) return null;
  if (prop.autoincrement) return undefined;
  const column = (prop.columnTypes?.[0] ?? '').toLowerCase();
  if (column.endsWith('[]')) return [];
  if (column === 'uuid') return uuidv7();
  if (column.startsWith('timestamp')) return new Date();
  if (column === 'date') return '2026-01-01';
  if (column === 'jsonb' || column === 'json') return {};
  if (column === 'boolean') return false;
  if (column === 'bytea') return Buffer.alloc(8);
  if (/^(int|integer|smallint|bigint|numeric|double|real)/.test(column)) return n;
  return `${meta.className}-${n}-${uuidv7()}`;
}

beforeAll(async () => {
  const clone = await cloneTestDatabase('tenancy');
  dbName = clone.name;
  db = await openDatabase(clone.url, { max: 2 }, { debug: ['query'], logger: (message: string) => sql.push(message) });
  const keyring = keyringOf(loadConfig());
  for (const name of ['A', 'B']) workspaces.push((await createWorkspace(db.orm.em, { name, keyring })).workspaceId);
}, 60_000);
afterAll(async () => {
  await db?.close();
  if (dbName) await dropTestDatabase(dbName);
});

const allEntities = () => [...db.orm.getMetadata().getAll().values()].filter((m) => !m.embeddable && !m.virtual);
const filtered = () => allEntities().filter((m) => m.properties.workspaceId && !OPT_OUT.has(m.className));

it('puts the workspace filter on every entity with a workspaceId, or lists it as an opt-out', () => {
  const owned = allEntities().filter((m) => m.properties.workspaceId);
  expect(owned.length).toBeGreaterThan(10);
  const missing = owned.filter((m) => !OPT_OUT.has(m.className) && !(m.filters?.[WORKSPACE_FILTER]?.default === true));
  expect(missing.map((m) => m.className)).toEqual([]);
});

describe('an entity-manager read of each workspace-owned entity', () => {
  beforeAll(async () => {
    // Rows of both workspaces, inserted as-is: parent rows other than the workspace (a post's
    // integration, a schedule's post) are not what this test is about, so FK triggers are off
    // for this one transaction (`session_replication_role`); CHECK constraints still apply.
    const em = db.orm.em.fork();
    await em.transactional(async (tx) => {
      await tx.execute('set local session_replication_role = replica', [], 'run');
      for (const meta of filtered()) {
        // credit_accounts: one row per workspace, created with it.
        if (meta.tableName === 'credit_accounts') continue;
        for (const [i, workspaceId] of workspaces.entries()) {
          const row: Record<string, unknown> = {};
          for (const prop of meta.props) {
            const value = prop.fieldNames?.length && prop.persist !== false ? valueFor(meta, prop, workspaceId, i + 1) : undefined;
            if (value !== undefined) row[prop.name] = value;
          }
          await tx.insert(meta.class, row as never);
        }
      }
    });
  }, 60_000);

  it('returns only the current workspace rows, with workspace_id in its SQL', async () => {
    const [a, b] = workspaces as [string, string];
    const leaks: string[] = [];
    for (const meta of filtered()) {
      const em = db.orm.em.fork();
      useWorkspace(em, a);
      sql.length = 0;
      const rows = (await em.find(meta.class, {})) as { workspaceId: string }[];
      expect(rows.length, meta.className).toBeGreaterThan(0);
      if (rows.some((r) => r.workspaceId !== a)) leaks.push(meta.className);
      const select = sql.find((s) => /select/i.test(s) && s.includes(meta.tableName));
      expect(select, `${meta.className}: ${sql.join('\n')}`).toMatch(/workspace_id/);
      // The same rows exist for B: the filter, not an empty table, kept them out.
      const all = (await em.find(meta.class, {}, acrossWorkspaces)) as { workspaceId: string }[];
      expect(all.some((r) => r.workspaceId === b), meta.className).toBe(true);
    }
    expect(leaks).toEqual([]);
  });

  it('throws where no workspace was set', async () => {
    for (const meta of filtered()) {
      await expect(db.orm.em.fork().find(meta.class, {}), meta.className).rejects.toThrow(/filter 'workspace'/);
    }
  });
});

describe('an activity (the worker interceptors: a RequestContext per execution)', () => {
  const run = (input: unknown): Promise<string[]> => {
    const env = new MockActivityEnvironment(undefined, { interceptors: activityInterceptors({ orm: db.orm }) });
    // What an activity body does: `deps.orm.em` resolves to the execution's own fork.
    return env.run(async (_input: unknown) => (await db.orm.em.find(ApiKey, {})).map((k) => k.workspaceId), input);
  };

  it('reads only the workspace its input names', async () => {
    const [a, b] = workspaces as [string, string];
    expect(new Set(await run({ workspaceId: a }))).toEqual(new Set([a]));
    expect(new Set(await run({ workspaceId: b }))).toEqual(new Set([b]));
  });

  it('throws on a workspace-owned entity when its input names no workspace', async () => {
    await expect(run({ jobId: uuidv7() })).rejects.toThrow(/filter 'workspace'/);
  });
});
