/**
 * Replays every recorded workflow history, of every release's version folder
 * (`histories/<version>/<workflow>/<case>.json`), against the current workflow code: a change
 * that would break running workflows (non-determinism) fails here. Histories are recorded by the
 * integration tests (`app.recordHistory`) into the current version folder and never re-recorded
 * (`historyVersions.ts`). Histories recorded since the payload codec hold sealed payloads: replay
 * opens them with the worker's codec (the test key), and passes older, unsealed ones through.
 */
import { readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { DEV_SECRETS, loadConfig } from '../../domain/config.js';
import { dataConverterOf } from '../../domain/payloadCodec.js';
import { jobSinks } from '../../worker/telemetry.js';
import { CURRENT_HISTORY_VERSION, HISTORIES_DIR, historyFiles, historyVersions, versionNumber } from './historyVersions.js';

const versions = historyVersions();
const isFolder = (v: string) => statSync(join(HISTORIES_DIR, v)).isDirectory();
const byVersion = new Map(versions.filter(isFolder).map((v) => [v, historyFiles(join(HISTORIES_DIR, v))]));
const histories = [...byVersion.values()].flat();
/**
 * The recorded histories were sealed with the development key every installation used before it
 * generated its own (domain/config.ts installationSecrets): a fresh installation opens them with that
 * key as a previous one, beside its own.
 */
const config = loadConfig();
const recordingKeys = { encryptionKey: config.encryptionKey, previousEncryptionKeys: [...config.previousEncryptionKeys, DEV_SECRETS.ENCRYPTION_KEY] };
const replayOptions = (replayName: string) => ({
  workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
  replayName,
  dataConverter: dataConverterOf(recordingKeys),
  sinks: jobSinks,
});

describe('workflow replay', () => {
  it('keeps every history in a version folder, none newer than the current version', () => {
    expect(versions.filter((v) => !versionNumber(v) || !isFolder(v)), 'entries of histories/ that are no version folder').toEqual([]);
    expect(versions.filter((v) => versionNumber(v) > versionNumber(CURRENT_HISTORY_VERSION))).toEqual([]);
    expect(histories.length).toBeGreaterThan(0);
  });

  for (const [version, files] of byVersion) {
    describe(version, () => {
      for (const file of files) {
        it(`replays ${relative(join(HISTORIES_DIR, version), file)}`, async () => {
          const history: unknown = JSON.parse(readFileSync(file, 'utf8'));
          const workflowId = relative(HISTORIES_DIR, file).replace(/\.json$/, '');
          await Worker.runReplayHistory(replayOptions(workflowId), history, workflowId);
        });
      }
    });
  }

  it('holds publish histories from before and after the reschedule/unschedule Updates', () => {
    // Both must keep replaying: the signals stay registered for the old ones (workflows/scheduling.ts).
    const publish = histories.filter((f) => /[/\\](publishPost|externalReply)[/\\]/.test(f)).map((f) => readFileSync(f, 'utf8'));
    expect(publish.some((h) => h.includes('EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED') && h.includes('"signalName": "schedule"'))).toBe(true);
    expect(publish.some((h) => h.includes('EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED') && h.includes('"name": "reschedule"'))).toBe(true);
    expect(publish.some((h) => h.includes('EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED') && h.includes('"name": "unscheduleRow"'))).toBe(true);
  });

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
