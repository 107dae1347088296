/**
 * Workspace scoping: every read of a resource by id goes through the workspace, and a resource
 * of another workspace is indistinguishable from a missing one (404, never 403, never its data).
 */
import { NotFoundError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { Queryable } from './pool.js';

/**
 * Runs `sql` (which must filter on `id = $1 and workspace_id = $2`) and returns its row, or
 * throws `NotFoundError` naming `label` and the id (the 404 a missing and a foreign id share).
 */
export async function findInWorkspace<T extends Record<string, unknown>>(
  db: Queryable,
  label: string,
  sql: string,
  workspaceId: string,
  id: string,
  extraParams: unknown[] = [],
): Promise<T> {
  if (!isUuid(id)) throw new NotFoundError(label, id);
  const r = await db.query<T>(sql, [id, workspaceId, ...extraParams]);
  if (!r.rows[0]) throw new NotFoundError(label, id);
  return r.rows[0];
}
