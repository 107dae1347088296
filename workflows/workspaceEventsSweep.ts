/**
 * The workspace events sweep, started by the Temporal Schedule `workspace-events-<taskQueue>`
 * (worker/schedules.ts): `integration.expires_soon` for grants ending within
 * `INTEGRATION_EXPIRY_NOTICE_DAYS`, and the delivery workflows a crash left unstarted.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

const { sweepWorkspaceEvents } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '10 seconds', maximumInterval: '5 minutes', maximumAttempts: 5 },
});

export async function workspaceEventsSweepWorkflow(): Promise<{ expiresSoon: number; started: number }> {
  return sweepWorkspaceEvents();
}
