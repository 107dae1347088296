/**
 * Workflow unit tests on Temporal's time-skipping test server (issue 13 item 6). The SDK would
 * download that server at run time, which fails here (DESIGN §8): `scripts/bootstrap.mjs` puts
 * its Java build in `.tools/` and `.tools/bin/temporal-test-server <port>` runs it; the SDK
 * starts that launcher as an `existing-path` executable on a free port and stops it at teardown.
 *
 * Workers run the same workflow bundle and activity interceptors as the integration tests, on the
 * workflow queue and the per-network activity queues, with the activities a test passes: the real functions where they
 * only touch our stack (the test file's own database clone, see `startTestApp`), test functions
 * where they would call a third party.
 */
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { ROOT_DIR } from '../../domain/config.js';
import { createActivities, type Activities } from '../../activities/index.js';
import { TASK_QUEUES, activityInterceptors } from '../../worker/worker.js';
import { scheduleBatchWorkflowId } from '../../domain/publishing.js';
import { jobSinks } from '../../worker/telemetry.js';
import type { TestApp } from '../harness.js';

export const TEST_SERVER = join(ROOT_DIR, '.tools', 'bin', 'temporal-test-server');

export interface TimeSkippingWorld {
  env: TestWorkflowEnvironment;
  taskQueue: string;
  /** The real activities, on the test app's database and the test server's client. */
  real: Activities;
  /** Runs workers with `activities` (real ones overridden by the test's) while `fn` runs. */
  withWorkers<R>(activities: Partial<Activities>, fn: () => Promise<R>): Promise<R>;
  /** Stops the test server, and ends the batch workflows the real bulk-schedule started on the dev server (no worker polls their queue). */
  teardown(): Promise<void>;
}

export async function startTimeSkipping(app: TestApp): Promise<TimeSkippingWorld> {
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: TEST_SERVER } } });
  const taskQueue = app.config.temporal.taskQueue;
  const real = createActivities({ ...app.deps, temporal: env.client });
  const bundle = { codePath: process.env.WORKFLOW_BUNDLE_PATH! };
  return {
    env,
    taskQueue,
    real,
    async withWorkers<R>(activities: Partial<Activities>, fn: () => Promise<R>): Promise<R> {
      const all = { ...real, ...activities };
      const workers = await Promise.all(
        Object.keys(TASK_QUEUES).map((suffix) =>
          Worker.create({
            connection: env.nativeConnection,
            taskQueue: suffix ? `${taskQueue}-${suffix}` : taskQueue,
            activities: all,
            interceptors: { activity: activityInterceptors(app.deps) },
            sinks: jobSinks,
            ...(suffix ? {} : { workflowBundle: bundle }),
          }),
        ),
      );
      // Each worker polls until fn settles, then drains.
      const [first, ...rest] = workers;
      return first!.runUntil(() => rest.reduce<() => Promise<R>>((inner, w) => () => w.runUntil(inner), fn)());
    },
    async teardown() {
      const batches = await app.pool.query<{ batch_id: string }>(`select distinct batch_id from post_schedules where batch_id is not null`);
      for (const b of batches.rows) await app.deps.temporal.workflow.getHandle(scheduleBatchWorkflowId(b.batch_id)).terminate('test over').catch(() => undefined);
      await env.teardown();
    },
  };
}
