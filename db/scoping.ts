/**
 * Workspace scoping: every read of a resource by id goes through the workspace, and a resource
 * of another workspace is indistinguishable from a missing one (404, never 403, never its data).
 */
import { notFound } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import type { Queryable } from './pool.js';

/**
 * Runs `sql` (which must filter on `id = $1 and workspace_id = $2`) and returns its row, or
 * throws 404 `not_found` naming `label` and the id.
 */
export async function findInWorkspace<T extends Record<string, unknown>>(
  db: Queryable,
  label: string,
  sql: string,
  workspaceId: string,
  id: string,
  extraParams: unknown[] = [],
): Promise<T> {
  if (!isUuid(id)) throw notFound(label, id);
  const r = await db.query<T>(sql, [id, workspaceId, ...extraParams]);
  if (!r.rows[0]) throw notFound(label, id);
  return r.rows[0];
}
