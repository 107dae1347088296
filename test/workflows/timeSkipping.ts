/**
 * Workflow unit tests on Temporal's time-skipping test server (issue 13 item 6). The SDK would
 * download that server at run time, which fails here (DESIGN §8): `scripts/bootstrap.mjs` puts
 * its Java build in `.tools/` and `.tools/bin/temporal-test-server <port>` runs it. This file
 * starts it on a free port and waits for it as long as the JVM needs: the SDK's own start
 * (`createTimeSkipping` with an `existing-path` executable) gives up after a fixed 5 s, which a
 * loaded 2-core machine exceeds ("ephemeral server … did not start within 5s"). The environment
 * then connects to it with the time-skipping service on, as `createTimeSkipping` would.
 *
 * Workers run the same workflow bundle and activity interceptors as the integration tests, on the
 * workflow queue and the per-network activity queues, with the activities a test passes: the real functions where they
 * only touch our stack (the test file's own database clone, see `startTestApp`), test functions
 * where they would call a third party.
 */
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Client, isGrpcServiceError, ServiceError, WithStartWorkflowOperation, type WorkflowHandle } from '@temporalio/client';
import { status } from '@grpc/grpc-js';
import { Worker } from '@temporalio/worker';
import { ROOT_DIR } from '../../domain/config.js';
import { createActivities, type Activities } from '../../activities/index.js';
import { TASK_QUEUES, activityInterceptors } from '../../worker/worker.js';
import { publishWorkflowId, scheduleBatchWorkflowId } from '../../domain/publishing.js';
import { publishPostWorkflow } from '../../workflows/publishPost.js';
import { rescheduleUpdate, stateQuery, type ScheduleSignal } from '../../workflows/contract/publishing.js';
import { jobSinks } from '../../worker/telemetry.js';
import { freePort, type TestApp } from '../harness.js';

export const TEST_SERVER = join(ROOT_DIR, '.tools', 'bin', 'temporal-test-server');

export interface TimeSkippingWorld {
  env: TestWorkflowEnvironment;
  /**
   * A client of the same server that does not skip time while it waits for a result (`env.client`
   * unlocks skipping for as long as it waits): with it, the server's clock moves only by
   * `env.sleep` and in real time.
   */
  plainClient: Client;
  taskQueue: string;
  /** The real activities, on the test app's database and the test server's client. */
  real: Activities;
  /** Runs workers with `activities` (real ones overridden by the test's) while `fn` runs. */
  withWorkers<R>(activities: Partial<Activities>, fn: () => Promise<R>): Promise<R>;
  /** Starts (or reaches) the publish workflow of run `n` of a post with a row, as the dispatch activity does. */
  startPublish(post: { workspaceId: string; postId: string; n?: number }, row: ScheduleSignal): Promise<WorkflowHandle<typeof publishPostWorkflow>>;
  /** Stops the test server, and ends the batch workflows the real bulk-schedule started on the dev server (no worker polls their queue). */
  teardown(): Promise<void>;
}

const SERVER_START_MS = 120_000;
/** How long one update-with-start may take on the test server, and how often it is tried. */
const UPDATE_WITH_START_MS = 60_000;
const UPDATE_WITH_START_ATTEMPTS = 3;

/**
 * The Java test server, on a loaded machine, answers some update-with-starts with gRPC UNKNOWN
 * ("Application error processing RPC"), sometimes after applying them, and leaves others
 * unanswered (one hung a CI run past its 240 s timeout). After such an attempt the workflow is
 * asked which row it holds: the row itself means the Update was applied (the workflow may
 * already be publishing it, and would refuse it again as `not_waiting`); otherwise the attempt
 * is made again, which USE_EXISTING makes harmless. A refused Update is an answer, not retried.
 */
function testServerGaveNoAnswer(err: unknown): boolean {
  const cause = err instanceof ServiceError ? err.cause : err;
  return isGrpcServiceError(cause) && (cause.code === status.UNKNOWN || cause.code === status.DEADLINE_EXCEEDED);
}

/** The Java test server on a free port, once it accepts connections. */
async function startTestServer(): Promise<{ address: string; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn(TEST_SERVER, [String(port)], { stdio: 'ignore' });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`the time-skipping test server exited with ${code} before it listened`))));
  const listening = (async () => {
    for (const deadline = Date.now() + SERVER_START_MS; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      const up = await new Promise<boolean>((resolve) => connect(port, '127.0.0.1').once('connect', function (this: import('node:net').Socket) { this.destroy(); resolve(true); }).once('error', () => resolve(false)));
      if (up) return;
    }
    child.kill('SIGKILL');
    throw new Error(`the time-skipping test server did not listen on ${port} within ${SERVER_START_MS} ms`);
  })();
  await Promise.race([listening, exited]);
  return { address: `127.0.0.1:${port}`, process: child };
}

/** `TestWorkflowEnvironment.create` is what `createTimeSkipping` calls once its server runs; not in the typings. */
type CreateEnvironment = (o: { server: { type: 'existing' }; supportsTimeSkipping: true; address: string; namespace: string }) => Promise<TestWorkflowEnvironment>;

export async function startTimeSkipping(app: TestApp): Promise<TimeSkippingWorld> {
  const server = await startTestServer();
  const create = (TestWorkflowEnvironment as unknown as { create: CreateEnvironment }).create.bind(TestWorkflowEnvironment);
  const env = await create({ server: { type: 'existing' }, supportsTimeSkipping: true, address: server.address, namespace: 'default' }).catch((err) => {
    server.process.kill('SIGKILL');
    throw err;
  });
  const taskQueue = app.config.temporal.taskQueue;
  const real = createActivities({ ...app.deps, temporal: env.client });
  const bundle = { codePath: process.env.WORKFLOW_BUNDLE_PATH! };
  return {
    env,
    plainClient: new Client({ connection: env.connection, namespace: 'default' }),
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
    async startPublish({ workspaceId, postId, n = 0 }, row) {
      for (let attempt = 1; ; attempt++) {
        const startWorkflowOperation = new WithStartWorkflowOperation(publishPostWorkflow, {
          workflowId: publishWorkflowId(postId, n),
          taskQueue,
          args: [{ workspaceId, postId, n, taskQueue }],
          workflowIdConflictPolicy: 'USE_EXISTING',
        });
        try {
          await env.client.withDeadline(Date.now() + UPDATE_WITH_START_MS, () => env.client.workflow.executeUpdateWithStart(rescheduleUpdate, { args: [row], startWorkflowOperation }));
          return await startWorkflowOperation.workflowHandle();
        } catch (err) {
          if (attempt >= UPDATE_WITH_START_ATTEMPTS || !testServerGaveNoAnswer(err)) throw err;
          const handle = env.client.workflow.getHandle<typeof publishPostWorkflow>(publishWorkflowId(postId, n));
          const held = await env.client.withDeadline(Date.now() + UPDATE_WITH_START_MS, () => handle.query(stateQuery)).catch(() => null);
          if (held?.scheduleId === row.scheduleId) return handle;
        }
      }
    },
    async teardown() {
      const batches = await app.pool.query<{ batch_id: string }>(`select distinct batch_id from post_schedules where batch_id is not null`);
      for (const b of batches.rows) await app.deps.temporal.workflow.getHandle(scheduleBatchWorkflowId(b.batch_id)).terminate('test over').catch(() => undefined);
      await env.teardown();
      if (server.process.exitCode === null && server.process.signalCode === null) {
        const exited = new Promise((r) => server.process.once('exit', r));
        server.process.kill('SIGTERM');
        await exited;
      }
    },
  };
}
