/** Authenticating an API key by its hash (api/middleware/auth.ts); issuing and revoking keys is db/workspaces.ts. */
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import { ApiKey, Workspace } from './platform.js';
import type { Queryable } from './pool.js';
import { withoutTenancy } from './tenancy.js';
import { preparedQuery, typedQueries, type RowOf } from './sqlFragments.js';

type AuthDB = InferKyselyDB<typeof ApiKey | typeof Workspace>;

// The one global read of authentication (no workspace is known yet), joining `workspaces` for the
// plan: built and compiled once, a named statement each pooled connection plans once. Cached in process.
const keyLookup = preparedQuery(
  (p: { keyHash: string }) =>
    typedQueries<AuthDB>()
      .selectFrom('api_keys as k')
      .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
      .select(['k.id', 'k.workspace_id', 'k.kind', 'w.plan', 'k.expires_at'])
      .where('k.key_hash', '=', p.keyHash)
      .where('k.revoked_at', 'is', null),
  'auth-key-lookup',
);

/** The key's id, workspace, kind and expiry, and the workspace's plan: the columns `keyLookup` selects, typed by the entities. */
export type ActiveApiKeyRow = RowOf<typeof keyLookup>;

/** The unrevoked key with this SHA-256 hash and its workspace's plan, or null (expiry is the caller's check). */
export async function findActiveApiKeyByHash(db: Queryable, keyHash: string): Promise<ActiveApiKeyRow | null> {
  const [row] = await withoutTenancy('API key look-up by hash: the workspace is not known yet', () => keyLookup(db, { keyHash }));
  return row ?? null;
}
