/** Authenticating an API key by its hash (api/middleware/auth.ts); issuing and revoking keys is db/workspaces.ts. */
import type { InferKyselyDB } from '@mikro-orm/postgresql';
import { ApiKey, Workspace, type KeyKind, type Plan } from './platform.js';
import type { Queryable } from './pool.js';
import { preparedQuery, typedQueries } from './sqlFragments.js';

export interface ActiveApiKeyRow {
  id: string;
  workspace_id: string;
  kind: KeyKind;
  plan: Plan;
  expires_at: Date | null;
}

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

/** The unrevoked key with this SHA-256 hash and its workspace's plan, or null (expiry is the caller's check). */
export async function findActiveApiKeyByHash(db: Queryable, keyHash: string): Promise<ActiveApiKeyRow | null> {
  const [row] = await keyLookup(db, { keyHash });
  return row ?? null;
}
