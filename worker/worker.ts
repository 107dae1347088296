/**
 * Creates the Temporal workers of one process: the main task queue (workflows; jobs, DB and
 * credit activities, webhooks) plus one activity-only queue per social network, whose activity
 * concurrency bounds how hard each network is called. Workflows run on the main queue only, so
 * the process holds one workflow thread (and its copy of the bundle), not one per queue; the SDK
 * says so once per network queue at start ("No workflows registered, not polling for workflow
 * tasks"), which is expected.
 */
import { type NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { connectTemporalWorker } from '../infra/temporalConnection.js';
import { fileURLToPath } from 'node:url';
import type { Config } from '../domain/config.js';
import { createActivities, type ActivityDeps } from '../activities/index.js';
import { dataConverterOf } from '../domain/payloadCodec.js';
import { activityLogContext, jobSinks } from './telemetry.js';
import { activityOrmContext } from './ormContext.js';
import { tracingActivityInterceptors, tracingWorkflowSinks } from '../telemetry/tracing.js';

/** True when running the JavaScript that `npm run build` wrote to `dist/` (not the sources through tsx). */
export const RUNNING_COMPILED = import.meta.url.endsWith('.js');
export const WORKFLOWS_PATH = fileURLToPath(new URL(`../workflows/index.${RUNNING_COMPILED ? 'js' : 'ts'}`, import.meta.url));
/** Bundled with the workflows wherever they are (build, tests, unbundled dev workers): request correlation. */
export const WORKFLOW_INTERCEPTOR_MODULES = [fileURLToPath(new URL(`../workflows/interceptors.${RUNNING_COMPILED ? 'js' : 'ts'}`, import.meta.url))];
/** The workflow bundle `npm run build` writes (`dist/workflow-bundle.js`): the compiled worker loads it instead of bundling at start. */
export const BUILT_WORKFLOW_BUNDLE = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));

/** Extra task queues: suffix → per-queue options (activity concurrency per network). */
export const TASK_QUEUES: Record<string, Partial<WorkerOptions>> = {
  '': { maxConcurrentActivityTaskExecutions: 100, maxConcurrentWorkflowTaskExecutions: 100 },
  // Scheduled publishing steps per network per worker (they mostly wait for scheduledTime; the
  // network calls themselves are limited to MAX_CALLS_PER_NETWORK in activities/publishing.ts).
  microblog: { maxConcurrentActivityTaskExecutions: 300 },
  pronet: { maxConcurrentActivityTaskExecutions: 300 },
};

export function taskQueueName(config: Config, suffix = ''): string {
  return suffix ? `${config.temporal.taskQueue}-${suffix}` : config.temporal.taskQueue;
}

export interface WorkerSet {
  workers: Worker[];
  run(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Every activity runs inside these: its span (when tracing), its log context and its own MikroORM
 * RequestContext, and (given the pool) its `activityScope()`.
 */
export function activityInterceptors(deps: Pick<ActivityDeps, 'orm'> & Partial<Pick<ActivityDeps, 'log' | 'pool'>>) {
  return [...tracingActivityInterceptors(), activityLogContext(deps.log), activityOrmContext(deps.orm, deps.pool)];
}

export async function createWorkers(
  deps: ActivityDeps,
  opts: { connection?: NativeConnection; workflowBundlePath?: string } = {},
): Promise<WorkerSet> {
  const connection = opts.connection ?? (await connectTemporalWorker(deps.config));
  const activities = createActivities(deps);
  const dataConverter = dataConverterOf(deps.config);
  const workflowSource = opts.workflowBundlePath ? { workflowBundle: { codePath: opts.workflowBundlePath } } : { workflowsPath: WORKFLOWS_PATH };
  // A bundle already holds the workflow interceptor modules (bundleWorkflowCode's workflowInterceptorModules).
  const workflowModules = opts.workflowBundlePath ? undefined : WORKFLOW_INTERCEPTOR_MODULES;
  const workers = await Promise.all(
    Object.entries(TASK_QUEUES).map(([suffix, extra]) =>
      Worker.create({
        connection,
        namespace: deps.config.temporal.namespace,
        taskQueue: taskQueueName(deps.config, suffix),
        activities,
        dataConverter,
        interceptors: { activity: activityInterceptors(deps), ...(suffix === '' && workflowModules ? { workflowModules } : {}) },
        sinks: { ...jobSinks, ...tracingWorkflowSinks() },
        ...(suffix === '' ? workflowSource : {}),
        shutdownGraceTime: '5 seconds',
        ...extra,
      }),
    ),
  );
  let running: Promise<unknown> | undefined;
  return {
    workers,
    run() {
      running ??= Promise.all(workers.map((w) => w.run()));
      return running.then(() => undefined);
    },
    async shutdown() {
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await running?.catch(() => undefined);
      if (!opts.connection) await connection.close();
    },
  };
}
