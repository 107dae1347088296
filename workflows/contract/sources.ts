/** Audience pulls of a source (workflows/sourcePull.ts): the job and its scheduled refresh. */
export interface SourcePullInput {
  sourceId: string;
  segmentId: string | null;
  numberOfPastDaysToSync: number;
  trigger: 'api' | 'schedule';
}

/** The action of a source's refresh schedule (api/sourceSchedules.ts): starts a `source-pull` job. */
export interface SourceRefreshInput {
  workspaceId: string;
  sourceId: string;
}

/** Workflow type names (recorded in histories and schedules: never rename). */
export const SOURCE_WORKFLOWS = { refresh: 'sourceRefreshWorkflow' } as const;
