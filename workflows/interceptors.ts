/**
 * Workflow interceptors (bundled with the workflows: `WORKFLOW_INTERCEPTOR_MODULES`):
 * - the request id header the workflow was started with goes on to every activity, local
 *   activity, child workflow and continue-as-new it schedules (domain/correlation.ts);
 * - a workflow started with a trace context (a traced API: telemetry/tracing.ts) runs Temporal's
 *   OpenTelemetry interceptors: a span for the run and one per activity it schedules, exported
 *   through the worker's `exporter` sink, the context passed on in the activity headers.
 * Workflows started without one (tracing off, every recorded history) run exactly as before:
 * headers only, no command added or changed.
 */
import type { Payload } from '@temporalio/common';
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import { REQUEST_ID_HEADER } from '../domain/correlation.js';

export const interceptors: WorkflowInterceptorsFactory = () => {
  let requestId: Payload | undefined;
  let tracing: { outbound: OpenTelemetryOutboundInterceptor; internals: OpenTelemetryInternalsInterceptor } | undefined;
  const carried = <I extends { headers: Record<string, Payload> }>(input: I): I =>
    requestId && !input.headers[REQUEST_ID_HEADER] ? { ...input, headers: { ...input.headers, [REQUEST_ID_HEADER]: requestId } } : input;
  return {
    inbound: [
      {
        execute(input, next) {
          requestId = input.headers[REQUEST_ID_HEADER];
          if (!input.headers[TRACE_HEADER]) return next(input);
          tracing = { outbound: new OpenTelemetryOutboundInterceptor(), internals: new OpenTelemetryInternalsInterceptor() };
          return new OpenTelemetryInboundInterceptor().execute(input, next);
        },
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) => (tracing ? tracing.outbound.scheduleActivity(carried(input), next) : next(carried(input))),
        scheduleLocalActivity: (input, next) => (tracing ? tracing.outbound.scheduleLocalActivity(carried(input), next) : next(carried(input))),
        startChildWorkflowExecution: (input, next) =>
          tracing ? tracing.outbound.startChildWorkflowExecution(carried(input), next) : next(carried(input)),
        continueAsNew: (input, next) => (tracing ? tracing.outbound.continueAsNew(carried(input), next) : next(carried(input))),
      },
    ],
    internals: [
      {
        dispose: (input, next) => (tracing ? tracing.internals.dispose(input, next) : next(input)),
      },
    ],
  };
};
