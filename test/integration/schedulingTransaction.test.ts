/**
 * The API side of scheduling runs its Kysely statements (db/schedules.ts, db/posts.ts) on the
 * entity manager of the route's `em.transactional`: they must join that transaction. A rollback
 * undoes the Kysely writes, and the Kysely row lock is held by the transaction until it ends.
 * The pool is enforced and each case runs in the workspace's scope, as a route does (the
 * statements name no workspace: row-level security and the column default supply it).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { v7 as uuidv7 } from 'uuid';
import { openDatabase, type Database } from '../../db/orm.js';
import { inWorkspaceScope, useWorkspace, withoutTenancy } from '../../db/tenancy.js';
import { cloneTestDatabase, dropTestDatabase } from '../harness.js';
import { createWorkspace } from '../../db/workspaces.js';
import { Integration, Post, PostSchedule } from '../../db/social.js';
import { lockPostsForScheduling, replaceSchedules } from '../../db/schedules.js';

let db: Database;
let dbName: string;
let workspaceId: string;
let providerId: string;

beforeAll(async () => {
  const clone = await cloneTestDatabase('schedtx');
  dbName = clone.name;
  db = await openDatabase(clone.url, { max: 4, tenancy: 'enforced' });
  workspaceId = (await withoutTenancy('test fixture', () => createWorkspace(db.orm.em.fork(), { name: 'tx' }))).workspaceId;
  providerId = uuidv7();
  await inWorkspaceScope(workspaceId, () => em().insert(Integration, { id: providerId, workspaceId, provider: 'microblog', name: 'x', externalAccountId: '1', credentialsEncrypted: 'c' }));
}, 60_000);
afterAll(async () => {
  await db?.close();
  if (dbName) await dropTestDatabase(dbName);
});

const em = () => {
  const e = db.orm.em.fork();
  useWorkspace(e, workspaceId);
  return e;
};

async function newDraft(): Promise<string> {
  const id = uuidv7();
  await em().insert(Post, { id, workspaceId, providerId, status: 'draft', content: 'hello' });
  return id;
}

const scheduleRow = (postId: string) => ({ postId, providerId, scheduledTime: new Date(Date.now() + 3_600_000), automation: {} });

it('rolls back the Kysely writes with the transaction', () => inWorkspaceScope(workspaceId, async () => {
  const postId = await newDraft();
  await expect(
    em().transactional(async (tx) => {
      await replaceSchedules(tx, workspaceId, uuidv7(), [scheduleRow(postId)]);
      // Seen inside the transaction…
      expect(await tx.count(PostSchedule, { postId })).toBe(1);
      throw new Error('abort');
    }),
  ).rejects.toThrow('abort');
  // …and gone after its rollback: no schedule row, the post still a draft without a time.
  expect(await em().count(PostSchedule, { postId })).toBe(0);
  const post = await em().findOneOrFail(Post, { id: postId });
  expect([post.status, post.scheduledTime]).toEqual(['draft', null]);

  await em().transactional((tx) => replaceSchedules(tx, workspaceId, uuidv7(), [scheduleRow(postId)]));
  expect(await em().count(PostSchedule, { postId, status: 'scheduled' })).toBe(1);
  expect((await em().findOneOrFail(Post, { id: postId })).status).toBe('scheduled');
}));

it('holds the Kysely row lock until the transaction ends', () => inWorkspaceScope(workspaceId, async () => {
  const postId = await newDraft();
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const lockTaken = new Promise<void>((r) => (locked = r));
  const first = em().transactional(async (tx) => {
    await lockPostsForScheduling(tx, [postId]);
    locked();
    await held;
  });
  await lockTaken;
  // Another transaction cannot lock the post while the first one runs.
  await expect(
    em().transactional(async (tx) => {
      await tx.execute(`set local lock_timeout = '200ms'`, [], 'run');
      await lockPostsForScheduling(tx, [postId]);
    }),
  ).rejects.toThrow(/lock timeout/);
  release();
  await first;
  await em().transactional((tx) => lockPostsForScheduling(tx, [postId]));
}));
