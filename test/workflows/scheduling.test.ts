/**
 * The scheduling box of the publish workflows (workflows/scheduling.ts) on the time-skipping test
 * server: a publish waits durably (a day, skipped) for its row, takes a newer row through the
 * `reschedule` Update, refuses stale, foreign and late Updates with their rejection type, ends
 * on `unscheduleRow`, and claims and publishes exactly once. The claim and the outcome are the
 * real activities on this file's database; the provider step (a third party) is a test function.
 *
 * Clocks: the test server's clock is skipped ahead, the database claim compares the stored row
 * time with the wall clock. So the rows are stored due now (as bulk-schedule writes them, a few
 * seconds ahead) while the Updates carry times a day ahead: the wait follows the Update, the
 * claim finds the row due.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { startTestApp, type TestApp } from '../harness.js';
import { startTimeSkipping, type TimeSkippingWorld } from './timeSkipping.js';
import { PUBLISH_LEAD_MS } from '../../workflows/scheduling.js';
import { SCHEDULE_REJECTION } from '../../workflows/contract/failures.js';
import { rescheduleUpdate, stateQuery, unscheduleUpdate, type ScheduleSignal } from '../../workflows/contract/publishing.js';
import type { Activities } from '../../activities/index.js';

const DAY = 86_400_000;
let app: TestApp;
let world: TimeSkippingWorld;
let ws: { workspaceId: string; apiKey: string };
let account: string;

beforeAll(async () => {
  app = await startTestApp({ workerMode: 'none' });
  world = await startTimeSkipping(app);
  ws = await app.createWorkspace();
  // Never called: the provider step is a test function.
  const r = await app.http('POST', '/integrations', {
    apiKey: ws.apiKey,
    body: { provider: 'microblog', name: 'box', externalAccountId: '42', credentials: { accessToken: 't' }, apiBaseUrl: 'http://127.0.0.1:9' },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  account = r.body.data.id;
});

afterAll(async () => {
  await world?.teardown();
  await app?.close();
});

/** A scheduled post's current row (written by the real bulk-schedule, due a few seconds from now). */
async function scheduleRow(postId: string): Promise<{ id: string }> {
  const b = await app.http('POST', '/v1/posts/bulk-schedule', {
    apiKey: ws.apiKey,
    body: { posts: [{ postId, schedules: [{ providerId: account, scheduledTime: new Date(Date.now() + 3_000).toISOString() }] }] },
  });
  expect(b.status, JSON.stringify(b.body)).toBe(200);
  const r = await app.pool.query<{ id: string }>(`select id from post_schedules where post_id = $1 and status = 'scheduled' order by id desc limit 1`, [postId]);
  return r.rows[0]!;
}

async function draft(content: string): Promise<string> {
  const d = await app.http('POST', '/v1/posts', { apiKey: ws.apiKey, body: { providerId: account, content } });
  expect(d.status, JSON.stringify(d.body)).toBe(200);
  return d.body.data.id;
}

/** Starts (or reaches) the post's publish workflow with a row, as the dispatch activity does. */
async function reschedule(postId: string, row: ScheduleSignal) {
  return world.startPublish({ workspaceId: ws.workspaceId, postId }, row);
}

/** The test server's clock: each skip moves it ahead of the wall clock for the rest of the file. */
const serverNow = () => world.env.currentTimeMs();

/** The rejection type of a refused Update. */
async function refusal(p: Promise<unknown>): Promise<string | undefined> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (err as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return (cause as ApplicationFailure).type ?? undefined;
}

/** A provider step that records when (on the test server's clock) it ran, and can be held. */
function fakeProvider() {
  const calls: Array<{ postId: string; kind: string; at: number }> = [];
  let hold: Promise<void> | undefined;
  let entered: () => void = () => {};
  const ran = new Promise<void>((r) => (entered = r));
  const publishStep: Activities['publishStep'] = async (input) => {
    calls.push({ postId: input.postId, kind: input.step.kind, at: await world.env.currentTimeMs() });
    entered();
    await hold;
    return { externalId: `ext-${calls.length}`, externalUrl: `https://x.example/${calls.length}` };
  };
  return {
    calls,
    ran,
    publishStep,
    holdUntil(p: Promise<void>) {
      hold = p;
    },
  };
}

