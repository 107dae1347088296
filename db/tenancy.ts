/**
 * Tenancy by default: every workspace-owned entity carries the `workspace` filter, on by default,
 * so an entity-manager read, update or delete of one is restricted to the current workspace — and
 * one made where no workspace was set throws instead of reading across tenants. The API sets the
 * workspace on the request's context once the key is known (api/app.ts); the worker sets it from
 * the activity input's `workspaceId` (worker/ormContext.ts). Raw SQL and Kysely queries do not
 * see the filter: they keep their explicit `workspace_id` predicates.
 */
import type { EntityManager } from '@mikro-orm/core';

export const WORKSPACE_FILTER = 'workspace';

export interface WorkspaceFilterParams {
  workspaceId: string;
}

/** `filters` of a workspace-owned entity's `defineEntity`. */
export const workspaceOwned = {
  [WORKSPACE_FILTER]: {
    name: WORKSPACE_FILTER,
    default: true,
    // One declared parameter: MikroORM throws "No arguments provided for filter 'workspace'" when
    // none was set. An id that is not a string throws too, rather than dropping the condition.
    cond: ({ workspaceId }: Partial<WorkspaceFilterParams>) => {
      if (typeof workspaceId !== 'string' || !workspaceId) throw new Error(`filter '${WORKSPACE_FILTER}' needs a workspaceId`);
      return { workspaceId };
    },
  },
};

/** Scopes the context's entity manager (the request's or the activity's fork) to one workspace. */
export function useWorkspace(em: EntityManager, workspaceId: string): void {
  em.setFilterParams(WORKSPACE_FILTER, { workspaceId } satisfies WorkspaceFilterParams);
}

/**
 * Find options of a read that is global by design (the key look-up by hash, the discovery
 * dataset, workspace rows themselves): say so at the call, `em.findOne(ApiKey, { keyHash }, acrossWorkspaces)`.
 */
export const acrossWorkspaces = { filters: { [WORKSPACE_FILTER]: false } } as const;

/**
 * Find options naming the workspace on the query itself, for a `db/` function that takes the
 * workspace id as an argument and may run outside a request or activity context (tools, tests).
 */
export const inWorkspace = (workspaceId: string) => ({ filters: { [WORKSPACE_FILTER]: { workspaceId } satisfies WorkspaceFilterParams } });
