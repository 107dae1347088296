/** Authenticating an API key by its hash (api/middleware/auth.ts); issuing and revoking keys is db/workspaces.ts. */
import type { KeyKind, Plan } from './platform.js';
import type { Queryable } from './pool.js';

export interface ActiveApiKeyRow {
  id: string;
  workspace_id: string;
  kind: KeyKind;
  plan: Plan;
  expires_at: Date | null;
}

// Raw on purpose: the one global read of authentication (no workspace is known yet), a named
// statement each pooled connection parses and plans once, joining `workspaces` for the plan, which
// the entities (workspace ids, not relations) cannot express as one em query. Cached in process.
const KEY_LOOKUP = {
  name: 'auth-key-lookup',
  text: `select k.id, k.workspace_id, k.kind, w.plan, k.expires_at
           from api_keys k join workspaces w on w.id = k.workspace_id
          where k.key_hash = $1 and k.revoked_at is null`,
};

/** The unrevoked key with this SHA-256 hash and its workspace's plan, or null (expiry is the caller's check). */
export async function findActiveApiKeyByHash(db: Queryable, keyHash: string): Promise<ActiveApiKeyRow | null> {
  const r = await db.query<ActiveApiKeyRow>({ ...KEY_LOOKUP, values: [keyHash] });
  return r.rows[0] ?? null;
}
