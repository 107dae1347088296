/**
 * Replays every recorded workflow history against the current workflow code: a change that
 * would break running workflows (non-determinism) fails here. Histories are recorded by the
 * integration tests (`app.recordHistory`), refreshed with RECORD_HISTORIES=1.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';

const root = join(import.meta.dirname, 'histories');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.json') ? [p] : [];
  });
}

const histories = files(root);

describe('workflow replay', () => {
  it('has recorded histories', () => {
    expect(histories.length).toBeGreaterThan(0);
  });
  for (const file of histories) {
    it(`replays ${relative(root, file)}`, async () => {
      const history: unknown = JSON.parse(readFileSync(file, 'utf8'));
      const workflowId = relative(root, file).replace(/\.json$/, '');
      await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! }, replayName: workflowId }, history, workflowId);
    });
  }

  it('detects a history that the current code would not produce', async () => {
    const file = histories.find((f) => readFileSync(f, 'utf8').includes('EVENT_TYPE_ACTIVITY_TASK_SCHEDULED'));
    expect(file).toBeTruthy();
    const history = JSON.parse(readFileSync(file!, 'utf8')) as { events: Array<Record<string, any>> };
    const scheduled = history.events.find((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')!;
    scheduled.activityTaskScheduledEventAttributes.activityType.name = 'anActivityNoWorkflowCalls';
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! }, replayName: 'tampered' }, history, 'tampered'),
    ).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
