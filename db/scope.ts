/**
 * One unit of work's handles on the database: the workspace it acts for, its entity manager and
 * the pool its set-based statements run on. Made once per unit of work, so a handler, a use case
 * (`api/usecases/`) or an activity takes `scope` and hands it on instead of choosing between an
 * entity manager, a pool and a pool client: the entity manager is the unit's fork (workspace
 * filter set), and every statement on `db` runs in the workspace's row-level security scope
 * (db/tenancy.ts).
 * - A request: made by the route middleware (`api/app.ts`, after authentication, inside
 *   `inWorkspaceScope`) and handed to the handler as `scope`.
 * - An activity execution with a `workspaceId` in its input: made by the activity interceptor
 *   (worker/ormContext.ts) and read inside the activity with `activityScope()`.
 * - One workspace's part of an activity that spans workspaces (a retention or token sweep, whose
 *   input names none): `inWorkspaceUnit`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Pool, PoolClient } from './pool.js';
import { inWorkspaceScope, inWorkspaceTransaction, useWorkspace } from './tenancy.js';

export interface WorkspaceScope {
  readonly workspaceId: string;
  /** The unit of work's entity manager (the request's or activity's RequestContext fork), filtered to the workspace. */
  readonly em: EntityManager;
  /** The enforced pool: each statement on it runs as the workspace (row-level security). */
  readonly db: Pool;
}

const activityScopes = new AsyncLocalStorage<WorkspaceScope>();

/** Runs `fn` (one activity execution) with `scope` as its `activityScope()`. */
export function withActivityScope<T>(scope: WorkspaceScope, fn: () => T): T {
  return activityScopes.run(scope, fn);
}

/**
 * The running activity's scope. Throws when there is none — an activity whose input names no
 * workspace, or code outside an activity — rather than letting a statement run unscoped.
 */
export function activityScope(): WorkspaceScope {
  const scope = activityScopes.getStore();
  if (!scope) throw new Error('activityScope() outside an activity execution whose input names a workspaceId');
  return scope;
}

/** One transaction of the unit of work, on a client of its pool, in the workspace's row-level security scope. */
export function scopeTransaction<T>(scope: WorkspaceScope, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return inWorkspaceTransaction(scope.db, scope.workspaceId, fn);
}

/**
 * One workspace's part of a unit of work that spans workspaces (a sweep whose input names none):
 * `fn` gets that workspace's scope — an entity manager forked from `handles.em` and filtered to
 * it, the enforced pool — and runs in its row-level security scope, as an activity with that
 * `workspaceId` in its input would.
 */
export function inWorkspaceUnit<T>(handles: { em: EntityManager; db: Pool }, workspaceId: string, fn: (scope: WorkspaceScope) => Promise<T>): Promise<T> {
  return inWorkspaceScope(workspaceId, () => {
    const em = handles.em.fork();
    useWorkspace(em, workspaceId);
    return fn({ workspaceId, em, db: handles.db });
  });
}
