/**
 * OpenTelemetry tracing, on only when the standard OTLP variables name a collector
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; `OTEL_SDK_DISABLED=true`
 * or `OTEL_TRACES_EXPORTER=none` switch it off). Off, nothing is registered: no instrumentation,
 * no interceptor, no span. On, one trace follows a request: the HTTP server span, the workflow
 * start (Temporal's client interceptor), the workflow and its activities (Temporal's workflow and
 * activity interceptors; workflows/interceptors.ts), and inside them each SQL statement (pg) and
 * outbound HTTP call. The exporter, its headers, batching and sampling read the other standard
 * `OTEL_*` variables themselves.
 *
 * What a span may carry: SQL text (parameterised, never the values: `enhancedDatabaseReporting`
 * stays off) and URLs without their query strings (a lookup by email puts the email there).
 * The SDK itself is in telemetry/tracingSdk.ts, imported only when tracing is on.
 */
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { ActivityInterceptorsFactory, InjectedSink, InjectedSinks } from '@temporalio/worker';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions.js';

export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** What a process with tracing on has (telemetry/tracingSdk.ts). */
export interface ActiveTracing {
  shutdown(): Promise<void>;
  clientInterceptors(): WorkflowClientInterceptor[];
  activityInterceptors(): ActivityInterceptorsFactory[];
  workflowExporter(): InjectedSink<OpenTelemetryWorkflowExporter>;
  recordHttpRoute(route: string): void;
}

let active: ActiveTracing | undefined;

/**
 * Starts tracing for this process when configured; await it before anything loads `pg` or
 * `node:http` (the instrumentations patch those modules as they load), i.e. first in a
 * process's entry point. Idempotent.
 */
export async function startTracing(service: 'api' | 'worker', env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (active) return true;
  if (!tracingConfigured(env)) return false;
  const { setUpTracing } = await import('./tracingSdk.js');
  active = setUpTracing(service);
  return true;
}

/** Flushes what is buffered; for a process's shutdown. */
export async function stopTracing(): Promise<void> {
  await active?.shutdown().catch(() => undefined);
  active = undefined;
}

/** The Temporal client's tracing interceptor (the workflow-start span, its context in the headers). */
export function tracingClientInterceptors(): WorkflowClientInterceptor[] {
  return active ? active.clientInterceptors() : [];
}

/** Activity spans, children of the workflow's span (its context travels in the activity headers). */
export function tracingActivityInterceptors(): ActivityInterceptorsFactory[] {
  return active ? active.activityInterceptors() : [];
}

/**
 * The sink the workflow interceptors export their spans through. Always registered: a workflow
 * started by a traced API runs its tracing interceptors on any worker, and one without tracing
 * drops those spans here.
 */
export function tracingWorkflowSinks(): InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }> {
  return { exporter: active ? active.workflowExporter() : { export: { fn: () => undefined } } };
}

/** Names the request's server span by its route template (`POST /contacts/{id}`), never the raw path. */
export function recordHttpRoute(route: string): void {
  active?.recordHttpRoute(route);
}
