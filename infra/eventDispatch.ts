/**
 * Starts the delivery workflow of each pending event delivery (one workflow per delivery row,
 * id `webhook-event-delivery-<deliveryId>`): called right after the transaction that recorded
 * the event (worker) or the redelivery (API), and by the events sweep for rows a crash left
 * unstarted. A delivery's workflow starts once: a second start of the same id is a no-op.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { TypedSearchAttributes, WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { SA } from '../domain/searchAttributes.js';

export interface EventDeliveryInput {
  workspaceId: string;
  deliveryId: string;
}

export const eventDeliveryWorkflowId = (deliveryId: string) => `webhook-event-delivery-${deliveryId}`;

/** Starts each delivery's workflow; returns the ids that now have one (started here or before). */
export async function startEventDeliveries(temporal: Client, taskQueue: string, deliveries: Array<{ id: string; workspaceId: string }>): Promise<string[]> {
  const started: string[] = [];
  for (const d of deliveries) {
    try {
      await temporal.workflow.start('webhookEventDeliveryWorkflow', {
        workflowId: eventDeliveryWorkflowId(d.id),
        taskQueue,
        args: [{ workspaceId: d.workspaceId, deliveryId: d.id } satisfies EventDeliveryInput],
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
        // A delivery row is sent by one workflow only; a redelivery is a row of its own.
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        typedSearchAttributes: new TypedSearchAttributes([
          { key: SA.WorkspaceId, value: d.workspaceId },
          { key: SA.JobType, value: 'webhook-event-delivery' },
        ]),
      });
      started.push(d.id);
    } catch (e) {
      if (e instanceof WorkflowExecutionAlreadyStartedError) started.push(d.id);
      else throw e;
    }
  }
  return started;
}
