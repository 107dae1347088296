/**
 * Search attributes that make runs readable in the Temporal UI (filter by workspace, job type,
 * post or source). The dev server registers them at start; `npm start` adds them to an external
 * Temporal.
 */
import { defineSearchAttributeKey } from '@temporalio/common';

export const SA = {
  WorkspaceId: defineSearchAttributeKey('WorkspaceId', 'KEYWORD'),
  JobType: defineSearchAttributeKey('JobType', 'KEYWORD'),
  PostId: defineSearchAttributeKey('PostId', 'KEYWORD'),
  SourceId: defineSearchAttributeKey('SourceId', 'KEYWORD'),
};

export const SEARCH_ATTRIBUTES = Object.keys(SA) as Array<keyof typeof SA>;