describe('scheduling box (time skipping)', () => {
  it('waits a day for its row, then claims it and publishes once', async () => {
    const postId = await draft('a day later');
    const row = await scheduleRow(postId);
    const provider = fakeProvider();
    const due = (await serverNow()) + DAY;
    await world.withWorkers({ publishStep: provider.publishStep }, async () => {
      const handle = await reschedule(postId, { scheduleId: row.id, scheduledTime: new Date(due).toISOString() });
      const waiting = await handle.query(stateQuery);
      expect(waiting).toMatchObject({ phase: 'waiting', scheduleId: row.id, scheduledTime: new Date(due).toISOString() });
      expect(provider.calls).toEqual([]);
      const result = await handle.result();
      expect(result).toMatchObject({ phase: 'published', externalId: 'ext-1', error: null });
    });
    expect(provider.calls).toHaveLength(1);
    // Woken PUBLISH_LEAD_MS before the Update's time on the skipped clock, not before.
    expect(provider.calls[0]!.at).toBeGreaterThanOrEqual(due - PUBLISH_LEAD_MS);
    const post = (await app.http('GET', `/v1/posts/${postId}`, { apiKey: ws.apiKey })).body.data;
    expect(post).toMatchObject({ status: 'published', externalId: 'ext-1' });
  });

  it('takes a newer row, refuses stale and foreign rows, and ends on unschedule without publishing', async () => {
    const postId = await draft('rescheduled then unscheduled');
    const older = await scheduleRow(postId);
    const provider = fakeProvider();
    await world.withWorkers({ publishStep: provider.publishStep }, async () => {
      const handle = await reschedule(postId, { scheduleId: older.id, scheduledTime: new Date((await serverNow()) + DAY).toISOString() });
      const newer = await scheduleRow(postId);
      expect(newer.id > older.id).toBe(true);
      const later = new Date((await serverNow()) + 2 * DAY).toISOString();
      await handle.executeUpdate(rescheduleUpdate, { args: [{ scheduleId: newer.id, scheduledTime: later }] });
      expect(await handle.query(stateQuery)).toMatchObject({ phase: 'waiting', scheduleId: newer.id, scheduledTime: later });

      expect(await refusal(handle.executeUpdate(rescheduleUpdate, { args: [{ scheduleId: older.id, scheduledTime: later }] }))).toBe(SCHEDULE_REJECTION.stale);
      expect(await refusal(handle.executeUpdate(rescheduleUpdate, { args: [{ scheduleId: newer.id, scheduledTime: 'not a time' }] }))).toBe(SCHEDULE_REJECTION.invalid);
      expect(await refusal(handle.executeUpdate(unscheduleUpdate, { args: [{ scheduleId: older.id }] }))).toBe(SCHEDULE_REJECTION.notCurrent);
      // Refusals changed nothing.
      expect(await handle.query(stateQuery)).toMatchObject({ phase: 'waiting', scheduleId: newer.id, scheduledTime: later });

      await handle.executeUpdate(unscheduleUpdate, { args: [{ scheduleId: newer.id }] });
      expect(await handle.result()).toMatchObject({ phase: 'cancelled', externalId: null });
    });
    expect(provider.calls).toEqual([]);
  });

  it('refuses a reschedule once the row is claimed (a new row needs a new run)', async () => {
    const postId = await draft('claimed');
    const row = await scheduleRow(postId);
    const provider = fakeProvider();
    let release: () => void = () => {};
    provider.holdUntil(new Promise<void>((r) => (release = r)));
    await world.withWorkers({ publishStep: provider.publishStep }, async () => {
      const at = new Date((await serverNow()) + DAY).toISOString();
      const handle = await reschedule(postId, { scheduleId: row.id, scheduledTime: at });
      const result = handle.result();
      await provider.ran;
      expect(await handle.query(stateQuery)).toMatchObject({ phase: 'publishing' });
      expect(await refusal(handle.executeUpdate(rescheduleUpdate, { args: [{ scheduleId: row.id, scheduledTime: at }] }))).toBe(SCHEDULE_REJECTION.notWaiting);
      release();
      expect(await result).toMatchObject({ phase: 'published' });
    });
    expect(provider.calls).toHaveLength(1);
  });
});
