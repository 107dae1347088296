/** The worker's own schedules (worker/schedules.ts): workflow type names (recorded in schedules and histories: never rename). */
export const MAINTENANCE_WORKFLOWS = {
  retention: 'retentionWorkflow',
  tokenRefresh: 'tokenRefreshWorkflow',
  workspaceEventsSweep: 'workspaceEventsSweepWorkflow',
} as const;
