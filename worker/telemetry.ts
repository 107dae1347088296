/**
 * What the worker adds to the SDK for operators: the Runtime (SDK logs into the process's pino
 * logger; the SDK's Prometheus exporter), activity log context, and the sink through which job
 * workflows report how they ended (workflows cannot touch metrics themselves).
 */
import { createServer } from 'node:net';
import { Runtime, type ActivityInterceptorsFactory, type InjectedSinks } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { Config } from '../domain/config.js';
import type { JobSinks } from '../workflows/contract/jobs.js';
import { logContext, temporalLogger } from '../telemetry/log.js';
import { requestIdOf } from '../telemetry/correlation.js';
import { jobsCancelled, jobsCompleted, jobsFailed } from '../telemetry/metrics.js';

/**
 * Installs the process's Temporal Runtime: SDK logs (Core's forwarded too) go to `log`; with a
 * metrics port configured, the SDK's own worker metrics are exported on a loopback port of their
 * own, whose URL is returned for the worker's `/metrics` to append. Once per process, before any
 * worker or connection is created.
 */
export async function installRuntime(config: Config, log: Logger): Promise<{ sdkMetricsUrl: string | null }> {
  const sdkMetricsPort = config.metrics.port === null ? null : await freeLoopbackPort();
  Runtime.install({
    logger: temporalLogger(log, config.temporalLogLevel),
    telemetryOptions: {
      logging: { filter: { core: config.temporalLogLevel, other: 'ERROR' }, forward: {} },
      ...(sdkMetricsPort === null ? {} : { metrics: { prometheus: { bindAddress: `127.0.0.1:${sdkMetricsPort}`, countersTotalSuffix: true, useSecondsForDurations: true } } }),
    },
  });
  return { sdkMetricsUrl: sdkMetricsPort === null ? null : `http://127.0.0.1:${sdkMetricsPort}/metrics` };
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The `workspaceId` of an activity's first argument, when it is an object that has one. */
export function inputWorkspaceId(args: readonly unknown[]): string | undefined {
  const first = args[0] as { workspaceId?: unknown } | undefined;
  return first && typeof first === 'object' && typeof first.workspaceId === 'string' ? first.workspaceId : undefined;
}

/**
 * Every line an activity logs (the SDK's `log`, or the process logger) names its workflow, run,
 * activity type, the request that started the work (the `request-id` header, domain/correlation.ts)
 * and, when its input carries one, its workspace.
 */
export const activityLogContext =
  (log?: Logger): ActivityInterceptorsFactory =>
  (ctx) => {
    let workspaceId: string | undefined;
    let requestId: string | undefined;
    return {
      inbound: {
        execute(input, next) {
          workspaceId = inputWorkspaceId(input.args) ?? workspaceId;
          requestId = requestIdOf(input.headers) ?? requestId;
          const { workflowExecution, activityType, attempt } = ctx.info;
          const context = { requestId, workflowId: workflowExecution?.workflowId, runId: workflowExecution?.runId, activityType, workspaceId };
          return logContext.run(context, async () => {
            const started = performance.now();
            const durationMs = () => Math.round(performance.now() - started);
            try {
              const result = await next(input);
              log?.debug({ attempt, durationMs: durationMs() }, 'activity completed');
              return result;
            } catch (err) {
              // The failure's type only: its message or details may hold what the activity was given.
              log?.debug({ attempt, durationMs: durationMs(), failure: (err as Error)?.name }, 'activity failed');
              throw err;
            }
          });
        },
      },
      outbound: {
        getLogAttributes(attrs, next) {
          return next({ ...attrs, ...(workspaceId ? { workspaceId } : {}), ...(requestId ? { requestId } : {}) });
        },
      },
    };
  };

export const jobSinks: InjectedSinks<JobSinks> = {
  jobs: {
    finished: {
      fn(_info, jobType, status) {
        (status === 'completed' ? jobsCompleted : status === 'failed' ? jobsFailed : jobsCancelled).inc({ type: jobType });
      },
      callDuringReplay: false,
    },
  },
};
