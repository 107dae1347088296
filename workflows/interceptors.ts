/**
 * Workflow interceptors (bundled with the workflows: `WORKFLOW_INTERCEPTOR_MODULES`): the request
 * id header the workflow was started with goes on to every activity, local activity, child
 * workflow and continue-as-new it schedules (domain/correlation.ts). Headers only, no command
 * added or changed: histories recorded before replay as they did.
 */
import type { Payload } from '@temporalio/common';
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { REQUEST_ID_HEADER } from '../domain/correlation.js';

export const interceptors: WorkflowInterceptorsFactory = () => {
  let requestId: Payload | undefined;
  const carried = <I extends { headers: Record<string, Payload> }>(input: I): I =>
    requestId && !input.headers[REQUEST_ID_HEADER] ? { ...input, headers: { ...input.headers, [REQUEST_ID_HEADER]: requestId } } : input;
  return {
    inbound: [
      {
        execute(input, next) {
          requestId = input.headers[REQUEST_ID_HEADER];
          return next(input);
        },
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) => next(carried(input)),
        scheduleLocalActivity: (input, next) => next(carried(input)),
        startChildWorkflowExecution: (input, next) => next(carried(input)),
        continueAsNew: (input, next) => next(carried(input)),
      },
    ],
  };
};
