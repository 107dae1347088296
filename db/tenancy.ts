/**
 * Tenancy, twice over.
 *
 * 1. PostgreSQL row-level security (migration `…_row_level_security`): every table with a
 *    `workspace_id` admits, to the role `app_tenant`, only the rows of the session's
 *    `app.workspace_id`, and none when it is unset. The API and the worker open their pool with
 *    `tenancy: 'enforced'` (`db/connect.ts`): `enforceTenancy` then puts each connection, as it is
 *    checked out, into the scope of the code that asked for it (`inWorkspaceScope`, set by the
 *    request middleware in api/app.ts and the activity interceptor in worker/ormContext.ts), so the
 *    entity manager, Kysely, raw SQL and COPY are all bound by it. A path that is global by design
 *    says so: `withoutTenancy(reason, fn)` runs `fn` as `app_all_workspaces`. Code outside
 *    both sees no workspace rows. Tools that own the schema (migrations, the admin CLI, the
 *    dataset import, tests' fixtures) open the database without `tenancy: 'enforced'`.
 * 2. The MikroORM `workspace` filter: every workspace-owned entity carries it, on by default, so an
 *    entity-manager read, update or delete of one is restricted to the current workspace — and one
 *    made where no workspace was set throws instead of returning nothing.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import { withTransaction } from './pool.js';
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

/** Scopes the context's entity manager (the request's or the activity's fork) to one workspace (its filter; `inWorkspaceScope` scopes the database session). */
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

// ---------- row-level security ----------

/**
 * The default of every `workspace_id` column (Migration20261129100000_workspace_id_default): the
 * session's workspace, null (so NOT NULL refuses the insert) outside one. Written as PostgreSQL
 * prints it back, so the entities and the migrated schema compare equal.
 */
export const SCOPED_WORKSPACE_ID = `(nullif(current_setting('app.workspace_id'::text, true), ''::text))::uuid`;

/** The database roles of the policies (created by the migration). */
export const TENANT_ROLE = 'app_tenant';
export const ALL_WORKSPACES_ROLE = 'app_all_workspaces';

type TenancyScope = { workspaceId: string } | { allWorkspaces: string };
const scope = new AsyncLocalStorage<TenancyScope>();

/** Runs `fn` (and everything it awaits) in one workspace's scope: the database admits that workspace's rows only. */
export function inWorkspaceScope<T>(workspaceId: string, fn: () => T): T {
  return scope.run({ workspaceId }, fn);
}

/** Runs `fn` in a transaction in one workspace's scope (for callers with no request or activity scope, or another one). */
export function inWorkspaceTransaction<T>(pool: pg.Pool, workspaceId: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return inWorkspaceScope(workspaceId, () => withTransaction(pool, fn));
}

/**
 * Runs `fn` across every workspace: the explicit opt-out of row-level security for the paths that
 * are global by design (the API key look-up by hash, dispatchers that scan every workspace, test
 * assertions). `reason` says why at the call, so each one can be found and reviewed.
 */
export function withoutTenancy<T>(reason: string, fn: () => T): T {
  return scope.run({ allWorkspaces: reason }, fn);
}

/** The workspace of the current scope, if any. */
export function scopedWorkspaceId(): string | undefined {
  const s = scope.getStore();
  return s && 'workspaceId' in s ? s.workspaceId : undefined;
}

/**
 * For a `db/` function that takes a workspace id but leaves the workspace predicate to row-level
 * security: throws unless it runs in that workspace's scope. Called from another workspace's scope,
 * or under `withoutTenancy` (which sees every workspace), it fails instead of reading or writing
 * rows it was not asked about.
 */
export function assertWorkspaceScope(workspaceId: string): void {
  const s = scope.getStore();
  if (s && 'workspaceId' in s && s.workspaceId === workspaceId) return;
  const where = !s ? 'no scope' : 'workspaceId' in s ? `workspace ${s.workspaceId}'s scope` : `withoutTenancy (${s.allWorkspaces})`;
  throw new Error(`a statement for workspace ${workspaceId} relies on row-level security but runs in ${where}`);
}

const SESSION = Symbol('tenancySession');
type ScopedClient = pg.PoolClient & { [SESSION]?: string };

/**
 * Makes every connection checked out of `pool` (pool.query, pool.connect: the ORM, Kysely, raw
 * SQL and COPY all come through it) run as the current scope: `app_tenant` with the scope's
 * workspace, `app_all_workspaces` under `withoutTenancy`, `app_tenant` with no workspace (no rows)
 * elsewhere. The setting is session-level, made at checkout (never inside a transaction, so no
 * rollback undoes it) and remembered on the client: a connection handed out again for the same
 * scope costs no round trip.
 */
export function enforceTenancy(pool: pg.Pool): void {
  const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
  const scoped = async (): Promise<pg.PoolClient> => {
    const s = scope.getStore();
    const role = s && 'allWorkspaces' in s ? ALL_WORKSPACES_ROLE : TENANT_ROLE;
    const workspaceId = s && 'workspaceId' in s ? s.workspaceId : '';
    const session = `${role}/${workspaceId}`;
    const client = (await connect()) as ScopedClient;
    if (client[SESSION] !== session) {
      try {
        // Raw SQL: the session's role and workspace, the keys of the row-level security policies.
        await client.query('select set_config($1, $2, false), set_config($3, $4, false)', ['role', role, 'app.workspace_id', workspaceId]);
      } catch (e) {
        client.release(e as Error);
        throw e;
      }
      client[SESSION] = session;
    }
    return client;
  };
  // pg-pool's own `query` checks out through `this.connect(callback)`.
  pool.connect = ((cb?: (err: Error | undefined, client?: pg.PoolClient, done?: pg.PoolClient["release"]) => void) => {
    const out = scoped();
    if (!cb) return out;
    out.then((c) => cb(undefined, c, c.release), (e) => cb(e as Error));
    return undefined;
  }) as pg.Pool['connect'];
}
