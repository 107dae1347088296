/**
 * Integration (connected social account) lookups the API needs while checking a post: which
 * provider an account is, and whether it is connected in the workspace.
 */
import type { Provider } from '../domain/social.js';
import type { Queryable } from './pool.js';

/** The provider of integration `id` if it is connected in the workspace, else null. */
export async function connectedIntegrationProvider(db: Queryable, workspaceId: string, id: string): Promise<Provider | null> {
  const r = await db.query<{ provider: Provider }>(`select provider from integrations where id = $1 and workspace_id = $2 and status = 'connected'`, [id, workspaceId]);
  return r.rows[0]?.provider ?? null;
}

/** The provider of an integration known to exist (a post's own account). */
export async function integrationProvider(db: Queryable, integrationId: string): Promise<Provider> {
  const r = await db.query<{ provider: Provider }>(`select provider from integrations where id = $1`, [integrationId]);
  return r.rows[0]!.provider;
}
