/**
 * The scheduled-publish contract (workflows/publishPost.ts, externalReply.ts, scheduleBatch.ts,
 * with workflows/scheduling.ts): the workflow inputs, the `reschedule` / `unscheduleRow`
 * Updates the dispatcher activity and the API send, the `state` query, and the workflow type
 * names. The Update names, the query name and the type names are recorded in histories: never
 * rename one.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PostError } from '../../domain/social.js';

export interface PublishWorkflowInput {
  workspaceId: string;
  postId: string;
  /** Schedule row number: the workflow id is `publish-<postId>-<n>`. */
  n: number;
  /** Base task queue; provider calls go to `<taskQueue>-microblog` / `<taskQueue>-pronet`. */
  taskQueue: string;
}

/** The input of the dispatch of one bulk-schedule batch (`scheduleBatchWorkflow`, activity `dispatchScheduleBatch`). */
export interface DispatchInput {
  batchId: string;
  workspaceId: string;
  /** Base task queue of the publish workflows. */
  taskQueue: string;
}

/** A schedule row's identity and time; row ids are UUIDv7, so a later bulk-schedule sorts later. */
export interface ScheduleSignal {
  scheduleId: string;
  scheduledTime: string;
}

/**
 * Sent by the dispatch activity with update-with-start: the row this workflow publishes (a newer
 * row replaces the current one, the same row moves its time). Acknowledged once applied; a
 * refusal carries a `SCHEDULE_REJECTION` type (./failures.ts).
 */
export const rescheduleUpdate = defineUpdate<void, [ScheduleSignal]>('reschedule');
/** Sent by the API for a row it cancelled or replaced: ends the wait if that row is the current one. */
export const unscheduleUpdate = defineUpdate<void, [{ scheduleId: string }]>('unscheduleRow');

/**
 * Before the Updates (kept: histories and workflows started before hold these signals, and
 * adding or keeping a handler issues no command). Nothing sends them any more.
 */
export const scheduleSignal = defineSignal<[ScheduleSignal]>('schedule');
export const unscheduleSignal = defineSignal<[{ scheduleId: string }]>('unschedule');

export interface PublishState {
  phase: 'waiting' | 'publishing' | 'published' | 'failed' | 'cancelled' | 'superseded';
  scheduleId: string | null;
  scheduledTime: string | null;
  externalId: string | null;
  threadExternalIds: string[];
  error: PostError | null;
}
export const stateQuery = defineQuery<PublishState>('state');

export type PublishResult = Pick<PublishState, 'phase' | 'externalId' | 'threadExternalIds' | 'error'>;

/** Workflow type names (recorded in histories: never rename). */
export const PUBLISH_WORKFLOWS = {
  post: 'publishPostWorkflow',
  externalReply: 'externalReplyWorkflow',
  scheduleBatch: 'scheduleBatchWorkflow',
} as const;
