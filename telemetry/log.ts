/**
 * The one logger of every process: pino, one JSON line per event. What is known about the work in
 * progress (the API request id; the workflow, run, activity type and workspace of an activity) is
 * kept in `logContext` and added to every line logged inside it, so code deep in a call chain
 * logs with context without passing it along. The Temporal SDK's own logs (Runtime logger,
 * workflow and activity context loggers) reach the same logger through `temporalLogger`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { hostname } from 'node:os';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { Logger as TemporalLogger, LogLevel, LogMetadata } from '@temporalio/common';

export interface LogContext {
  requestId?: string;
  workflowId?: string;
  runId?: string;
  activityType?: string;
  workspaceId?: string;
}

export const logContext = new AsyncLocalStorage<LogContext>();

/** pino's `isoTime`, formatted once per millisecond: a burst of lines shares one `toISOString()`. */
let isoMs = NaN;
let isoField = '';
function isoTime(): string {
  const now = Date.now();
  if (now !== isoMs) {
    isoMs = now;
    isoField = `,"time":"${new Date(now).toISOString()}"`;
  }
  return isoField;
}

/**
 * Lines for a log pipeline that merges many pods: an ISO timestamp (`time`), the level by name
 * (`level: "info"`), and which process wrote it (`svc`, `hostname` — the pod name in Kubernetes —
 * and `pid`).
 */
export function createLogger(opts: { svc: string; level: string }, destination?: DestinationStream): Logger {
  return pino(
    {
      level: opts.level,
      base: { svc: opts.svc, hostname: hostname(), pid: process.pid },
      timestamp: isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => ({ ...logContext.getStore() }),
    },
    destination!,
  );
}

const PINO_LEVEL = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/**
 * The Temporal SDK's `Logger` writing to `log`. Lines about a workflow or an activity (from their
 * code through the SDK's `log`, or the SDK's own "Activity completed" …) follow `log`'s level;
 * the SDK's other lines (worker state, bundler, Core) follow `sdkLevel`, quieter by default. The SDK's `workflowRunId` is named `runId` as in
 * workflow lines, and an `error` becomes pino's `err` (message and stack serialised).
 */
export function temporalLogger(log: Logger, sdkLevel: string): TemporalLogger {
  const sdk = log.child({}, { level: sdkLevel.toLowerCase() });
  const write = (level: LogLevel, message: string, meta: LogMetadata = {}) => {
    const aboutWork = meta.sdkComponent === 'workflow' || meta.sdkComponent === 'activity' || meta.workflowId !== undefined;
    // The task token is an opaque binary handle: noise in a log line.
    const { error, workflowRunId, taskToken: _taskToken, ...fields } = meta;
    if (workflowRunId !== undefined && fields.runId === undefined) fields.runId = workflowRunId;
    if (error !== undefined) fields.err = error;
    (aboutWork ? log : sdk)[PINO_LEVEL[level] ?? 'info'](fields, message);
  };
  return {
    log: write,
    trace: (m, meta) => write('TRACE', m, meta),
    debug: (m, meta) => write('DEBUG', m, meta),
    info: (m, meta) => write('INFO', m, meta),
    warn: (m, meta) => write('WARN', m, meta),
    error: (m, meta) => write('ERROR', m, meta),
  };
}
