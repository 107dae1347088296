/**
 * API keys: `x-api-key: <key>` or `Authorization: Bearer <key>`. Keys are random, shown once and
 * stored only as a SHA-256 hash. Workspace and user keys are billed; session keys (in-app
 * previews) are not.
 */
import type { Context } from 'koa';
import { unauthorized } from '../errors.js';
import type { KeyKind, Plan } from '../../db/platform.js';
import { hashKey } from '../../infra/keyGeneration.js';
import type { Queryable } from '../../db/pool.js';
import { findActiveApiKeyByHash } from '../../db/apiKeys.js';

export interface AuthContext {
  workspaceId: string;
  apiKeyId: string;
  keyKind: KeyKind;
  /** False for session keys: nothing they do is charged. */
  billable: boolean;
  plan: Plan;
}

export function readKey(ctx: Context): string | undefined {
  const header = ctx.get('x-api-key');
  if (header) return header.trim();
  const authz = ctx.get('authorization');
  const m = /^Bearer\s+(.+)$/i.exec(authz);
  return m?.[1]?.trim();
}

interface KnownKey {
  auth: AuthContext;
  /** Session keys expire (SESSION_KEY_TTL_SECONDS after creation); epoch ms, null: never. */
  keyExpiresAt: number | null;
}

async function lookUpKey(db: Queryable, hash: string): Promise<KnownKey | undefined> {
  const row = await findActiveApiKeyByHash(db, hash);
  return row ? { auth: { workspaceId: row.workspace_id, apiKeyId: row.id, keyKind: row.kind, billable: row.kind !== 'session', plan: row.plan }, keyExpiresAt: row.expires_at?.getTime() ?? null } : undefined;
}

/** An expired session key is a 401 whether it came from the cache or the database. */
function unlessExpired(known: KnownKey): AuthContext {
  if (known.keyExpiresAt !== null && known.keyExpiresAt <= Date.now()) throw unauthorized('API key has expired');
  return known.auth;
}

/** The channel the `api_keys`/`workspaces` triggers NOTIFY on (migration `auth_change_notify`). */
export const AUTH_CHANGED_CHANNEL = 'auth_changed';

/**
 * Authenticated contexts cached in the process: key hash → workspace, kind, plan. Every change
 * to a key or workspace row NOTIFYs `auth_changed` (a trigger, so the admin CLI and plain SQL
 * count too) and the entry goes. The rule for staleness: an entry is served only while the
 * LISTEN connection is live (its last round trip within 1 s); otherwise every request looks its
 * key up and nothing is cached, and a reconnect empties the cache. So a revocation or plan change
 * reaches every replica within 1 s even if the LISTEN connection dies silently. Entries also
 * expire after `ttlMs`, a bound for changes made with triggers disabled. Unknown keys are never
 * cached (they count against the per-IP limit instead).
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, KnownKey & { expiresAt: number }>();
  /** Bumped by every invalidation: a look-up that raced one is not cached. */
  private generation = 0;
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly db: Queryable,
    private readonly isLive: () => boolean,
    opts: { ttlMs?: number; maxEntries?: number } = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 60_000;
    this.maxEntries = opts.maxEntries ?? 10_000;
  }

  async authenticate(key: string | undefined): Promise<AuthContext> {
    if (!key) throw unauthorized('Missing API key: send it in the x-api-key header');
    const hash = hashKey(key);
    const live = this.isLive();
    const now = performance.now();
    if (live) {
      const hit = this.entries.get(hash);
      if (hit && hit.expiresAt > now) return unlessExpired(hit);
    }
    const generation = this.generation;
    const known = await lookUpKey(this.db, hash);
    if (!known) throw unauthorized('Invalid API key');
    if (live && this.isLive() && generation === this.generation) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(hash, { ...known, expiresAt: now + this.ttlMs });
    }
    return unlessExpired(known);
  }

  /** A NOTIFY payload of `auth_changed`: `key:<hash>`, `workspace:<id>` or `*`. */
  invalidate(payload: string): void {
    this.generation++;
    if (payload.startsWith('key:')) this.entries.delete(payload.slice(4));
    else if (payload.startsWith('workspace:')) {
      const workspaceId = payload.slice(10);
      for (const [hash, e] of this.entries) if (e.auth.workspaceId === workspaceId) this.entries.delete(hash);
    } else this.clear();
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
  }
}
