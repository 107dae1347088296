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
 */
import { createRequire } from 'node:module';
import type { IncomingMessage, RequestOptions } from 'node:http';
import { context, type Attributes } from '@opentelemetry/api';
import { RPCType, getRPCMetadata } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { Resource, envDetectorSync } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ATTR_SERVICE_NAME, SEMATTRS_HTTP_TARGET, SEMATTRS_HTTP_URL } from '@opentelemetry/semantic-conventions';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  makeWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { OpenTelemetryWorkflowExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions.js';

/** Probes and scrapes would be most of the spans and say nothing. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/livez', '/metrics']);

export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

interface Tracing {
  resource: Resource;
  processor: SpanProcessor;
  provider: NodeTracerProvider;
}

let active: Tracing | undefined;

function withoutQuery(url: string | undefined): string {
  return (url ?? '/').split('?')[0];
}

/** The URL attributes of a server span, without the query string (they override the defaults). */
function incomingUrl(req: IncomingMessage): Attributes {
  const path = withoutQuery(req.url);
  return { [SEMATTRS_HTTP_TARGET]: path, [SEMATTRS_HTTP_URL]: `http://${req.headers.host ?? 'localhost'}${path}` };
}

/** The same for an outbound call. */
function outgoingUrl(o: RequestOptions): Attributes {
  const path = withoutQuery(o.path ?? '/');
  const port = o.port ? `:${o.port}` : '';
  return { [SEMATTRS_HTTP_TARGET]: path, [SEMATTRS_HTTP_URL]: `${o.protocol ?? 'http:'}//${o.hostname ?? o.host ?? 'localhost'}${port}${path}` };
}

/**
 * Starts tracing for this process when configured; call it before anything loads `pg` or
 * `node:http` (the instrumentations patch those modules as they load), i.e. first in a
 * process's entry point. Idempotent.
 */
export function startTracing(service: 'api' | 'worker', env: NodeJS.ProcessEnv = process.env): boolean {
  if (active) return true;
  if (!tracingConfigured(env)) return false;
  const resource = new Resource({ [ATTR_SERVICE_NAME]: `contact-data-${service}` }).merge(envDetectorSync.detect());
  const processor = new BatchSpanProcessor(new OTLPTraceExporter());
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has(withoutQuery(req.url)),
        startIncomingSpanHook: incomingUrl,
        startOutgoingSpanHook: outgoingUrl,
      }),
      // SQL of a request or an activity only: pool heartbeats and LISTEN would each be a trace.
      new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
    ],
  });
  // The built-in modules may be loaded already (by the OTLP exporter): a require now lets the
  // instrumentation patch them; later loads of pg are patched as they happen.
  const require = createRequire(import.meta.url);
  require('node:http');
  require('node:https');
  active = { resource, processor, provider };
  return true;
}

/** Flushes what is buffered; for a process's shutdown. */
export async function stopTracing(): Promise<void> {
  await active?.provider.shutdown().catch(() => undefined);
  active = undefined;
}

/** The Temporal client's tracing interceptor (the workflow-start span, its context in the headers). */
export function tracingClientInterceptors(): WorkflowClientInterceptor[] {
  return active ? [new OpenTelemetryWorkflowClientInterceptor()] : [];
}

/** Activity spans, children of the workflow's span (its context travels in the activity headers). */
export function tracingActivityInterceptors(): ActivityInterceptorsFactory[] {
  return active
    ? [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })]
    : [];
}

/**
 * The sink the workflow interceptors export their spans through. Always registered: a workflow
 * started by a traced API runs its tracing interceptors on any worker, and one without tracing
 * drops those spans here.
 */
export function tracingWorkflowSinks(): InjectedSinks<{ exporter: OpenTelemetryWorkflowExporter }> {
  if (active) return { exporter: makeWorkflowExporter(active.processor, active.resource) };
  return { exporter: { export: { fn: () => undefined } } };
}

/** Names the request's server span by its route template (`POST /contacts/{id}`), never the raw path. */
export function recordHttpRoute(route: string): void {
  if (!active) return;
  const meta = getRPCMetadata(context.active());
  if (meta?.type === RPCType.HTTP) meta.route = route;
}
