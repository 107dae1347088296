/**
 * One MikroORM `RequestContext` per activity execution: `deps.orm.em` inside an activity is the
 * activity's own fork, scoped by the `workspace` filter to the input's `workspaceId` when it has
 * one (an activity without one may still read global tables; a workspace-owned entity throws), and
 * its database session scoped to that workspace by row-level security (`inWorkspaceScope`; without
 * one, no workspace rows unless the activity says `withoutTenancy`). With a workspace, the
 * execution's one `WorkspaceScope` ({ workspaceId, em, db }) is made here too, read by the
 * activity with `activityScope()` (db/scope.ts), as a request's is handed to its handler.
 */
import { RequestContext } from '@mikro-orm/core';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { MikroORM } from '../db/orm.js';
import type { Pool } from '../db/pool.js';
import { withActivityScope } from '../db/scope.js';
import { inWorkspaceScope, useWorkspace } from '../db/tenancy.js';
import { inputWorkspaceId } from './telemetry.js';

export function activityOrmContext(orm: MikroORM, pool?: Pool): ActivityInterceptorsFactory {
  return () => ({
    inbound: {
      execute(input, next) {
        return RequestContext.create(orm.em, () => {
          const workspaceId = inputWorkspaceId(input.args);
          if (!workspaceId) return next(input);
          useWorkspace(orm.em, workspaceId);
          // `orm.em` resolves to this execution's RequestContext fork, as `deps.orm.em` does in a request.
          const run = () => inWorkspaceScope(workspaceId, () => next(input));
          return pool ? withActivityScope({ workspaceId, em: orm.em, db: pool }, run) : run();
        });
      },
    },
  });
}
