/**
 * The OpenTelemetry SDK side of telemetry/tracing.ts, loaded only when tracing is configured:
 * with tracing off, a process never imports the SDK, its instrumentations or Temporal's
 * OpenTelemetry interceptors.
 */
import { createRequire } from 'node:module';
import type { IncomingMessage, RequestOptions } from 'node:http';
import { context, type Attributes } from '@opentelemetry/api';
import { RPCType, getRPCMetadata } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { Resource, envDetectorSync } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ATTR_SERVICE_NAME, SEMATTRS_HTTP_TARGET, SEMATTRS_HTTP_URL } from '@opentelemetry/semantic-conventions';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  makeWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import type { ActiveTracing } from './tracing.js';

/** Probes and scrapes would be most of the spans and say nothing. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/livez', '/metrics']);

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

export function setUpTracing(service: 'api' | 'worker'): ActiveTracing {
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
  return {
    shutdown: () => provider.shutdown(),
    clientInterceptors: () => [new OpenTelemetryWorkflowClientInterceptor()],
    activityInterceptors: () => [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
    workflowExporter: () => makeWorkflowExporter(processor, resource),
    recordHttpRoute(route) {
      const meta = getRPCMetadata(context.active());
      if (meta?.type === RPCType.HTTP) meta.route = route;
    },
  };
}
