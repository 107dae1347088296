/**
 * One unit of work's handles on the database: the workspace it acts for, its entity manager and
 * the pool its set-based statements run on. Made once per request by the route middleware
 * (`api/app.ts`, after authentication, inside `inWorkspaceScope`), so a handler or a use case
 * (`usecases/`) takes `scope` and hands it on instead of choosing between an entity manager, a
 * pool and a pool client: the entity manager is the request's fork (workspace filter set), and
 * every statement on `db` runs in the workspace's row-level security scope (db/tenancy.ts).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Pool } from './pool.js';

export interface WorkspaceScope {
  readonly workspaceId: string;
  /** The unit of work's entity manager (the request's RequestContext fork), filtered to the workspace. */
  readonly em: EntityManager;
  /** The enforced pool: each statement on it runs as the workspace (row-level security). */
  readonly db: Pool;
}
