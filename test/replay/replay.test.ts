/**
 * Replays every recorded workflow history against the current workflow code: a change that
 * would break running workflows (non-determinism) fails here. Histories are recorded by the
 * integration tests (`app.recordHistory`), refreshed with RECORD_HISTORIES=1. Histories recorded
 * since the payload codec hold sealed payloads: replay opens them with the worker's codec (the
 * test key), and passes older, unsealed ones through.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { loadConfig } from '../../domain/config.js';
import { createPayloadCodec } from '../../domain/payloadCodec.js';
import { jobSinks } from '../../worker/telemetry.js';

const root = join(import.meta.dirname, 'histories');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.json') ? [p] : [];
  });
}

const histories = files(root);
const replayOptions = (replayName: string) => ({
  workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
  replayName,
  dataConverter: { payloadCodecs: [createPayloadCodec(loadConfig())] },
  sinks: jobSinks,
});

describe('workflow replay', () => {
  it('has recorded histories', () => {
    expect(histories.length).toBeGreaterThan(0);
  });
  for (const file of histories) {
    it(`replays ${relative(root, file)}`, async () => {
      const history: unknown = JSON.parse(readFileSync(file, 'utf8'));
      const workflowId = relative(root, file).replace(/\.json$/, '');
      await Worker.runReplayHistory(replayOptions(workflowId), history, workflowId);
    });
  }

  it('detects a history that the current code would not produce', async () => {
    const file = histories.find((f) => readFileSync(f, 'utf8').includes('EVENT_TYPE_ACTIVITY_TASK_SCHEDULED'));
    expect(file).toBeTruthy();
    const history = JSON.parse(readFileSync(file!, 'utf8')) as { events: Array<Record<string, any>> };
    const scheduled = history.events.find((e) => e.eventType === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED')!;
    scheduled.activityTaskScheduledEventAttributes.activityType.name = 'anActivityNoWorkflowCalls';
    await expect(
      Worker.runReplayHistory(replayOptions('tampered'), history, 'tampered'),
    ).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
